// Calls through a sidecar's generated config: traffic splits and header matches of a VirtualService,
// PERMISSIVE vs STRICT inbound, and what unknown hosts reach under REGISTRY_ONLY and ALLOW_ANY.
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadMeshConfig } from "../../src/config/index.ts";
import { generate, SIDECAR } from "./harness.ts";
import { type Call, simulate } from "./simulate.ts";

const SERVICE = `
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {clusterIP: 10.96.0.40, ports: [{name: http, port: 80, targetPort: 8080}], selector: {app: api}}
`;
const ROUTING = `
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: api, namespace: shop}
spec:
  hosts: [api]
  http:
  - name: testers
    match: [{headers: {x-user: {exact: tester}}}]
    route: [{destination: {host: api, subset: v2}}]
  - name: split
    route:
    - {destination: {host: api, subset: v1}, weight: 90}
    - {destination: {host: api, subset: v2}, weight: 10}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: api, namespace: shop}
spec:
  host: api
  subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]
`;

const toApi: Call = {
  mode: "outbound",
  protocol: "http",
  address: "10.96.0.40",
  port: 80,
  host: "api",
  path: "/items",
};

test("without a VirtualService the service's default cluster takes the call", () => {
  const result = simulate(generate(SERVICE, SIDECAR), toApi);
  assert.deepEqual(
    {
      listener: result.listener,
      routeConfig: result.routeConfig,
      virtualHost: result.virtualHost,
      cluster: result.cluster,
    },
    {
      listener: "0.0.0.0_80",
      routeConfig: "80",
      virtualHost: "api.shop.svc.cluster.local:80",
      cluster: "outbound|80||api.shop.svc.cluster.local",
    },
  );
  assert.equal(result.error, undefined);
});

test("a 90/10 split is the route's weighted clusters", () => {
  const result = simulate(generate(SERVICE + ROUTING, SIDECAR), toApi);
  assert.equal(result.error, undefined);
  assert.equal(result.route, "split");
  assert.equal(result.cluster, undefined);
  assert.deepEqual(result.weightedClusters, [
    { name: "outbound|80|v1|api.shop.svc.cluster.local", weight: 90 },
    { name: "outbound|80|v2|api.shop.svc.cluster.local", weight: 10 },
  ]);
});

test("a header match routes to the subset; the same call by its FQDN matches too", () => {
  const config = generate(SERVICE + ROUTING, SIDECAR);
  for (const host of ["api", "api.shop.svc.cluster.local", "api.shop:80"]) {
    const result = simulate(config, { ...toApi, host, headers: { "X-User": "tester" } });
    assert.equal(result.error, undefined, host);
    assert.equal(result.route, "testers", host);
    assert.equal(result.cluster, "outbound|80|v2|api.shop.svc.cluster.local", host);
  }
  // Another value of the header falls through to the split.
  assert.equal(simulate(config, { ...toApi, headers: { "x-user": "someone" } }).route, "split");
});

// An HTTP call to the workload's target port, captured inbound.
const inbound: Call = { mode: "inbound", protocol: "http", address: "10.0.0.7", port: 8080, host: "api", path: "/" };
// The same call from a sidecar client: mutual TLS with Istio's ALPN.
const mtls: Call = {
  ...inbound,
  tls: true,
  alpn: ["istio-http/1.1", "istio"],
  sni: "outbound_.80_._.api.shop.svc.cluster.local",
};

function peerAuthentication(mode: string): string {
  return `
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: shop}
spec: {mtls: {mode: ${mode}}}
`;
}

test("PERMISSIVE inbound: plaintext and mutual TLS both reach the port's chain and its inbound cluster", () => {
  const config = generate(SERVICE + peerAuthentication("PERMISSIVE"), SIDECAR);
  for (const call of [inbound, mtls]) {
    const result = simulate(config, call);
    assert.equal(result.error, undefined, JSON.stringify(call));
    assert.equal(result.listener, "virtualInbound");
    assert.equal(result.filterChain, "0.0.0.0_8080");
    assert.equal(result.cluster, "inbound|8080||");
  }
});

test("STRICT inbound: plaintext matches no chain, mutual TLS still does", () => {
  const config = generate(SERVICE + peerAuthentication("STRICT"), SIDECAR);
  const plain = simulate(config, inbound);
  assert.equal(plain.listener, "virtualInbound");
  assert.equal(plain.filterChain, undefined);
  assert.equal(plain.error, "no filter chain matched");
  const secured = simulate(config, mtls);
  assert.equal(secured.filterChain, "0.0.0.0_8080");
  assert.equal(secured.cluster, "inbound|8080||");
});

test("STRICT inbound: a plaintext call to a port no service names is refused too", () => {
  const config = generate(SERVICE + peerAuthentication("STRICT"), SIDECAR);
  assert.equal(simulate(config, { ...inbound, port: 9000 }).filterChain, undefined);
  const permissive = simulate(generate(SERVICE, SIDECAR), { ...inbound, port: 9000, protocol: "tcp" });
  assert.equal(permissive.tcpProxyCluster, "InboundPassthroughCluster");
});

