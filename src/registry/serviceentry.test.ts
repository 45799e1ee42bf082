import assert from "node:assert/strict";
import { test } from "node:test";
import { istio, k8s, staticInputs } from "../../test/support/registry-inputs.ts";
import type { WorkloadEntry } from "../config/types/index.ts";
import { ServiceRegistry } from "./index.ts";

function serviceEntry(name: string, spec: Record<string, unknown>, metadata: object = {}) {
  return istio("ServiceEntry", "ns1", name, { hosts: ["svc.example.com"], ...spec }, metadata);
}

const HTTP_PORT = { number: 80, name: "http", protocol: "HTTP" };

function readyPod(name: string, ip: string, labels: Record<string, string>, ports: unknown[] = []) {
  return k8s("Pod", "ns1", name, {
    metadata: { labels },
    spec: { serviceAccountName: "sa1", containers: [{ name: "app", ports }] },
    status: { phase: "Running", podIP: ip, conditions: [{ type: "Ready", status: "True" }] },
  });
}

function endpointsOf(registry: ServiceRegistry, port = 80, host = "svc.example.com") {
  return registry.endpointsFor(host, port, "ns1").map((e) => `${e.address}:${e.port}`);
}

test("each resolution maps to Istio's; location, addresses, exportTo and subjectAltNames carry over", () => {
  const resolutions = {
    NONE: "Passthrough",
    STATIC: "ClientSideLB",
    DNS: "DNSLB",
    DNS_ROUND_ROBIN: "DNSRoundRobinLB",
    DYNAMIC_DNS: "DynamicDNS",
  };
  for (const [resolution, want] of Object.entries(resolutions)) {
    const entry = serviceEntry("e", { resolution, ports: [HTTP_PORT] });
    const registry = new ServiceRegistry(staticInputs([entry]));
    assert.equal(registry.service("svc.example.com", "ns1")?.resolution, want, resolution);
  }
  const entry = serviceEntry(
    "e",
    {
      hosts: ["a.example.com", "b.example.com"],
      addresses: ["240.0.0.1", "10.0.0.0/24", "10.1.1.1/32", "not-an-ip"],
      ports: [
        HTTP_PORT,
        { number: 9000, name: "tcp", protocol: "TCP", targetPort: 9001 },
        { number: 27017, name: "db" },
      ],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      exportTo: ["."],
      subjectAltNames: ["spiffe://cluster.local/ns/ns1/sa/a"],
    },
    { labels: { team: "a" }, creationTimestamp: "2024-02-02T00:00:00Z" },
  );
  const registry = new ServiceRegistry(staticInputs([entry]));
  assert.deepEqual(
    registry.servicesInNamespace("ns1").map((s) => s.hostname),
    ["a.example.com", "b.example.com"],
  );
  assert.deepEqual(registry.service("b.example.com", "ns1"), {
    hostname: "b.example.com",
    namespace: "ns1",
    name: "b.example.com",
    objectName: "e",
    registry: "External",
    ports: [
      { name: "http", port: 80, protocol: "HTTP", targetPort: 0 },
      { name: "tcp", port: 9000, protocol: "TCP", targetPort: 9001 },
      { name: "db", port: 27017, protocol: "UnsupportedProtocol", targetPort: 0 },
    ],
    addresses: ["240.0.0.1", "10.0.0.0/24", "10.1.1.1"],
    defaultAddress: "240.0.0.1",
    resolution: "ClientSideLB",
    meshExternal: false,
    exportTo: ["."],
    labels: { team: "a" },
    selector: null,
    serviceAccounts: ["spiffe://cluster.local/ns/ns1/sa/a"],
    creationTime: "2024-02-02T00:00:00Z",
    kubernetesType: "",
    clusterId: "",
    externalName: "",
    externalAddresses: [],
    nodeLocal: false,
    publishNotReadyAddresses: false,
  });
  // Unset location is MESH_EXTERNAL, unset resolution NONE.
  const bare = new ServiceRegistry(staticInputs([serviceEntry("e", { ports: [HTTP_PORT] })]));
  assert.equal(bare.service("svc.example.com", "ns1")?.meshExternal, true);
  assert.equal(bare.service("svc.example.com", "ns1")?.resolution, "Passthrough");
});

