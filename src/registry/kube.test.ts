import assert from "node:assert/strict";
import { test } from "node:test";
import { k8s, staticInputs } from "../../test/support/registry-inputs.ts";
import { ServiceRegistry } from "./index.ts";
import { kubePortProtocol } from "./kube.ts";

const HOST = "reviews.default.svc.cluster.local";

function reviewsService(spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) {
  return k8s("Service", "default", "reviews", {
    metadata: { labels: { app: "reviews" }, creationTimestamp: "2024-01-01T00:00:00Z", ...metadata },
    spec: {
      clusterIP: "10.96.0.10",
      selector: { app: "reviews" },
      ports: [
        { name: "http", port: 9080, targetPort: 8080 },
        { name: "grpc-api", port: 9090, targetPort: "grpc" },
      ],
      ...spec,
    },
  });
}

function slice(name: string, endpoints: unknown[], ports = [{ name: "http", port: 8080 }]) {
  return k8s("EndpointSlice", "default", name, {
    metadata: { labels: { "kubernetes.io/service-name": "reviews" } },
    addressType: "IPv4",
    endpoints,
    ports,
  });
}

function pod(name: string, ip: string, node: string, labels: Record<string, string> = {}) {
  return k8s("Pod", "default", name, {
    metadata: {
      generateName: "reviews-v1-7d9f8b-",
      labels: { app: "reviews", "pod-template-hash": "7d9f8b", ...labels },
      ownerReferences: [
        { kind: "ReplicaSet", name: "reviews-v1-7d9f8b", controller: true, apiVersion: "apps/v1", uid: "u" },
      ],
    },
    spec: { nodeName: node, serviceAccountName: "bookinfo-reviews", containers: [] },
    status: { phase: "Running", podIP: ip, conditions: [{ type: "Ready", status: "True" }] },
  });
}

function node(name: string, labels: Record<string, string>) {
  return k8s("Node", "", name, { metadata: { labels } });
}

const podRef = (name: string) => ({ kind: "Pod", name, namespace: "default" });

test("port protocols: UDP, appProtocol (with Kubernetes' names), name prefix, grpc-web, well-known ports", () => {
  const cases: [number, string, string | undefined, string | undefined, string][] = [
    [53, "dns", "UDP", undefined, "UDP"],
    [80, "web", "TCP", "kubernetes.io/h2c", "HTTP2"],
    [80, "web", "TCP", "kubernetes.io/ws", "HTTP"],
    [443, "web", "TCP", "kubernetes.io/wss", "HTTPS"],
    [80, "tcp-x", "TCP", "http", "HTTP"],
    [80, "http", undefined, undefined, "HTTP"],
    [80, "HTTP2-api", undefined, undefined, "HTTP2"],
    [80, "grpc-web-x", undefined, undefined, "GRPC-Web"],
    [80, "grpc-x", undefined, undefined, "GRPC"],
    [80, "mongo", undefined, undefined, "Mongo"],
    [80, "web", undefined, undefined, "UnsupportedProtocol"],
    [3306, "db", undefined, undefined, "TCP"],
    [27017, "", undefined, undefined, "TCP"],
  ];
  for (const [port, name, protocol, appProtocol, want] of cases) {
    assert.equal(kubePortProtocol(port, name, protocol, appProtocol), want, `${port} ${name} ${appProtocol}`);
  }
});

