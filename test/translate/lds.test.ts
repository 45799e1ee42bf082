// What a sidecar's listeners and inbound clusters are built from: its Sidecar's ingress listeners when
// it has some (not the service ports), binding a real listener for captureMode NONE and delivering to
// the defaultEndpoint; and the Telemetry that decides whether Prometheus stats filters run.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type admin, cluster, listener, tcpProxy, unpackAny } from "../../src/api/index.ts";
import { type ProxySpec, translate } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG, loadMeshConfig } from "../../src/config/index.ts";
import { configDumpJson } from "../../src/xds/index.ts";

const SERVICE = `
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {clusterIP: 10.96.0.40, ports: [{name: http, port: 80, targetPort: 8080}], selector: {app: api}}
`;
const SIDECAR = `
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: api, namespace: shop}
spec:
  workloadSelector: {labels: {app: api}}
  ingress:
  - port: {number: 9443, name: grpc, protocol: GRPC}
    captureMode: NONE
    defaultEndpoint: 127.0.0.1:9443
`;

const dir = mkdtempSync(join(tmpdir(), "sluice-inbound-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const PROXY: ProxySpec = { type: "sidecar", ip: "10.0.0.7", namespace: "shop", labels: { app: "api" }, id: "api.shop" };

function dump(config: string) {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, config);
  const result = translate([file], PROXY, {
    mesh: DEFAULT_MESH_CONFIG,
    domainSuffix: "cluster.local",
    types: ["CDS", "LDS"],
  });
  assert.ok(result.dump, result.problems?.join("\n"));
  const [clusters, listeners] = result.dump.configs.map((c) => unpackAny(c));
  return {
    clusters: (clusters as admin.ClustersConfigDump).dynamicActiveClusters.flatMap(
      (c) => (c.cluster && unpackAny(c.cluster, cluster.ClusterSchema)) || [],
    ),
    listeners: (listeners as admin.ListenersConfigDump).dynamicListeners.flatMap(
      (l) => (l.activeState?.listener && unpackAny(l.activeState.listener, listener.ListenerSchema)) || [],
    ),
  };
}

const inbound = (clusters: cluster.Cluster[]) =>
  clusters.filter((c) => c.name.startsWith("inbound|")).map((c) => c.name);

test("without a Sidecar the service's target ports are inbound", () => {
  const { clusters } = dump(SERVICE);
  assert.deepEqual(inbound(clusters), ["inbound|8080||"]);
});

test("a Sidecar's ingress listeners replace the service ports: bound listener, cluster to the defaultEndpoint", () => {
  const { clusters, listeners } = dump(SERVICE + SIDECAR);
  assert.deepEqual(inbound(clusters), ["inbound|9443||"]);
  const static9443 = clusters.find((c) => c.name === "inbound|9443||");
  const address = static9443?.loadAssignment?.endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
  assert.equal(
    address?.case === "endpoint" && address.value.address?.address.case === "socketAddress"
      ? address.value.address.address.value.address
      : undefined,
    "127.0.0.1",
  );
  assert.ok(
    listeners.some((l) => l.name === "10.0.0.7_9443"),
    listeners.map((l) => l.name).join(" "),
  );
});

/** The one static endpoint of a cluster, as `address:port` or `unix://path`. */
function staticEndpoint(c: cluster.Cluster | undefined): string | undefined {
  const host = c?.loadAssignment?.endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
  const address = host?.case === "endpoint" ? host.value.address?.address : undefined;
  if (address?.case === "pipe") return `unix://${address.value.path}`;
  if (address?.case !== "socketAddress") return undefined;
  const port = address.value.portSpecifier.case === "portValue" ? address.value.portSpecifier.value : undefined;
  return `${address.value.address}:${port}`;
}

test("a Sidecar ingress port delivers to its defaultEndpoint's own port, pod IP or unix socket", () => {
  const sidecar = (endpoints: string[]) => `
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: api, namespace: shop}
spec:
  workloadSelector: {labels: {app: api}}
  ingress:
${endpoints.map((e, i) => `  - port: {number: ${9080 + i}, name: http-${i}, protocol: HTTP}\n    defaultEndpoint: ${e}`).join("\n")}
  - port: {number: 9090, name: http-passthrough, protocol: HTTP}
`;
  const { clusters } = dump(SERVICE + sidecar(["127.0.0.1:8080", "0.0.0.0:8081", "unix:///var/run/app.sock"]));
  const byName = (name: string) => clusters.find((c) => c.name === name);
  assert.equal(staticEndpoint(byName("inbound|9080||")), "127.0.0.1:8080");
  assert.equal(staticEndpoint(byName("inbound|9081||")), "10.0.0.7:8081");
  assert.equal(staticEndpoint(byName("inbound|9082||")), "unix:///var/run/app.sock");
  assert.equal(byName("inbound|9090||")?.clusterDiscoveryType.value, cluster.Cluster_DiscoveryType.ORIGINAL_DST);
});

test("a Sidecar ingress port that is a service's target port gets that service's cluster metadata", () => {
  const sidecar = `
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: api, namespace: shop}
spec:
  workloadSelector: {labels: {app: api}}
  ingress:
  - port: {number: 8080, name: http, protocol: HTTP}
    defaultEndpoint: 127.0.0.1:18080
  - port: {number: 9090, name: http-admin, protocol: HTTP}
    defaultEndpoint: 127.0.0.1:19090
`;
  const { clusters } = dump(SERVICE + sidecar);
  const services = (name: string) => {
    const istio = clusters.find((c) => c.name === name)?.metadata?.filterMetadata.istio;
    return istio && !Array.isArray(istio) && typeof istio === "object" ? istio.services : undefined;
  };
  assert.deepEqual(services("inbound|8080||"), [
    { host: "api.shop.svc.cluster.local", name: "api", namespace: "shop" },
  ]);
  assert.equal(services("inbound|9090||"), undefined);
});

test("a DestinationRule tunnel reaches the outbound tcp_proxy of its host", () => {
  const config = `
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: shop}
spec:
  hosts: [db.example.com]
  addresses: [192.0.2.10]
  ports: [{number: 5432, name: tcp, protocol: TCP}]
  resolution: DNS
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: db, namespace: shop}
spec:
  host: db.example.com
  trafficPolicy:
    tunnel: {protocol: POST, targetHost: db.example.com, targetPort: 5432}
`;
  const db = dump(config).listeners.find((l) => l.name === "192.0.2.10_5432");
  const filter = db?.filterChains[0]?.filters.find((f) => f.name === "envoy.filters.network.tcp_proxy");
  const proxy =
    filter?.configType.case === "typedConfig" ? unpackAny(filter.configType.value, tcpProxy.TcpProxySchema) : undefined;
  assert.equal(proxy?.tunnelingConfig?.hostname, "db.example.com:5432");
  assert.equal(proxy?.tunnelingConfig?.usePost, true);
});

test("a Telemetry naming the Prometheus provider turns on the stats filters; without one the mesh default (none) holds", () => {
  const TELEMETRY = `
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: metrics, namespace: shop}
spec:
  metrics: [{providers: [{name: prometheus}]}]
`;
  const statsFilters = (config: string) =>
    dump(config).listeners.flatMap((l) =>
      [...l.filterChains, ...(l.defaultFilterChain ? [l.defaultFilterChain] : [])].flatMap((c) =>
        c.filters.map((f) => f.name).filter((n) => n === "istio.stats"),
      ),
    ).length;
  assert.equal(statsFilters(SERVICE), 0);
  assert.ok(statsFilters(SERVICE + TELEMETRY) > 0);
});

test("JWKS fetched through the registry's cluster; CUSTOM authorization through the mesh's ext_authz provider", () => {
  const POLICIES = `
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: auth, namespace: shop}
spec:
  hosts: [auth.example.com]
  location: MESH_EXTERNAL
  resolution: DNS
  ports: [{number: 443, name: https, protocol: HTTPS}]
---
apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: {name: jwt, namespace: shop}
spec:
  jwtRules: [{issuer: "https://auth.example.com", jwksUri: "https://auth.example.com/jwks"}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: ext, namespace: shop}
spec:
  action: CUSTOM
  provider: {name: checker}
  rules: [{to: [{operation: {paths: ["/admin"]}}]}]
`;
  const mesh = loadMeshConfig(`
extensionProviders:
- name: checker
  envoyExtAuthzHttp: {service: auth.example.com, port: 443}
`).mesh;
  const file = join(dir, "policies.yaml");
  writeFileSync(file, SERVICE + POLICIES);
  const result = translate([file], PROXY, { mesh, domainSuffix: "cluster.local", types: ["LDS"] });
  assert.ok(result.dump, result.problems?.join("\n"));
  const json = JSON.stringify(configDumpJson(result.dump));
  assert.match(
    json,
    /"remoteJwks":\{"httpUri":\{"uri":"https:\/\/auth\.example\.com\/jwks","cluster":"outbound\|443\|\|auth\.example\.com"/,
  );
  assert.match(json, /"name":"envoy\.filters\.http\.ext_authz"/);
});