test("inline endpoints map ports by name, then targetPort, then the port number; unix sockets have no port", () => {
  const entry = serviceEntry("e", {
    resolution: "STATIC",
    ports: [HTTP_PORT, { number: 9000, name: "tcp", protocol: "TCP", targetPort: 9001 }],
    endpoints: [
      { address: "1.1.1.1", ports: { http: 8080 }, labels: { v: "1" }, locality: "r/z", weight: 3 },
      { address: "2.2.2.2", serviceAccount: "vm", network: "vpc" },
      { address: "unix:///var/run/sock" },
    ],
  });
  const registry = new ServiceRegistry(staticInputs([entry]));
  assert.deepEqual(endpointsOf(registry), ["1.1.1.1:8080", "2.2.2.2:80", "/var/run/sock:0"]);
  assert.deepEqual(endpointsOf(registry, 9000), ["1.1.1.1:9001", "2.2.2.2:9001", "/var/run/sock:0"]);
  const [first, second] = registry.endpointsFor("svc.example.com", 80, "ns1");
  assert.equal(first.weight, 3);
  assert.equal(first.locality, "r/z");
  assert.equal(first.tlsMode, "disabled");
  assert.equal(first.workloadName, "e-0");
  assert.deepEqual(first.labels, {
    v: "1",
    "topology.kubernetes.io/region": "r",
    "topology.kubernetes.io/zone": "z",
    "topology.istio.io/cluster": "Kubernetes",
  });
  // A service account means a sidecar: mTLS, and an identity in the entry's namespace.
  assert.equal(second.tlsMode, "istio");
  assert.equal(second.identity, "spiffe://cluster.local/ns/ns1/sa/vm");
  assert.equal(second.network, "vpc");
});

test("a DNS entry without endpoints resolves each host itself; with endpoints, those", () => {
  const entry = serviceEntry("e", {
    hosts: ["a.example.com", "b.example.com"],
    resolution: "DNS",
    ports: [{ number: 443, name: "tls", protocol: "TLS", targetPort: 8443 }],
  });
  const registry = new ServiceRegistry(staticInputs([entry]));
  assert.deepEqual(endpointsOf(registry, 443, "a.example.com"), ["a.example.com:8443"]);
  assert.deepEqual(endpointsOf(registry, 443, "b.example.com"), ["b.example.com:8443"]);
  const [endpoint] = registry.endpointsFor("a.example.com", 443, "ns1");
  assert.equal(endpoint.workloadName, "e");
  assert.deepEqual(endpoint.labels, {});

  const rr = serviceEntry("e", {
    resolution: "DNS_ROUND_ROBIN",
    ports: [HTTP_PORT],
    endpoints: [{ address: "us.example.com" }],
  });
  assert.deepEqual(endpointsOf(new ServiceRegistry(staticInputs([rr]))), ["us.example.com:80"]);
  // NONE and STATIC without endpoints have none.
  const none = serviceEntry("e", { resolution: "NONE", ports: [HTTP_PORT] });
  assert.deepEqual(endpointsOf(new ServiceRegistry(staticInputs([none]))), []);
});

