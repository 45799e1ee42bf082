// LDS through `sluice x translate`'s state and the generators, one file: the listeners a sidecar's
// config gives (the top-level cases), the listeners shared per proxy class ("cache"), and the bytes of
// the benchmark templates' LDS ("golden"). Unit tests of the builders are in src/networking/listener/
// and src/configgen/.
//
// What a sidecar's listeners and inbound clusters are built from: its Sidecar's ingress listeners when
// it has some (not the service ports), binding a real listener for captureMode NONE and delivering to
// the defaultEndpoint; and the Telemetry that decides whether Prometheus stats filters run.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { create, type JsonObject, toJson } from "@bufbuild/protobuf";
import { benchProxy, template } from "../../bench/templates.ts";
import {
  type admin,
  cluster,
  core,
  listener,
  tcpProxy,
  registry as typeRegistry,
  unpackAny,
  unpacked,
} from "../../src/api/index.ts";
import { loadState, type ProxySpec, translate } from "../../src/cli/translate-state.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG, loadMeshConfig, type MeshConfig } from "../../src/config/index.ts";
import { buildListeners, listenerResources, XdsCache } from "../../src/configgen/index.ts";
import { type MeshPush, type ProxyNode, parseProxy } from "../../src/model/index.ts";
import { storePush } from "../../src/model/store-push.ts";
import { MemorySource } from "../../src/sources/index.ts";
import { configDumpJson } from "../../src/xds/index.ts";
import { CACHE_MODES, cacheModeDigests } from "../support/cache-modes.ts";

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

describe("cache", () => {
  // Outbound listeners are built once per proxy class and shared: every proxy must get exactly what a
  // build for it alone (caches cleared) gives, whatever proxies were served before it; proxies that differ
  // only in what the outbound builders never read (pod IP, an unselected label) share the objects.
  /** The xDS cache these tests build with, as the discovery server's generators share one. */
  const cache = new XdsCache();

  const MESH: MeshConfig = {
    ...DEFAULT_MESH_CONFIG,
    extensionProviders: [
      { name: "otel", opentelemetry: { service: "otel-collector.observability.svc.cluster.local", port: 4317 } },
    ],
  };

  const CONFIG = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 80}], selector: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: shop}
spec: {clusterIP: 10.96.0.20, ports: [{name: tcp-db, port: 5432}, {name: tcp-replica, port: 5433}], selector: {app: db}}
---
apiVersion: v1
kind: Service
metadata: {name: otel-collector, namespace: observability}
spec: {clusterIP: 10.96.0.30, ports: [{name: grpc, port: 4317}], selector: {app: otel}}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: cache, namespace: shop}
spec:
  hosts: [cache.internal]
  location: MESH_INTERNAL
  resolution: NONE
  ports: [{number: 6379, name: tcp, protocol: TCP}]
  workloadSelector: {labels: {app: cache}}
---
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: cache-1, namespace: shop}
spec: {address: 10.0.0.1, labels: {app: cache}}
---
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: cache-2, namespace: shop}
spec: {address: 10.0.0.9, labels: {app: cache}}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: payments, namespace: shop}
spec:
  hosts: [api.payments.example]
  location: MESH_EXTERNAL
  resolution: DNS
  ports: [{number: 9000, name: tcp, protocol: TCP}]
status:
  addresses: [{host: api.payments.example, value: 240.240.0.1}, {host: api.payments.example, value: "2001:2::1"}]
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: db-special, namespace: shop}
spec:
  host: db.shop.svc.cluster.local
  workloadSelector: {matchLabels: {app: special}}
  trafficPolicy: {connectionPool: {tcp: {idleTimeout: 7s}}}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db, namespace: shop}
spec:
  hosts: [db.shop.svc.cluster.local]
  tcp:
  - match: [{sourceLabels: {version: v2}}]
    route: [{destination: {host: db.shop.svc.cluster.local, port: {number: 5433}}}]
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: traced-workload, namespace: shop}
spec:
  selector: {matchLabels: {app: traced}}
  tracing: [{providers: [{name: otel}]}]
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: traced-label, namespace: shop}
spec:
  selector: {matchLabels: {traced: "true"}}
  tracing: [{providers: [{name: otel}]}]
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: traced-namespace, namespace: traced}
spec:
  tracing: [{providers: [{name: otel}]}]
