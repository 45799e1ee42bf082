// Calls through the dynamic forward proxy: a DYNAMIC_DNS wildcard ServiceEntry by Host and by SNI, and
// unknown plaintext HTTP under the mesh's ALLOW_ANY_DYNAMIC_DNS outbound traffic policy.
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadMeshConfig } from "../../src/config/index.ts";
import { generate, SIDECAR } from "./harness.ts";
import { simulate } from "./simulate.ts";

const WILDCARD = `
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: wildcard, namespace: shop}
spec:
  hosts: ["*.example.com"]
  location: MESH_EXTERNAL
  resolution: DYNAMIC_DNS
  ports: [{number: 80, name: http, protocol: HTTP}, {number: 443, name: tls, protocol: TLS}]
`;

test("DYNAMIC_DNS: any name under the wildcard reaches its forward proxy cluster, by Host or by SNI", () => {
  const config = generate(WILDCARD, SIDECAR);
  const http = simulate(config, {
    mode: "outbound",
    protocol: "http",
    address: "93.184.216.34",
    port: 80,
    host: "www.example.com",
    path: "/",
  });
  assert.equal(http.error, undefined);
  assert.equal(http.virtualHost, "*.example.com:80");
  assert.equal(http.cluster, "outbound|80||*.example.com");
  const tls = simulate(config, {
    mode: "outbound",
    protocol: "tcp",
    address: "93.184.216.34",
    port: 443,
    tls: true,
    sni: "api.example.com",
  });
  assert.equal(tls.error, undefined);
  assert.equal(tls.listener, "0.0.0.0_443");
  assert.equal(tls.tcpProxyCluster, "outbound|443||*.example.com");
  assert.ok(config.clusters.some((c) => c.name === "outbound|443||*.example.com"));
});

test("ALLOW_ANY_DYNAMIC_DNS: plaintext HTTP to no known listener goes to AllowAnyDynamicDNSCluster, other TCP passes through", () => {
  const mesh = loadMeshConfig("outboundTrafficPolicy: {mode: ALLOW_ANY_DYNAMIC_DNS}").mesh;
  const config = generate("", SIDECAR, mesh);
  const http = simulate(config, {
    mode: "outbound",
    protocol: "http",
    address: "1.2.3.4",
    port: 8081,
    host: "unknown.example.org",
    path: "/",
  });
  assert.equal(http.error, undefined);
  assert.equal(http.listener, "virtualOutbound");
  assert.equal(http.filterChain, "virtualOutbound-catchall-tcp-http");
  assert.equal(http.cluster, "AllowAnyDynamicDNSCluster");
  const tcp = simulate(config, { mode: "outbound", protocol: "tcp", address: "1.2.3.4", port: 5432 });
  assert.equal(tcp.tcpProxyCluster, "PassthroughCluster");
  assert.ok(config.clusters.some((c) => c.name === "AllowAnyDynamicDNSCluster"));
});
