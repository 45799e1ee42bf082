import assert from "node:assert/strict";
import { test } from "node:test";
import { istio, k8s, staticInputs } from "../../test/support/registry-inputs.ts";
import { ServiceRegistry } from "./index.ts";

const HOST = "reviews.default.svc.cluster.local";

const kubeService = k8s("Service", "default", "reviews", {
  metadata: { creationTimestamp: "2025-01-01T00:00:00Z" },
  spec: { clusterIP: "10.96.0.10", ports: [{ name: "http", port: 9080 }] },
});
const kubeSlice = k8s("EndpointSlice", "default", "reviews-1", {
  metadata: { labels: { "kubernetes.io/service-name": "reviews" } },
  endpoints: [{ addresses: ["10.0.0.1"] }],
  ports: [{ name: "http", port: 9080 }],
});

function entry(name: string, namespace: string, created: string, address: string) {
  return istio(
    "ServiceEntry",
    namespace,
    name,
    {
      hosts: [HOST],
      resolution: "STATIC",
      ports: [{ number: 9080, name: "http-se", protocol: "HTTP" }],
      endpoints: [{ address }],
    },
    { creationTimestamp: created },
  );
}

test("a Kubernetes Service wins its hostname over an older ServiceEntry in its namespace; endpoints merge", () => {
  const inputs = staticInputs([entry("squatter", "default", "2020-01-01T00:00:00Z", "10.9.0.1"), kubeSlice]);
  const registry = new ServiceRegistry(inputs);
  assert.equal(registry.service(HOST, "default")?.registry, "External");
  inputs.services.upsert(kubeService);
  const service = registry.service(HOST, "default");
  assert.equal(service?.registry, "Kubernetes");
  assert.equal(service?.ports[0].name, "http");
  // Endpoints of every registry for the host and port, Kubernetes first (as Istio merges endpoint shards).
  assert.deepEqual(
    registry.endpointsFor(HOST, 9080, "default").map((e) => e.address),
    ["10.0.0.1", "10.9.0.1"],
  );
  inputs.services.delete("default/reviews");
  assert.equal(registry.service(HOST, "default")?.objectName, "squatter");
  assert.deepEqual(
    registry.endpointsFor(HOST, 9080, "default").map((e) => e.address),
    ["10.9.0.1"],
  );
});

test("among ServiceEntries for one host, the oldest wins; each namespace keeps its own", () => {
  const inputs = staticInputs([
    entry("newer", "ns1", "2024-06-01T00:00:00Z", "10.9.0.2"),
    entry("older", "ns1", "2024-01-01T00:00:00Z", "10.9.0.1"),
    entry("elsewhere", "ns2", "2023-01-01T00:00:00Z", "10.9.0.3"),
  ]);
  const registry = new ServiceRegistry(inputs);
  assert.equal(registry.service(HOST, "ns1")?.objectName, "older");
  assert.deepEqual(
    registry.servicesForHostname(HOST).map((s) => `${s.namespace}/${s.objectName}`),
    ["ns1/older", "ns2/elsewhere"],
  );
  assert.deepEqual(
    registry.endpointsFor(HOST, 9080, "ns1").map((e) => e.address),
    ["10.9.0.1", "10.9.0.2"],
  );
  inputs.serviceEntries.delete("ns1/older");
  assert.equal(registry.service(HOST, "ns1")?.objectName, "newer");
  assert.deepEqual(
    registry.endpointsFor(HOST, 9080, "ns1").map((e) => e.address),
    ["10.9.0.2"],
  );
});

test("services by namespace; every port of an aggregate service has an endpoints item, empty or not", () => {
  const registry = new ServiceRegistry(staticInputs([kubeService, entry("e", "ns1", "", "10.9.0.1")]));
  assert.deepEqual(
    registry.servicesInNamespace("default").map((s) => s.hostname),
    [HOST],
  );
  assert.deepEqual(
    registry.endpoints.list().map((e) => [`${e.namespace}/${e.hostname}/${e.port}`, e.endpoints.length]),
    [
      ["default/reviews.default.svc.cluster.local/9080", 0],
      ["ns1/reviews.default.svc.cluster.local/9080", 1],
    ],
  );
});

test("DNS_ROUND_ROBIN entries for one host give each port a single endpoint, the oldest entry's first", () => {
  const roundRobin = (name: string, created: string, addresses: string[]) =>
    istio(
      "ServiceEntry",
      "ns1",
      name,
      {
        hosts: ["rr.example.com"],
        resolution: "DNS_ROUND_ROBIN",
        ports: [{ number: 80, name: "http" }],
        endpoints: addresses.map((address) => ({ address })),
      },
      { creationTimestamp: created },
    );
  const inputs = staticInputs([
    roundRobin("b", "2024-02-01T00:00:00Z", ["b.example.com"]),
    roundRobin("a", "2024-01-01T00:00:00Z", ["a1.example.com", "a2.example.com"]),
  ]);
  const registry = new ServiceRegistry(inputs);
  assert.deepEqual(
    registry.endpointsFor("rr.example.com", 80, "ns1").map((e) => e.address),
    ["a1.example.com"],
  );
  inputs.serviceEntries.delete("ns1/a");
  assert.deepEqual(
    registry.endpointsFor("rr.example.com", 80, "ns1").map((e) => e.address),
    ["b.example.com"],
  );
});
