// HTTP/3 on an ingress gateway (PILOT_ENABLE_QUIC_LISTENERS): a TLS-terminated HTTPS server whose Service
// also exposes its port over UDP gets a QUIC listener `udp_0.0.0.0_<port>` mirroring its HTTPS chain, and
// its routes advertise HTTP/3 with `alt-svc`. With the flag off (Istio's default) nothing of it exists and
// the rest of the config is the same. translate reads the flag from the environment, as istiod does.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type JsonValue, toJson } from "@bufbuild/protobuf";
import { cluster, hcm, listener, registry, route, unpackAny } from "../../src/api/index.ts";
import { GATEWAY, generate } from "./harness.ts";
import { type Call, type ProxyConfig, simulate } from "./simulate.ts";

const CONFIG = `
apiVersion: v1
kind: Service
metadata: {name: ingressgateway, namespace: istio-system}
spec:
  clusterIP: 10.96.0.10
  selector: {istio: ingressgateway}
  ports:
  - {name: http, port: 80}
  - {name: https, port: 443}
  - {name: http3, port: 443, protocol: UDP}
  - {name: tls, port: 9443}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {clusterIP: 10.96.0.40, ports: [{name: http, port: 80}], selector: {app: api}}
---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: istio-system}
spec:
  selector: {istio: ingressgateway}
  servers:
  - port: {number: 80, name: http, protocol: HTTP}
    hosts: [api.example.com]
  - port: {number: 443, name: https, protocol: HTTPS}
    hosts: [api.example.com]
    tls: {mode: SIMPLE, credentialName: api-cert}
  - port: {number: 9443, name: tls, protocol: HTTPS}
    hosts: [legacy.example.com]
    tls: {mode: PASSTHROUGH}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: api, namespace: shop}
spec:
  hosts: [api.example.com]
  gateways: [istio-system/edge]
  http:
  - match: [{uri: {prefix: /v2}}]
    headers: {response: {add: {x-version: v2}}}
    route: [{destination: {host: api.shop.svc.cluster.local, port: {number: 80}}}]
  - route: [{destination: {host: api.shop.svc.cluster.local, port: {number: 80}}}]
`;

function generateWith(flag: string | undefined, yaml = CONFIG): ProxyConfig {
  const saved = process.env.PILOT_ENABLE_QUIC_LISTENERS;
  if (flag === undefined) delete process.env.PILOT_ENABLE_QUIC_LISTENERS;
  else process.env.PILOT_ENABLE_QUIC_LISTENERS = flag;
  try {
    return generate(yaml, GATEWAY);
  } finally {
    if (saved === undefined) delete process.env.PILOT_ENABLE_QUIC_LISTENERS;
    else process.env.PILOT_ENABLE_QUIC_LISTENERS = saved;
  }
}

const call = (quic: boolean, path = "/"): Call => ({
  mode: "direct",
  protocol: "http",
  address: "10.0.0.9",
  port: 443,
  tls: true,
  quic,
  sni: "api.example.com",
  alpn: quic ? ["h3"] : ["h2", "http/1.1"],
  host: "api.example.com",
  path,
});

function altSvc(r: route.Route): string[] {
  return r.responseHeadersToAdd.filter((h) => h.header?.key === "alt-svc").map((h) => h.header?.value ?? "");
}

/** The config as JSON, without what QUIC adds: its listeners and the alt-svc response headers. */
function withoutQuic(config: ProxyConfig): JsonValue {
  const routes = config.routes.map((rc) => {
    const copy = structuredClone(rc);
    for (const vh of copy.virtualHosts) {
      for (const r of vh.routes)
        r.responseHeadersToAdd = r.responseHeadersToAdd.filter((h) => h.header?.key !== "alt-svc");
    }
    return toJson(route.RouteConfigurationSchema, copy, { registry });
  });
  return {
    listeners: config.listeners
      .filter((l) => !l.name.startsWith("udp_"))
      .map((l) => toJson(listener.ListenerSchema, l, { registry })),
    routes,
    clusters: config.clusters.map((c) => toJson(cluster.ClusterSchema, c, { registry })),
  };
}

test("flag on: HTTP/3 reaches the same route config and service as HTTPS, over the UDP listener", () => {
  const config = generateWith("true");
  const h3 = simulate(config, call(true));
  assert.equal(h3.error, undefined);
  assert.equal(h3.listener, "udp_0.0.0.0_443");
  assert.equal(h3.routeConfig, "https.443.https.edge.istio-system");
  assert.equal(h3.cluster, "outbound|80||api.shop.svc.cluster.local");
  const h2 = simulate(config, call(false));
  assert.equal(h2.listener, "0.0.0.0_443");
  assert.equal(h2.routeConfig, h3.routeConfig);

  const udp = config.listeners.find((l) => l.name === "udp_0.0.0.0_443");
  assert.ok(udp);
  const manager = udp.filterChains[0].filters[0];
  assert.equal(manager.configType.case, "typedConfig");
  const parsed =
    manager.configType.case === "typedConfig" && unpackAny(manager.configType.value, hcm.HttpConnectionManagerSchema);
  assert.ok(parsed);
  assert.equal(parsed.codecType, hcm.HttpConnectionManager_CodecType.HTTP3);
  assert.equal(udp.filterChains[0].transportSocket?.name, "envoy.transport_sockets.quic");
  // Only the HTTPS port: plain HTTP and passthrough servers have no QUIC listener.
  assert.deepEqual(
    config.listeners.filter((l) => l.name.startsWith("udp_")).map((l) => l.name),
    ["udp_0.0.0.0_443"],
  );
});

test("flag on: the HTTPS server's routes advertise HTTP/3 on its port; the plain HTTP server's do not", () => {
  const config = generateWith("true");
  const https = config.routes.find((r) => r.name === "https.443.https.edge.istio-system");
  assert.ok(https);
  const routes = https.virtualHosts.flatMap((vh) => vh.routes);
  assert.equal(routes.length, 2);
  for (const r of routes) assert.deepEqual(altSvc(r), ['h3=":443"; ma=86400']);
  // Appended after the VirtualService's own response headers.
  assert.deepEqual(
    routes[0].responseHeadersToAdd.map((h) => h.header?.key),
    ["x-version", "alt-svc"],
  );
  const http = config.routes.find((r) => r.name === "http.80");
  assert.ok(http);
  for (const r of http.virtualHosts.flatMap((vh) => vh.routes)) assert.deepEqual(altSvc(r), []);
});

test("flag off (default) or false: no QUIC listener, no alt-svc, and otherwise the same config", () => {
  const off = generateWith(undefined);
  assert.deepEqual(generateWith("false"), off);
  assert.ok(!off.listeners.some((l) => l.name.startsWith("udp_")));
  for (const rc of off.routes) {
    for (const r of rc.virtualHosts.flatMap((vh) => vh.routes)) assert.deepEqual(altSvc(r), []);
  }
  assert.equal(simulate(off, call(true)).error, "no listener matched");
  assert.equal(simulate(off, call(false)).cluster, "outbound|80||api.shop.svc.cluster.local");
  assert.deepEqual(withoutQuic(generateWith("true")), withoutQuic(off));
});

test("flag on without the port exposed over UDP by the gateway's Service: no QUIC listener", () => {
  const config = generateWith("true", CONFIG.replace("  - {name: http3, port: 443, protocol: UDP}\n", ""));
  assert.ok(CONFIG.includes("protocol: UDP"));
  assert.ok(!config.listeners.some((l) => l.name.startsWith("udp_")));
});