test("a workloadSelector picks ready Pods and healthy WorkloadEntries of its namespace, and follows them", () => {
  const entry = serviceEntry("e", {
    resolution: "STATIC",
    ports: [{ number: 80, name: "http", protocol: "HTTP", targetPort: 9090 }],
    workloadSelector: { labels: { app: "vm" } },
  });
  const workloadEntry = istio("WorkloadEntry", "ns1", "we-1", {
    address: "10.1.0.1",
    labels: { app: "vm", version: "spec" },
    ports: { http: 7070 },
    serviceAccount: "vm-sa",
  });
  const relabelled = istio(
    "WorkloadEntry",
    "ns1",
    "we-2",
    { address: "10.1.0.2", labels: { app: "other" } },
    { labels: { app: "vm" } },
  );
  const otherNamespace = { ...workloadEntry, metadata: { name: "we-x", namespace: "ns2" } };
  const dnsNamed = istio("WorkloadEntry", "ns1", "we-dns", { address: "vm.example.com", labels: { app: "vm" } });
  const unhealthy = istio(
    "WorkloadEntry",
    "ns1",
    "we-sick",
    { address: "10.1.0.9", labels: { app: "vm" } },
    // Read as Go's ParseBool.
    { annotations: { "proxy.istio.io/health-checks-enabled": "T" } },
  );
  const inputs = staticInputs([
    entry,
    workloadEntry,
    relabelled,
    otherNamespace,
    dnsNamed,
    unhealthy,
    readyPod("pod-1", "10.2.0.1", { app: "vm" }, [{ name: "http", containerPort: 6060 }]),
    k8s("Pod", "ns1", "pod-pending", { metadata: { labels: { app: "vm" } }, spec: { containers: [] }, status: {} }),
  ]);
  const registry = new ServiceRegistry(inputs);
  // Pods sort before WorkloadEntries; metadata labels override spec labels; DNS names need DNS resolution.
  assert.deepEqual(endpointsOf(registry), ["10.2.0.1:6060", "10.1.0.1:7070", "10.1.0.2:9090"]);
  const fromEntry = registry.endpointsFor("svc.example.com", 80, "ns1")[1];
  assert.equal(fromEntry.workloadKind, "WorkloadEntry");
  assert.equal(fromEntry.identity, "spiffe://cluster.local/ns/ns1/sa/vm-sa");
  assert.equal(fromEntry.tlsMode, "istio");

  // Reported unhealthy (the condition the WorkloadEntry controller writes): still left out.
  const reported = (status: string) => ({ conditions: [{ type: "Healthy", status, message: "bad code 503" }] });
  inputs.workloadEntries.update({ upsert: [{ ...unhealthy, status: reported("False") } as WorkloadEntry] });
  assert.deepEqual(endpointsOf(registry), ["10.2.0.1:6060", "10.1.0.1:7070", "10.1.0.2:9090"]);

  // The sick entry passes its health check, we-1 goes, the pod goes.
  inputs.workloadEntries.update({
    upsert: [{ ...unhealthy, status: { conditions: [{ type: "Healthy", status: "True" }] } } as WorkloadEntry],
    delete: ["ns1/we-1"],
  });
  inputs.pods.delete("ns1/pod-1");
  assert.deepEqual(endpointsOf(registry), ["10.1.0.2:9090", "10.1.0.9:9090"]);
  assert.deepEqual(registry.service("svc.example.com", "ns1")?.selector, { app: "vm" });
});

test("a DNS entry with a selector takes DNS-named WorkloadEntries too", () => {
  const entry = serviceEntry("e", {
    resolution: "DNS",
    ports: [HTTP_PORT],
    workloadSelector: { labels: { app: "vm" } },
  });
  const dnsNamed = istio("WorkloadEntry", "ns1", "we-dns", { address: "vm.example.com", labels: { app: "vm" } });
  const registry = new ServiceRegistry(staticInputs([entry, dnsNamed]));
  assert.deepEqual(endpointsOf(registry), ["vm.example.com:80"]);
});

test("the workloads lookup finds Pods and WorkloadEntries by labels; WorkloadGroups are templates", () => {
  const group = istio("WorkloadGroup", "ns1", "vms", {
    metadata: { labels: { app: "vm" }, annotations: { a: "b" } },
    template: { serviceAccount: "vm-sa", ports: { http: 8080 } },
  });
  const inputs = staticInputs([
    readyPod("pod-1", "10.2.0.1", { app: "vm" }),
    istio("WorkloadEntry", "ns1", "we-1", { address: "10.1.0.1", labels: { app: "vm" } }),
    istio("WorkloadEntry", "ns1", "we-2", { address: "10.1.0.2", labels: { app: "db" } }),
    group,
  ]);
  const registry = new ServiceRegistry(inputs);
  assert.deepEqual(
    registry.workloadsMatching("ns1", { app: "vm" }).map((w) => `${w.kind}/${w.name}`),
    ["Pod/pod-1", "WorkloadEntry/we-1"],
  );
  assert.deepEqual(registry.workloadGroups.list(), [
    {
      name: "vms",
      namespace: "ns1",
      labels: { app: "vm" },
      annotations: { a: "b" },
      template: { serviceAccount: "vm-sa", ports: { http: 8080 } },
    },
  ]);
});