---
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: patched-workload, namespace: shop}
spec:
  workloadSelector: {labels: {app: patched}}
  configPatches:
  - applyTo: LISTENER
    match: {context: SIDECAR_OUTBOUND, listener: {name: virtualOutbound}}
    patch: {operation: MERGE, value: {perConnectionBufferLimitBytes: 111}}
---
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: newer-proxies, namespace: shop}
spec:
  configPatches:
  - applyTo: LISTENER
    match: {context: SIDECAR_OUTBOUND, proxy: {proxyVersion: '^1\\.99.*'}, listener: {portNumber: 80}}
    patch: {operation: MERGE, value: {perConnectionBufferLimitBytes: 199}}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: locked, namespace: shop}
spec:
  selector: {matchLabels: {locked: "true"}}
  action: DENY
  rules: [{from: [{source: {namespaces: [other]}}]}]
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: strict, namespace: shop}
spec:
  selector: {matchLabels: {strict: "true"}}
  mtls: {mode: STRICT}
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: port-mode, namespace: shop}
spec:
  selector: {matchLabels: {portmode: "true"}}
  portLevelMtls: {"8080": {mode: DISABLE}, "9999": {mode: STRICT}}
---
apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: {name: jwt, namespace: shop}
spec:
  selector: {matchLabels: {jwt: "true"}}
  jwtRules: [{issuer: "https://auth.example.com", jwks: '{"keys":[]}'}]
---
apiVersion: extensions.istio.io/v1alpha1
kind: WasmPlugin
metadata: {name: plugin, namespace: shop}
spec:
  selector: {matchLabels: {wasm: "true"}}
  url: oci://ghcr.io/example/plugin:v1
  phase: AUTHN
---
apiVersion: extensions.istio.io/v1alpha1
kind: WasmPlugin
metadata: {name: other-plugin, namespace: shop}
spec:
  selector: {matchLabels: {wasm: other}}
  url: oci://ghcr.io/example/other-plugin:v1
  phase: AUTHN
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {clusterIP: 10.96.0.40, ports: [{name: http, port: 80, targetPort: 8080}], selector: {app: api}}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: ingress, namespace: shop}
spec:
  workloadSelector: {labels: {ingress: "true"}}
  ingress:
  - port: {number: 9443, name: grpc, protocol: GRPC}
    captureMode: NONE
    defaultEndpoint: 127.0.0.1:9443
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: scoped, namespace: shop}
spec:
  workloadSelector: {labels: {app: scoped}}
  egress: [{hosts: [./web.shop.svc.cluster.local]}]