test("a ClusterIP Service becomes a service with its hostname, VIP, ports, selector, exportTo and service accounts", () => {
  const svc = reviewsService(
    {},
    {
      annotations: {
        "networking.istio.io/exportTo": "., istio-system",
        "alpha.istio.io/kubernetes-serviceaccounts": "reviews",
        "alpha.istio.io/canonical-serviceaccounts": "spiffe://other/ns/x/sa/y",
      },
    },
  );
  const registry = new ServiceRegistry(staticInputs([svc]), { domainSuffix: "cluster.local" });
  assert.deepEqual(registry.service(HOST, "default"), {
    hostname: HOST,
    namespace: "default",
    name: "reviews",
    objectName: "reviews",
    registry: "Kubernetes",
    ports: [
      { name: "http", port: 9080, protocol: "HTTP", targetPort: 8080 },
      { name: "grpc-api", port: 9090, protocol: "GRPC", targetPort: "grpc" },
    ],
    addresses: ["10.96.0.10"],
    defaultAddress: "10.96.0.10",
    resolution: "ClientSideLB",
    meshExternal: false,
    exportTo: [".", "istio-system"],
    labels: { app: "reviews" },
    selector: { app: "reviews" },
    serviceAccounts: ["spiffe://other/ns/x/sa/y", "spiffe://cluster.local/ns/default/sa/reviews"],
    creationTime: "2024-01-01T00:00:00Z",
    kubernetesType: "ClusterIP",
    clusterId: "Kubernetes",
    externalName: "",
    externalAddresses: [],
    nodeLocal: false,
    publishNotReadyAddresses: false,
  });
});

test("the domain suffix is an option; dual-stack clusterIPs are all addresses", () => {
  const svc = reviewsService({ clusterIPs: ["10.96.0.10", "fd00::10"] });
  const registry = new ServiceRegistry(staticInputs([svc]), { domainSuffix: "example.org" });
  const service = registry.service("reviews.default.svc.example.org", "default");
  assert.deepEqual(service?.addresses, ["10.96.0.10", "fd00::10"]);
});

test("headless Services are Passthrough with no VIP; ExternalName Services are mesh-external aliases", () => {
  const headless = reviewsService({ clusterIP: "None" });
  const external = k8s("Service", "default", "db", {
    spec: { type: "ExternalName", externalName: "db.example.com", ports: [{ name: "tcp", port: 5432 }] },
  });
  const registry = new ServiceRegistry(staticInputs([headless, external]));
  const h = registry.service(HOST, "default");
  assert.equal(h?.resolution, "Passthrough");
  assert.deepEqual(h?.addresses, []);
  assert.equal(h?.defaultAddress, "0.0.0.0");
  const e = registry.service("db.default.svc.cluster.local", "default");
  assert.equal(e?.resolution, "Alias");
  assert.equal(e?.meshExternal, true);
  assert.equal(e?.externalName, "db.example.com");
  assert.deepEqual(registry.endpointsFor("db.default.svc.cluster.local", 5432, "default"), []);
});

