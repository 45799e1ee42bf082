// Istio's sample configs (../shared/conformance/istio/inputs) loaded whole into the registry.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readInputs, staticInputs } from "../../test/support/registry-inputs.ts";
import { ServiceRegistry } from "./index.ts";

function loadInputs(): ServiceRegistry {
  return new ServiceRegistry(staticInputs(readInputs()));
}

function endpointsOf(registry: ServiceRegistry, host: string, port: number, namespace: string): string[] {
  return registry.endpointsFor(host, port, namespace).map((e) => `${e.address}:${e.port}`);
}

test("every document loads: 38 services, and each ServiceEntry's hosts in its namespace", () => {
  const registry = loadInputs();
  assert.equal(registry.services.size, 38);
  assert.deepEqual(
    registry.servicesInNamespace("seexamples").map((s) => `${s.hostname} ${s.resolution}`),
    [
      "test.seexamples ClientSideLB",
      "mymongodb.somedomain ClientSideLB",
      "api.dropboxapi.com DNSLB",
      "www.googleapis.com DNSLB",
      "api.facebook.com DNSLB",
      "*.bar.com Passthrough",
      "example.unix.local ClientSideLB",
      "foo.bar.com DNSLB",
    ],
  );
});

test("se-example.yaml: inline endpoints with named ports, VIPs, DNS hosts, unix sockets, wildcard NONE", () => {
  const registry = loadInputs();
  const workload = registry.service("test.seexamples", "seexamples");
  assert.deepEqual(
    { ports: workload?.ports, meshExternal: workload?.meshExternal, addresses: workload?.addresses },
    { ports: [{ name: "tcplocal", port: 1200, protocol: "TCP", targetPort: 0 }], meshExternal: false, addresses: [] },
  );
  assert.deepEqual(registry.endpointsFor("test.seexamples", 1200, "seexamples"), [
    {
      hostname: "test.seexamples",
      namespace: "seexamples",
      servicePort: 1200,
      servicePortName: "tcplocal",
      address: "10.12.0.1",
      port: 21200,
      health: "Unknown",
      labels: { "topology.istio.io/cluster": "Kubernetes" },
      serviceAccount: "",
      identity: "",
      locality: "",
      clusterId: "Kubernetes",
      network: "",
      tlsMode: "disabled",
      workloadName: "workload-0",
      workloadNamespace: "seexamples",
      workloadKind: "WorkloadEntry",
      weight: 1,
    },
  ]);
  const mongo = registry.service("mymongodb.somedomain", "seexamples");
  assert.deepEqual(mongo?.addresses, ["192.192.192.192/24"]);
  assert.equal(mongo?.ports[0].protocol, "Mongo");
  assert.deepEqual(endpointsOf(registry, "mymongodb.somedomain", 27018, "seexamples"), [
    "2.2.2.2:27018",
    "3.3.3.3:27018",
  ]);
  assert.deepEqual(endpointsOf(registry, "api.dropboxapi.com", 443, "seexamples"), ["api.dropboxapi.com:443"]);
  assert.equal(registry.service("api.dropboxapi.com", "seexamples")?.meshExternal, true);
  assert.deepEqual(endpointsOf(registry, "foo.bar.com", 8000, "seexamples"), [
    "us.foo.bar.com:8080",
    "uk.foo.bar.com:9080",
    "in.foo.bar.com:7080",
  ]);
  assert.deepEqual(endpointsOf(registry, "example.unix.local", 8001, "seexamples"), ["/var/run/example/socket:0"]);
  assert.deepEqual(endpointsOf(registry, "*.bar.com", 80, "seexamples"), []);
});

test("static-weighted-se.yaml: endpoint weights and localities", () => {
  const registry = loadInputs();
  assert.deepEqual(
    registry
      .endpointsFor("weighted.static.svc.cluster.local", 80, "default")
      .map((e) => [e.address, e.weight, e.locality]),
    [
      ["3.3.3.3", 1, "a"],
      ["2.2.2.2", 8, "a"],
      ["1.1.1.1", 3, "b"],
    ],
  );
});

test("external_services.yaml: CIDR addresses, several hosts and ports, endpoint port mapping", () => {
  const registry = loadInputs();
  assert.deepEqual(registry.service("www.wikipedia.org", "testns")?.addresses, [
    "91.198.174.192/27",
    "103.102.166.224/27",
    "198.35.26.96/27",
    "208.80.153.224/27",
    "208.80.154.224/27",
  ]);
  assert.deepEqual(endpointsOf(registry, "ports1.extsvc.com", 8443, "testns"), ["ports1.extsvc.com:8443"]);
  assert.deepEqual(endpointsOf(registry, "ep.extsvc.com", 8002, "testns"), ["127.0.0.2:8080", "127.0.0.3:8002"]);
  assert.equal(registry.service("dst.extsvc.com", "testns")?.resolution, "Passthrough");
});

test("none.yaml: a Kubernetes Service without a clusterIP or endpoints", () => {
  const registry = loadInputs();
  assert.deepEqual(registry.service("fortio.none.svc.cluster.local", "none"), {
    hostname: "fortio.none.svc.cluster.local",
    namespace: "none",
    name: "fortio",
    objectName: "fortio",
    registry: "Kubernetes",
    ports: [
      { name: "http-echo", port: 8080, protocol: "HTTP", targetPort: 18080 },
      { name: "grpc-ping", port: 8079, protocol: "GRPC", targetPort: 18079 },
    ],
    addresses: [],
    defaultAddress: "0.0.0.0",
    resolution: "ClientSideLB",
    meshExternal: false,
    exportTo: [],
    labels: {},
    selector: { app: "fortio" },
    serviceAccounts: [],
    creationTime: "",
    kubernetesType: "ClusterIP",
    clusterId: "Kubernetes",
    externalName: "",
    externalAddresses: [],
    nodeLocal: false,
    publishNotReadyAddresses: false,
  });
  assert.deepEqual(endpointsOf(registry, "fortio.none.svc.cluster.local", 8080, "none"), []);
  assert.deepEqual(endpointsOf(registry, "s2.external.test.istio.io", 2005, "none"), [
    "10.11.0.2:7071",
    "10.11.0.3:7072",
  ]);
});
