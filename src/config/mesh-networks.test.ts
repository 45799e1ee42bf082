import assert from "node:assert/strict";
import { test } from "node:test";
import { loadMeshNetworks } from "./mesh-networks.ts";

function problems(yaml: string): string[] {
  try {
    loadMeshNetworks(yaml);
  } catch (err) {
    return (err as Error).message
      .split("\n")
      .slice(1)
      .map((line) => line.trim());
  }
  assert.fail("expected the mesh networks to be rejected");
}

test("no mesh networks file means no networks", () => {
  assert.deepEqual(loadMeshNetworks(), { networks: {} });
  assert.deepEqual(loadMeshNetworks(""), { networks: {} });
});

test("a valid file decodes with proto or JSON field names", () => {
  const networks = loadMeshNetworks(
    [
      "networks:",
      "  net1:",
      "    endpoints: [{fromRegistry: Kubernetes}, {from_cidr: 10.0.0.0/8}]",
      "    gateways: [{address: 1.2.3.4, port: 15443}, {registry_service_name: gw.istio-system.svc.cluster.local, port: 443}]",
    ].join("\n"),
  );
  assert.deepEqual(networks.networks?.net1.endpoints, [{ fromRegistry: "Kubernetes" }, { fromCidr: "10.0.0.0/8" }]);
  assert.equal(networks.networks?.net1.gateways?.[1].registryServiceName, "gw.istio-system.svc.cluster.local");
});

test("endpoint CIDRs, registry names, gateway addresses and ports, prefixed with the network name", () => {
  assert.deepEqual(
    problems(
      [
        "networks:",
        "  n1:",
        "    endpoints: [{fromCidr: 10.0.0.0/33}, {fromRegistry: 'bad_name'}]",
        "    gateways: [{address: 'not valid', port: 0}]",
      ].join("\n"),
    ),
    [
      "networks.n1.endpoints[0].fromCidr: invalid network n1: 10.0.0.0/33 is not a valid CIDR block",
      "networks.n1.endpoints[1].fromRegistry: invalid network n1: invalid registry name: bad_name",
      "networks.n1.gateways[0].address: invalid network n1: not valid is not a valid IP address or DNS name",
      "networks.n1.gateways[0].port: invalid network n1: port number 0 must be in the range 1..65535",
    ],
  );
});

test("unknown fields are errors", () => {
  assert.deepEqual(problems("networks: {n1: {gateway: []}}"), [
    `networks.n1.gateway: unknown field "gateway" in istio.mesh.v1alpha1.Network`,
  ]);
});