const unknownHttp: Call = {
  mode: "outbound",
  protocol: "http",
  address: "93.184.216.34",
  port: 80,
  host: "example.com",
};
const unknownTcp: Call = { mode: "outbound", protocol: "tcp", address: "93.184.216.34", port: 5432 };

test("ALLOW_ANY: unknown hosts pass through, by HTTP route and by TCP", () => {
  const config = generate(SERVICE, SIDECAR);
  const http = simulate(config, unknownHttp);
  assert.equal(http.listener, "0.0.0.0_80");
  assert.equal(http.virtualHost, "allow_any");
  assert.equal(http.cluster, "PassthroughCluster");
  const tcp = simulate(config, unknownTcp);
  assert.equal(tcp.listener, "virtualOutbound");
  assert.equal(tcp.tcpProxyCluster, "PassthroughCluster");
});

test("REGISTRY_ONLY: unknown hosts are blackholed, known ones still routed", () => {
  const mesh = loadMeshConfig("outboundTrafficPolicy: {mode: REGISTRY_ONLY}").mesh;
  const config = generate(SERVICE, SIDECAR, mesh);
  const http = simulate(config, unknownHttp);
  assert.equal(http.listener, "0.0.0.0_80");
  assert.equal(http.virtualHost, "block_all");
  assert.equal(http.cluster, undefined, "blocked by a direct response, not a cluster");
  assert.equal(http.routeMatch?.action.case, "directResponse");
  const tcp = simulate(config, unknownTcp);
  assert.equal(tcp.tcpProxyCluster, "BlackHoleCluster");
  assert.equal(simulate(config, toApi).cluster, "outbound|80||api.shop.svc.cluster.local");
});

const MORE = `
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec:
  clusterIP: 10.96.0.40
  selector: {app: api}
  ports: [{name: http, port: 80, targetPort: 8080}, {name: tcp-db, port: 5432}, {port: 9000}]
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: shop}
spec:
  hosts: [example.com]
  location: MESH_EXTERNAL
  resolution: DNS
  ports: [{number: 80, name: http, protocol: HTTP}, {number: 443, name: tls, protocol: TLS}]
`;

test("REGISTRY_ONLY: a ServiceEntry's host is reachable by Host and by SNI, other names are not", () => {
  const mesh = loadMeshConfig("outboundTrafficPolicy: {mode: REGISTRY_ONLY}").mesh;
  const config = generate(MORE, SIDECAR, mesh);
  assert.equal(simulate(config, { ...unknownHttp, host: "example.com" }).cluster, "outbound|80||example.com");
  const tls: Call = {
    mode: "outbound",
    protocol: "tcp",
    address: "93.184.216.34",
    port: 443,
    tls: true,
    sni: "example.com",
  };
  assert.equal(simulate(config, tls).tcpProxyCluster, "outbound|443||example.com");
  assert.equal(simulate(config, { ...tls, sni: "other.com" }).tcpProxyCluster, "BlackHoleCluster");
});

test("a TCP port and an unnamed port: TCP proxied, and HTTP sniffed on the unnamed one", () => {
  const config = generate(MORE, SIDECAR);
  const tcp: Call = { mode: "outbound", protocol: "tcp", address: "10.96.0.40", port: 5432 };
  assert.equal(simulate(config, tcp).listener, "10.96.0.40_5432");
  assert.equal(simulate(config, tcp).tcpProxyCluster, "outbound|5432||api.shop.svc.cluster.local");
  const sniffedTcp = simulate(config, { ...tcp, port: 9000 });
  assert.equal(sniffedTcp.tcpProxyCluster, "outbound|9000||api.shop.svc.cluster.local");
  const sniffedHttp = simulate(config, { ...tcp, port: 9000, protocol: "http", host: "api:9000" });
  assert.equal(sniffedHttp.routeConfig, "api.shop.svc.cluster.local:9000");
  assert.equal(sniffedHttp.cluster, "outbound|9000||api.shop.svc.cluster.local");
});

test("port-level PERMISSIVE under a STRICT workload policy: plaintext only on that target port", () => {
  const policy = `
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: api, namespace: shop}
spec: {selector: {matchLabels: {app: api}}, mtls: {mode: STRICT}, portLevelMtls: {8080: {mode: PERMISSIVE}}}
`;
  const config = generate(MORE + policy, SIDECAR);
  assert.equal(simulate(config, inbound).cluster, "inbound|8080||");
  assert.equal(simulate(config, { ...inbound, port: 5432, protocol: "tcp" }).error, "no filter chain matched");
  assert.equal(simulate(config, { ...mtls, port: 5432, protocol: "tcp" }).tcpProxyCluster, "inbound|5432||");
});