`;

  const dir = mkdtempSync(join(tmpdir(), "sluice-lds-cache-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  function load() {
    const file = join(dir, "mesh.yaml");
    writeFileSync(file, CONFIG);
    const loaded = loadState([file], MESH, "cluster.local");
    assert.ok(loaded.state, loaded.problems?.join("\n"));
    return loaded.state;
  }

  interface ProxyOptions {
    ip?: string;
    namespace?: string;
    labels?: Record<string, string>;
    metadata?: JsonObject;
  }

  function sidecar({ ip = "10.0.0.5", namespace = "shop", labels = { app: "a" }, metadata = {} }: ProxyOptions) {
    const parsed = parseProxy(
      create(core.NodeSchema, {
        id: `sidecar~${ip}~pod-${ip}.${namespace}~${namespace}.svc.cluster.local`,
        // As istio-agent names the node's cluster (tracers name spans after it).
        cluster: `${labels.app ?? "istio-proxy"}.${namespace}`,
        metadata: { NAMESPACE: namespace, LABELS: labels, CLUSTER_ID: "Kubernetes", ...metadata },
      }),
    );
    assert.ok(parsed.proxy, parsed.error);
    return parsed.proxy;
  }

  const isOutbound = (l: listener.Listener) => l.trafficDirection === core.TrafficDirection.OUTBOUND;
  const asJson = (listeners: readonly listener.Listener[]) =>
    listeners.map((l) => toJson(listener.ListenerSchema, l, { registry: typeRegistry }));

  const BASE = sidecar({});

  /** Proxies that each differ from BASE in one thing the outbound listeners depend on. */
  const RELEVANT: Record<string, ProxyNode> = {
    "Telemetry selecting by label": sidecar({ labels: { app: "traced" } }),
    "DestinationRule selecting by label": sidecar({ labels: { app: "special" } }),
    "VirtualService tcp match on sourceLabels": sidecar({ labels: { app: "a", version: "v2" } }),
    "own IP among headless endpoints": sidecar({ ip: "10.0.0.1" }),
    "IPv6 only": sidecar({ ip: "fd00::5" }),
    "interception TPROXY": sidecar({ metadata: { INTERCEPTION_MODE: "TPROXY" } }),
    "interception NONE": sidecar({ metadata: { INTERCEPTION_MODE: "NONE" } }),
    "DNS capture (auto-allocated addresses)": sidecar({ metadata: { DNS_CAPTURE: "true" } }),
    "another namespace": sidecar({ namespace: "other" }),
    "Sidecar selecting by label": sidecar({ labels: { app: "scoped" } }),
    IDLE_TIMEOUT: sidecar({ metadata: { IDLE_TIMEOUT: "30s" } }),
    HTTP10: sidecar({ metadata: { HTTP10: "true" } }),
    OUTBOUND_LISTENER_EXACT_BALANCE: sidecar({ metadata: { OUTBOUND_LISTENER_EXACT_BALANCE: "true" } }),
    HTTP_PROXY_PORT: sidecar({ metadata: { HTTP_PROXY_PORT: "15080" } }),
    "EnvoyFilter selecting by label": sidecar({ labels: { app: "patched" } }),
    "ISTIO_VERSION matched by an EnvoyFilter": sidecar({ metadata: { ISTIO_VERSION: "1.99.0" } }),
    "namespace tracing, one app": sidecar({ namespace: "traced", labels: { app: "x" } }),
    "namespace tracing, another app (the tracer's service name)": sidecar({
      namespace: "traced",
      labels: { app: "y" },
    }),
  };

  const isInbound = (l: listener.Listener) => !isOutbound(l);
  /**
   * The proxy's listeners as LDS sends them and the caches keep them (a sidecar's packed), those of
   * one direction: what the sharing tests compare by identity.
   */
  const sent = (push: MeshPush, p: ProxyNode, registry: Parameters<typeof buildListeners>[2], outbound: boolean) =>
    listenerResources(push, p, registry, cache).filter(
      (l) => isOutbound(unpacked(listener.ListenerSchema, l)) === outbound,
    );

  /** A pod of the api workload, which a Service selects: it has inbound ports. */
  const API = sidecar({ ip: "10.0.1.1", labels: { app: "api" } });

  /** Pods of the api workload that each differ from API in one thing its inbound listeners depend on. */
  const INBOUND_RELEVANT: Record<string, ProxyNode> = {
    "AuthorizationPolicy selecting by label": sidecar({ ip: "10.0.1.1", labels: { app: "api", locked: "true" } }),
    "PeerAuthentication selecting by label": sidecar({ ip: "10.0.1.1", labels: { app: "api", strict: "true" } }),
    "port-level PeerAuthentication": sidecar({ ip: "10.0.1.1", labels: { app: "api", portmode: "true" } }),
    "RequestAuthentication selecting by label": sidecar({ ip: "10.0.1.1", labels: { app: "api", jwt: "true" } }),
    "WasmPlugin selecting by label": sidecar({ ip: "10.0.1.1", labels: { app: "api", wasm: "true" } }),
    "another WasmPlugin selecting by label": sidecar({ ip: "10.0.1.1", labels: { app: "api", wasm: "other" } }),
    "Sidecar ingress bound to the pod, one pod": sidecar({ ip: "10.0.1.3", labels: { app: "api", ingress: "true" } }),
    "Sidecar ingress bound to the pod, another pod": sidecar({
      ip: "10.0.1.4",
      labels: { app: "api", ingress: "true" },
    }),
    // Interception NONE without Sidecar ingress: the application owns its ports, no inbound listeners.
    "interception NONE": sidecar({ ip: "10.0.1.5", labels: { app: "api" }, metadata: { INTERCEPTION_MODE: "NONE" } }),
    "another workload's service ports": sidecar({ ip: "10.0.1.1", labels: { app: "web" } }),
    "Telemetry selecting by label": sidecar({ ip: "10.0.1.1", labels: { app: "api", traced: "true" } }),
    INBOUND_LISTENER_EXACT_BALANCE: sidecar({
      ip: "10.0.1.1",
      labels: { app: "api" },
      metadata: { INBOUND_LISTENER_EXACT_BALANCE: "true" },
    }),
  };

  /** Each proxy's listeners built with the caches as the proxies before it left them, then alone. */
  function servedThenAlone(push: MeshPush, registry: Parameters<typeof buildListeners>[2], proxies: ProxyNode[]) {
    cache.clear();
    const served = proxies.map((p) => buildListeners(push, p, registry, cache));
    const servedJson = served.map(asJson);
    const alone = proxies.map((p) => {
      cache.clear();
      return asJson(buildListeners(push, p, registry, cache));
    });
    return { served, servedJson, alone };
  }

  test("every proxy class gets the listeners a build for it alone gives, in any serving order", () => {
    const { push, registry } = load();
    // Pods without service ports: only their passthrough chains follow the workload's and port-level mTLS modes.
    const withoutPorts = [
      sidecar({ labels: { app: "a", strict: "true" } }),
      sidecar({ labels: { app: "a", portmode: "true" } }),
    ];
    const proxies = [BASE, ...Object.values(RELEVANT), API, ...Object.values(INBOUND_RELEVANT), ...withoutPorts];
    for (const order of [proxies, [...proxies].reverse()]) {
      const { servedJson, alone } = servedThenAlone(push, registry, order);
      for (const [i, p] of order.entries()) {
        assert.deepEqual(servedJson[i], alone[i], `${p.id} ${JSON.stringify(p.labels)}`);
      }
    }
    // Each difference shows in the outbound listeners, so a key that missed it would have failed above.
    const outboundAlone = (p: ProxyNode) => {
      cache.clear();
      return asJson(buildListeners(push, p, registry, cache).filter(isOutbound));
    };
    const base = outboundAlone(BASE);
    for (const [name, p] of Object.entries(RELEVANT)) assert.notDeepEqual(outboundAlone(p), base, name);
    const inboundAlone = (p: ProxyNode) => {
      cache.clear();
      return asJson(buildListeners(push, p, registry, cache).filter(isInbound));
    };
    const api = inboundAlone(API);
    const inbound = Object.entries(INBOUND_RELEVANT).map(([name, p]) => [name, inboundAlone(p)] as const);
    for (const [name, listeners] of inbound) assert.notDeepEqual(listeners, api, name);
    for (const p of withoutPorts) assert.notDeepEqual(inboundAlone(p), inboundAlone(BASE), JSON.stringify(p.labels));
    // Pods with listeners bound to their own IPs differ from each other too, and so do the two plugins.
    const byName = new Map(inbound);
    assert.notDeepEqual(
      byName.get("WasmPlugin selecting by label"),
      byName.get("another WasmPlugin selecting by label"),
    );
    assert.notDeepEqual(
      byName.get("Sidecar ingress bound to the pod, one pod"),
      byName.get("Sidecar ingress bound to the pod, another pod"),
    );
  });

  test("proxies differing only in pod IP and unselected labels share the outbound listener objects", () => {
    const { push, registry } = load();
    cache.clear();
    const a = sent(push, BASE, registry, true);
    const b = sent(push, sidecar({ ip: "10.0.0.6", labels: { app: "b", version: "v1" } }), registry, true);
    assert.ok(a.length > 3);
    assert.deepEqual(
      b.map((l, i) => l === a[i]),
      a.map(() => true),
    );
    // Under namespace-wide tracing the app label names the tracer's service: no sharing across apps,
    // sharing within one.
    const x1 = sent(push, sidecar({ namespace: "traced", labels: { app: "x" } }), registry, true);
    const x2 = sent(push, sidecar({ ip: "10.0.0.7", namespace: "traced", labels: { app: "x" } }), registry, true);
    const y = sent(push, sidecar({ namespace: "traced", labels: { app: "y" } }), registry, true);
    const virtual = (ls: readonly { name: string }[]) => ls.find((l) => l.name === "0.0.0.0_80");
    assert.ok(virtual(x1));
    assert.equal(virtual(x1), virtual(x2));
    assert.notEqual(virtual(x1), virtual(y));
  });

  test("the pods of one workload share their inbound listener objects", () => {
    const { push, registry } = load();
    cache.clear();
    const one = sent(push, API, registry, false);
    const other = sent(push, sidecar({ ip: "10.0.1.9", labels: { app: "api", pod: "x" } }), registry, false);
    assert.ok(one.some((l) => l.name === "virtualInbound"));
    assert.deepEqual(
      other.map((l, i) => l === one[i]),
      one.map(() => true),
    );
    // At rest (the server quiet) the per-workload listeners are dropped; a later pod rebuilds them, alike.
    const outbound = buildListeners(push, API, registry, cache).filter(isOutbound);
    const kept = cache
      .stats()
      .resources.filter((r) => r.entries > 0)
      .map((r) => r.name);
    cache.dropAtRest();
    const dropped = cache
      .stats()
      .resources.filter((r) => r.entries === 0)
      .map((r) => r.name);
    assert.ok(kept.includes("lds/sidecarInbound") && kept.includes("lds/sidecarOutbound"));
    assert.deepEqual(dropped.sort(), ["lds/sidecarInbound", "lds/sidecarOutbound"]);
    const later = buildListeners(push, API, registry, cache);
    assert.notEqual(sent(push, API, registry, false)[0], one[0]);
    assert.deepEqual(asJson(later.filter(isInbound)), asJson(one.map((l) => unpacked(listener.ListenerSchema, l))));
    assert.deepEqual(asJson(later.filter(isOutbound)), asJson(outbound));
  });

  test("inbound port conflicts are reported under each proxy's id, also when the listeners are shared", () => {
    const state = load();
    const source = new MemorySource(state.store, "file");
    const service = (name: string, protocolPort: string): ConfigObject => ({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: "shop" },
      spec: { ports: [{ name: protocolPort, port: 81, targetPort: 9000 }], selector: { app: "clash" } },
    });
    for (const object of [service("clash-http", "http"), service("clash-tcp", "tcp")]) {
      assert.deepEqual(source.apply(object).errors, []);
    }
    const push = storePush(state.store, state.registry, MESH, "cluster.local", state.push);
    cache.clear();
    const a = sidecar({ ip: "10.0.2.1", labels: { app: "clash" } });
    const b = sidecar({ ip: "10.0.2.2", labels: { app: "clash" } });
    const inboundA = sent(push, a, state.registry, false);
    const inboundB = sent(push, b, state.registry, false);
    assert.equal(inboundA[0], inboundB[0]);
    const cases = push.status.toJSON().pilot_conflict_inbound_listener ?? {};
    assert.deepEqual(Object.keys(cases).sort(), [a.id, b.id].sort());
  });

  test("EnvoyFilter patches apply per proxy on copies: the shared listeners stay unpatched", () => {
    const { push, registry } = load();
    cache.clear();
    const patched = buildListeners(push, sidecar({ labels: { app: "patched" } }), registry, cache);
    const base = buildListeners(push, BASE, registry, cache);
    const named = (ls: listener.Listener[], name: string) => ls.find((l) => l.name === name);
    assert.equal(named(patched, "virtualOutbound")?.perConnectionBufferLimitBytes, 111);
    assert.equal(named(base, "virtualOutbound")?.perConnectionBufferLimitBytes, undefined);
    // Listeners no patch touched are the shared objects themselves.
    assert.equal(named(patched, "0.0.0.0_80"), named(base, "0.0.0.0_80"));
    const newer = buildListeners(push, sidecar({ metadata: { ISTIO_VERSION: "1.99.0" } }), registry, cache);
    assert.equal(named(newer, "0.0.0.0_80")?.perConnectionBufferLimitBytes, 199);
    assert.equal(
      named(buildListeners(push, BASE, registry, cache), "0.0.0.0_80")?.perConnectionBufferLimitBytes,
      undefined,
    );
  });

  test("a push reuses the outbound listeners when their inputs keep their identity, and rebuilds on a change", () => {
    const state = load();
    const source = new MemorySource(state.store, "file");
    const next = (previous: MeshPush, objects: ConfigObject[] = []) => {
      for (const object of objects) assert.deepEqual(source.apply(object).errors, []);
      return storePush(state.store, state.registry, MESH, "cluster.local", previous);
    };
    cache.clear();
    const first = sent(state.push, BASE, state.registry, true);
    const unchanged = next(state.push);
    assert.deepEqual(
      sent(unchanged, BASE, state.registry, true).map((l, i) => l === first[i]),
      first.map(() => true),
    );
    const telemetry: ConfigObject = {
      apiVersion: "telemetry.istio.io/v1",
      kind: "Telemetry",
      metadata: { name: "shop-tracing", namespace: "shop" },
      spec: { tracing: [{ providers: [{ name: "otel" }] }] },
    };
    const traced = next(unchanged, [telemetry]);
    const web = sent(traced, BASE, state.registry, true).find((l) => l.name === "0.0.0.0_80");
    const after = buildListeners(traced, BASE, state.registry, cache);
    assert.notEqual(
      web,
      first.find((l) => l.name === "0.0.0.0_80"),
    );
    cache.clear();
    assert.deepEqual(asJson(after), asJson(buildListeners(traced, BASE, state.registry, cache)));
  });
});

describe("golden", () => {
  // The LDS the micro benchmarks time (bench/templates-bench.ts, 100 services) stays the same bytes while
  // listener generation is optimised: a SHA-256 over the response's encoded listeners, recorded from the
  // code before the optimisation, and every listener within Envoy's constraints.
  // Each case runs with the xDS cache on and off (test/support/cache-modes.ts).
  // After a deliberate change of the generated config, print the new digests with UPDATE_GOLDEN=1.
  const SERVICES = 100;

  const GOLDEN: Record<string, string> = {
    empty: "87573ec3d899c8ad6e22d37e1a41334b3c6d0df93dd55673318adafb14e5dd82",
    http: "dd0912cffc4c75cdf527003d3cf3d0e751918a7fc9accee68fe395573fb1df7c",
    tcp: "e483c570c9e1ea93a3227fc0ec0991aa86cc448328c9c81f8660cd7a6f55cafc",
    "telemetry-api": "833f9b7ce7d27fafb2e1808daeb8e88a2e2b47eeee039456761559179a23e4e2",
    gateways: "9154e516643945f376cb0f8b92fab969d601750214e1c9124dc6e3c7f2416ec7",
  };

  for (const [name, golden] of Object.entries(GOLDEN)) {
    const t = template(name);
    for (const mode of CACHE_MODES) {
      test(`${name} (${t.proxy}, ${SERVICES} services, ${mode.name}): LDS bytes unchanged`, () => {
        const proxy = benchProxy(t.proxy);
        const objects = t.render({ services: SERVICES, instances: SERVICES });
        const { lds } = cacheModeDigests(name, objects, mode, (push, endpoints, cache) => ({
          lds: buildListeners(push, proxy, endpoints, cache),
        }));
        if (process.env.UPDATE_GOLDEN) console.log(`  "${name}": "${lds}",`);
        assert.equal(lds, golden);
      });
    }
  }
});