test("slice endpoints carry health from conditions, pod metadata, and locality from the pod's Node", () => {
  const inputs = staticInputs([
    reviewsService(),
    node("n1", { "topology.kubernetes.io/region": "us-east1", "topology.kubernetes.io/zone": "us-east1-b" }),
    pod("reviews-a", "10.0.0.1", "n1", { "security.istio.io/tlsMode": "istio" }),
    pod("reviews-b", "10.0.0.2", "n1"),
    pod("reviews-c", "10.0.0.3", "n1"),
    slice("reviews-1", [
      { addresses: ["10.0.0.1"], conditions: { ready: true }, targetRef: podRef("reviews-a") },
      { addresses: ["10.0.0.2"], conditions: { ready: false, terminating: false }, targetRef: podRef("reviews-b") },
      { addresses: ["10.0.0.3"], conditions: { ready: false, terminating: true }, targetRef: podRef("reviews-c") },
    ]),
  ]);
  const registry = new ServiceRegistry(inputs);
  const endpoints = registry.endpointsFor(HOST, 9080, "default");
  assert.deepEqual(
    endpoints.map((e) => [e.address, e.port, e.health]),
    [
      ["10.0.0.1", 8080, "Healthy"],
      ["10.0.0.2", 8080, "UnHealthy"],
      ["10.0.0.3", 8080, "Terminating"],
    ],
  );
  assert.deepEqual(endpoints[0], {
    hostname: HOST,
    namespace: "default",
    servicePort: 9080,
    servicePortName: "http",
    address: "10.0.0.1",
    port: 8080,
    health: "Healthy",
    labels: {
      app: "reviews",
      "pod-template-hash": "7d9f8b",
      "security.istio.io/tlsMode": "istio",
      "topology.kubernetes.io/region": "us-east1",
      "topology.kubernetes.io/zone": "us-east1-b",
      "topology.istio.io/cluster": "Kubernetes",
      "kubernetes.io/hostname": "n1",
    },
    serviceAccount: "bookinfo-reviews",
    identity: "spiffe://cluster.local/ns/default/sa/bookinfo-reviews",
    locality: "us-east1/us-east1-b/",
    clusterId: "Kubernetes",
    network: "",
    tlsMode: "istio",
    workloadName: "reviews-v1",
    workloadNamespace: "default",
    workloadKind: "Pod",
    weight: 1,
    nodeName: "n1",
  });
  assert.equal(endpoints[1].tlsMode, "disabled");
  // The grpc port has no slice port: no endpoints.
  assert.deepEqual(registry.endpointsFor(HOST, 9090, "default"), []);

  // A Node relabelled moves its pods' endpoints to the new zone.
  inputs.nodes.upsert(
    node("n1", { "topology.kubernetes.io/region": "us-east1", "topology.kubernetes.io/zone": "us-east1-c" }),
  );
  assert.deepEqual(
    registry.endpointsFor(HOST, 9080, "default").map((e) => e.locality),
    ["us-east1/us-east1-c/", "us-east1/us-east1-c/", "us-east1/us-east1-c/"],
  );
});

test("an address naming a pod that is not known yet is left out until the pod arrives", () => {
  const inputs = staticInputs([
    reviewsService(),
    slice("reviews-1", [{ addresses: ["10.0.0.1"], targetRef: podRef("reviews-a") }]),
  ]);
  const registry = new ServiceRegistry(inputs);
  assert.deepEqual(registry.endpointsFor(HOST, 9080, "default"), []);
  inputs.pods.upsert(pod("reviews-a", "10.0.0.1", "n1"));
  assert.deepEqual(
    registry.endpointsFor(HOST, 9080, "default").map((e) => [e.address, e.workloadName]),
    [["10.0.0.1", "reviews-v1"]],
  );
});

test("an address without targetRef takes a ready pod with that IP; otherwise it is a bare endpoint", () => {
  const inputs = staticInputs([
    reviewsService(),
    pod("reviews-a", "10.0.0.1", "n1"),
    slice("reviews-1", [{ addresses: ["10.0.0.1"] }, { addresses: ["192.168.1.1"] }]),
  ]);
  const registry = new ServiceRegistry(inputs);
  const [fromPod, bare] = registry.endpointsFor(HOST, 9080, "default");
  assert.equal(fromPod.workloadKind, "Pod");
  assert.equal(fromPod.serviceAccount, "bookinfo-reviews");
  assert.equal(bare.workloadKind, "");
  assert.equal(bare.tlsMode, "disabled");
  assert.deepEqual(bare.labels, { "topology.istio.io/cluster": "Kubernetes" });
});

test("an address in two slices is listed once; a multicluster slice is ignored", () => {
  const mcs = k8s("EndpointSlice", "default", "reviews-mcs", {
    metadata: {
      labels: { "kubernetes.io/service-name": "reviews", "multicluster.kubernetes.io/service-name": "reviews" },
    },
    endpoints: [{ addresses: ["10.9.9.9"] }],
    ports: [{ name: "http", port: 8080 }],
  });
  const inputs = staticInputs([
    reviewsService(),
    slice("reviews-1", [{ addresses: ["10.0.0.1"] }]),
    slice("reviews-2", [{ addresses: ["10.0.0.1"] }, { addresses: ["10.0.0.2"] }]),
    mcs,
  ]);
  const registry = new ServiceRegistry(inputs);
  assert.deepEqual(
    registry.endpointsFor(HOST, 9080, "default").map((e) => e.address),
    ["10.0.0.1", "10.0.0.2"],
  );
});

