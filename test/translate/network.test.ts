// Multi-network EDS through `sluice x translate`'s state: endpoints on the proxy's network are sent as
// they are, those on another network as that network's gateways (weighted by their endpoints), those on
// a network without gateways directly (Istio's sidecar behaviour), and remote endpoints without Istio
// mTLS not at all. Gateways come from meshNetworks addresses, registryServiceName Services and Services
// labelled with their network; endpoints without a network label take one from the system namespace's
// label or meshNetworks fromRegistry / fromCidr. Every resource passes Envoy's constraints.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type admin, endpoint, unpackAny } from "../../src/api/index.ts";
import { loadState, translate, translateProxy } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { loadMeshNetworks } from "../../src/config/mesh-networks.ts";
import { buildLoadAssignment, XdsCache } from "../../src/configgen/index.ts";
import { anyViolations } from "../support/pgv.ts";

/** The xDS cache these tests build with, as the discovery server's generators share one. */
const cache = new XdsCache();

const SLUICE_BIN = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const CLUSTER = "outbound|9080||reviews.default.svc.cluster.local";
const dir = mkdtempSync(join(tmpdir(), "sluice-network-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("SLUICE_")));

function sluice(args: string[]) {
  return spawnSync(process.execPath, [SLUICE_BIN, ...args], { encoding: "utf8", env: { ...env, HOME: dir } });
}

interface PodInput {
  name: string;
  ip: string;
  /** The topology.istio.io/network label ("" for none). */
  network: string;
  /** Injected: security.istio.io/tlsMode istio. Default true. */
  sidecar?: boolean;
}

/** The reviews Service in default, its pods and their EndpointSlice. */
function reviews(pods: PodInput[]): string {
  const docs = pods.map(({ name, ip, network, sidecar = true }) => {
    const labels = [
      "app: reviews",
      ...(network ? [`topology.istio.io/network: ${network}`] : []),
      ...(sidecar ? ["security.istio.io/tlsMode: istio"] : []),
    ];
    return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default, labels: {${labels.join(", ")}}}
spec: {containers: [{name: reviews, image: reviews}]}
status: {phase: Running, podIP: ${ip}, conditions: [{type: Ready, status: "True"}]}`;
  });
  const addresses = pods.map(
    ({ name, ip }) =>
      `- {addresses: [${ip}], conditions: {ready: true}, targetRef: {kind: Pod, name: ${name}, namespace: default}}`,
  );
  return [
    `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {clusterIP: 10.96.0.10, selector: {app: reviews}, ports: [{name: http, port: 9080}]}`,
    ...docs,
    `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: reviews-1, namespace: default, labels: {kubernetes.io/service-name: reviews}}
addressType: IPv4
endpoints:
${addresses.join("\n")}
ports: [{name: http, port: 9080}]`,
  ].join("\n---\n");
}

/** A LoadBalancer Service in istio-system at `ip`, exposing `port`, with `labels`. */
function gatewayService(name: string, ip: string, port: number, labels: Record<string, string> = {}): string {
  const labelText = Object.entries(labels).map(([k, v]) => `${k}: "${v}"`);
  return `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: istio-system, labels: {${labelText.join(", ")}}}
spec: {type: LoadBalancer, clusterIP: 10.96.1.1, selector: {istio: eastwestgateway}, ports: [{name: tls, port: ${port}}]}
status: {loadBalancer: {ingress: [{ip: ${ip}}]}}`;
}

let fileCount = 0;
function file(text: string): string {
  const path = join(dir, `config-${fileCount++}.yaml`);
  writeFileSync(path, text);
  return path;
}

/** The reviews load assignment for a sidecar on `network`: [address:port, weight] of each endpoint. */
function reviewsEndpoints(config: string, meshNetworks: string, network: string): [string, number][] {
  const result = translate(
    [file(config)],
    { type: "sidecar", ip: "10.0.0.9", namespace: "default", labels: {}, id: "client.default", network },
    {
      mesh: DEFAULT_MESH_CONFIG,
      meshNetworks: loadMeshNetworks(meshNetworks),
      domainSuffix: "cluster.local",
      types: ["EDS", "CDS"],
    },
  );
  assert.ok(result.dump, result.problems?.join("\n"));
  const assignments: endpoint.ClusterLoadAssignment[] = [];
  for (const config of result.dump.configs) {
    const section = unpackAny(config);
    if (section?.$typeName === "envoy.admin.v3.EndpointsConfigDump") {
      for (const { endpointConfig } of (section as admin.EndpointsConfigDump).dynamicEndpointConfigs) {
        assert.ok(endpointConfig);
        assert.deepEqual(anyViolations(endpointConfig), [], "ClusterLoadAssignment");
        const cla = unpackAny(endpointConfig, endpoint.ClusterLoadAssignmentSchema);
        if (cla) assignments.push(cla);
      }
    } else if (section?.$typeName === "envoy.admin.v3.ClustersConfigDump") {
      for (const { cluster } of (section as admin.ClustersConfigDump).dynamicActiveClusters) {
        assert.ok(cluster);
        assert.deepEqual(anyViolations(cluster), [], "Cluster");
      }
    }
  }
  const cla = assignments.find((a) => a.clusterName === CLUSTER);
  assert.ok(cla, `no ${CLUSTER}`);
  return cla.endpoints
    .flatMap((l) => l.lbEndpoints)
    .map((lb) => {
      const ep = lb.hostIdentifier.case === "endpoint" ? lb.hostIdentifier.value : undefined;
      const socket = ep?.address?.address.case === "socketAddress" ? ep.address.address.value : undefined;
      const port = socket?.portSpecifier.case === "portValue" ? socket.portSpecifier.value : 0;
      return [`${socket?.address}:${port}`, lb.loadBalancingWeight ?? 0] as [string, number];
    })
    .sort(([a], [b]) => a.localeCompare(b));
}

const TWO_NETWORKS = `
networks:
  network1:
    gateways: [{address: 35.1.1.1, port: 15443}]
  network2:
    gateways: [{address: 35.2.2.2, port: 15443}]
`;

const LABELLED_PODS = reviews([
  { name: "r1", ip: "10.1.0.1", network: "network1" },
  { name: "r2", ip: "10.2.0.1", network: "network2" },
  { name: "r3", ip: "10.2.0.2", network: "network2" },
  { name: "r4", ip: "10.2.0.3", network: "network2", sidecar: false },
  { name: "r5", ip: "10.3.0.1", network: "network3" },
]);

test("a proxy on network1 gets its network's endpoints and network2's gateway weighted by network2's endpoints", () => {
  assert.deepEqual(reviewsEndpoints(LABELLED_PODS, TWO_NETWORKS, "network1"), [
    ["10.1.0.1:9080", 1],
    // network3 has no gateway: its endpoints are sent as they are, as Istio does for sidecars.
    ["10.3.0.1:9080", 1],
    // r2 and r3; r4 has no sidecar, so the gateway (which routes by mTLS SNI) cannot reach it.
    ["35.2.2.2:15443", 2],
  ]);
});

test("a proxy on network2 sees the reverse: its own endpoints and network1's gateway", () => {
  assert.deepEqual(reviewsEndpoints(LABELLED_PODS, TWO_NETWORKS, "network2"), [
    ["10.2.0.1:9080", 1],
    ["10.2.0.2:9080", 1],
    ["10.2.0.3:9080", 1],
    ["10.3.0.1:9080", 1],
    ["35.1.1.1:15443", 1],
  ]);
});

test("in one push, proxies on different networks get their own load assignments (the cache keys on the network)", () => {
  const { state } = loadState(
    [file(LABELLED_PODS)],
    DEFAULT_MESH_CONFIG,
    "cluster.local",
    undefined,
    [],
    loadMeshNetworks(TWO_NETWORKS),
  );
  assert.ok(state);
  const addresses = (network: string) => {
    const proxy = translateProxy(
      { type: "sidecar", ip: "10.0.0.9", namespace: "default", labels: {}, id: `client-${network}.default`, network },
      DEFAULT_MESH_CONFIG,
      "cluster.local",
    );
    const cla = buildLoadAssignment(state.push, proxy, state.registry, CLUSTER, cache);
    return cla.endpoints.flatMap((l) =>
      l.lbEndpoints.map((lb) => {
        const address = lb.hostIdentifier.case === "endpoint" ? lb.hostIdentifier.value.address?.address : undefined;
        return address?.case === "socketAddress" ? address.value.address : "";
      }),
    );
  };
  assert.ok(addresses("network1").includes("35.2.2.2"));
  assert.ok(addresses("network2").includes("35.1.1.1"));
  assert.ok(!addresses("network2").includes("35.2.2.2"));
  assert.ok(addresses("network1").includes("35.2.2.2"));
});

test("without meshNetworks or gateways, every endpoint is sent directly", () => {
  assert.deepEqual(
    reviewsEndpoints(LABELLED_PODS, "", "network1").map(([address]) => address),
    ["10.1.0.1:9080", "10.2.0.1:9080", "10.2.0.2:9080", "10.2.0.3:9080", "10.3.0.1:9080"],
  );
});

test("a registryServiceName gateway is its Service's load-balancer address; fromRegistry puts unlabelled endpoints on its network", () => {
  const config = [
    reviews([
      { name: "r1", ip: "10.1.0.1", network: "" },
      { name: "r2", ip: "10.1.0.2", network: "" },
      { name: "r3", ip: "10.2.0.1", network: "network2" },
    ]),
    gatewayService("istio-eastwestgateway", "35.1.1.9", 15443),
  ].join("\n---\n");
  const meshNetworks = `
networks:
  network1:
    endpoints: [{fromRegistry: Kubernetes}]
    gateways: [{registryServiceName: istio-eastwestgateway.istio-system.svc.cluster.local, port: 15443}]
  network2:
    endpoints: [{fromRegistry: other-cluster}]
    gateways: [{address: 35.2.2.2, port: 15443}]
`;
  assert.deepEqual(reviewsEndpoints(config, meshNetworks, "network2"), [
    ["10.2.0.1:9080", 1],
    ["35.1.1.9:15443", 2],
  ]);
  assert.deepEqual(reviewsEndpoints(config, meshNetworks, "network1"), [
    ["10.1.0.1:9080", 1],
    ["10.1.0.2:9080", 1],
    ["35.2.2.2:15443", 1],
  ]);
  // registryServiceName counts only in a network whose endpoints name this cluster: network1 has no gateway
  // then, and its endpoints (placed by fromCidr) are reached directly.
  const byCidr = meshNetworks.replace("fromRegistry: Kubernetes", "fromCidr: 10.1.0.0/16");
  assert.deepEqual(reviewsEndpoints(config, byCidr, "network2"), [
    ["10.1.0.1:9080", 1],
    ["10.1.0.2:9080", 1],
    ["10.2.0.1:9080", 1],
  ]);
});

test("a Service labelled with its network is that network's gateway on its gatewayPort; fromCidr places unlabelled endpoints", () => {
  const pods = reviews([
    { name: "r1", ip: "10.1.0.1", network: "network1" },
    { name: "r2", ip: "10.2.0.1", network: "" },
    { name: "r3", ip: "10.2.0.2", network: "" },
  ]);
  const labelled = (port: number, labels: Record<string, string>) =>
    [pods, gatewayService("eastwest", "35.2.2.9", port, { "topology.istio.io/network": "network2", ...labels })].join(
      "\n---\n",
    );
  const meshNetworks = `
networks:
  network2:
    endpoints: [{fromCidr: 10.2.0.0/16}]
`;
  assert.deepEqual(reviewsEndpoints(labelled(15443, {}), meshNetworks, "network1"), [
    ["10.1.0.1:9080", 1],
    ["35.2.2.9:15443", 2],
  ]);
  assert.deepEqual(
    reviewsEndpoints(labelled(15444, { "networking.istio.io/gatewayPort": "15444" }), meshNetworks, "network1"),
    [
      ["10.1.0.1:9080", 1],
      ["35.2.2.9:15444", 2],
    ],
  );
  // A labelled Service without its gateway port is no gateway: network2 has none, so it is reached directly.
  assert.deepEqual(
    reviewsEndpoints(labelled(15444, {}), meshNetworks, "network1").map(([address]) => address),
    ["10.1.0.1:9080", "10.2.0.1:9080", "10.2.0.2:9080"],
  );
});

test("the system namespace's network label is the default network of unlabelled endpoints, before fromCidr", () => {
  const config = [
    reviews([
      { name: "r1", ip: "10.1.0.1", network: "" },
      { name: "r2", ip: "10.2.0.1", network: "" },
    ]),
    `apiVersion: v1
kind: Namespace
metadata: {name: istio-system, labels: {topology.istio.io/network: network1}}`,
  ].join("\n---\n");
  const meshNetworks = `
networks:
  network1:
    gateways: [{address: 35.1.1.1, port: 15443}]
  network2:
    endpoints: [{fromCidr: 10.2.0.0/16}]
`;
  assert.deepEqual(reviewsEndpoints(config, meshNetworks, "network2"), [["35.1.1.1:15443", 2]]);
});

test("sluice x translate --meshNetworks --network prints the gateway standing in for the other network", () => {
  const networks = join(dir, "networks.yaml");
  writeFileSync(networks, TWO_NETWORKS);
  const args = ["x", "translate", "-f", file(LABELLED_PODS), "--meshNetworks", networks, "--types", "eds"];
  const run = sluice([...args, "--network", "network1"]);
  assert.equal(run.status, 0, run.stderr);
  const text = run.stdout;
  assert.match(text, /"address": "35\.2\.2\.2",\s*"portValue": 15443/);
  assert.doesNotMatch(text, /"address": "10\.2\.0\.1"/);

  writeFileSync(networks, "networks: {network2: {gateways: [{address: 35.2.2.2, port: 0}]}}");
  const bad = sluice(args);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /invalid mesh networks/);
});