test("Endpoints are read when a service has no EndpointSlice, and ignored once one appears", () => {
  const endpoints = k8s("Endpoints", "default", "reviews", {
    subsets: [
      {
        addresses: [{ ip: "10.0.0.1" }],
        notReadyAddresses: [{ ip: "10.0.0.2" }],
        ports: [{ name: "http", port: 8080 }],
      },
    ],
  });
  const inputs = staticInputs([reviewsService(), endpoints]);
  const registry = new ServiceRegistry(inputs);
  assert.deepEqual(
    registry.endpointsFor(HOST, 9080, "default").map((e) => [e.address, e.health]),
    [
      ["10.0.0.1", "Healthy"],
      ["10.0.0.2", "UnHealthy"],
    ],
  );
  inputs.endpointSlices.upsert(slice("reviews-1", [{ addresses: ["10.0.0.7"] }]));
  assert.deepEqual(
    registry.endpointsFor(HOST, 9080, "default").map((e) => e.address),
    ["10.0.0.7"],
  );
});

test("a pod's locality label overrides its Node; pods get network and workload name labels", () => {
  const inputs = staticInputs([
    reviewsService(),
    node("n1", { "topology.kubernetes.io/region": "r1" }),
    k8s("Pod", "default", "standalone", {
      metadata: {
        labels: {
          app: "reviews",
          "istio-locality": "r2.z2.s2",
          "topology.istio.io/network": "net-1",
          "service.istio.io/workload-name": "custom",
        },
      },
      spec: { nodeName: "n1", containers: [] },
      status: { phase: "Running", podIP: "10.0.0.5", conditions: [{ type: "Ready", status: "True" }] },
    }),
    slice("reviews-1", [{ addresses: ["10.0.0.5"], targetRef: podRef("standalone") }]),
  ]);
  const registry = new ServiceRegistry(inputs);
  const [endpoint] = registry.endpointsFor(HOST, 9080, "default");
  assert.equal(endpoint.locality, "r2/z2/s2");
  assert.equal(endpoint.network, "net-1");
  assert.equal(endpoint.workloadName, "custom");
  assert.equal(endpoint.serviceAccount, "default");
  assert.equal(endpoint.labels["topology.istio.io/subzone"], "s2");
});

test("a Service's selector also picks the healthy WorkloadEntries of its namespace", () => {
  const entry = (name: string, address: string, ports: Record<string, number>, app = "reviews") => ({
    apiVersion: "networking.istio.io/v1",
    kind: "WorkloadEntry",
    metadata: { name, namespace: "default" },
    spec: { address, labels: { app }, ports, serviceAccount: "vm" },
  });
  const inputs = staticInputs([
    reviewsService(),
    entry("vm-1", "10.5.0.1", { http: 7070, grpc: 7071 }),
    entry("vm-2", "10.5.0.2", {}),
    entry("other", "10.5.0.3", {}, "ratings"),
  ]);
  const registry = new ServiceRegistry(inputs);
  // targetPort 8080 is overridden by the entry's "http" port; the named targetPort "grpc" must exist.
  assert.deepEqual(
    registry.endpointsFor(HOST, 9080, "default").map((e) => `${e.address}:${e.port} ${e.workloadKind} ${e.tlsMode}`),
    ["10.5.0.1:7070 WorkloadEntry istio", "10.5.0.2:8080 WorkloadEntry istio"],
  );
  assert.deepEqual(
    registry.endpointsFor(HOST, 9090, "default").map((e) => `${e.address}:${e.port}`),
    ["10.5.0.1:7071"],
  );
  inputs.services.upsert(reviewsService({ clusterIP: "None" }));
  assert.deepEqual(registry.endpointsFor(HOST, 9080, "default"), []);
});
