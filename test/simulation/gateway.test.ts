// Calls into an ingress gateway: chains chosen by SNI, TLS passed through to a service by a VirtualService's
// tls route, or terminated (SIMPLE) and routed by the server's HTTP route config.
import assert from "node:assert/strict";
import { test } from "node:test";
import { GATEWAY, generate } from "./harness.ts";
import { type Call, simulate } from "./simulate.ts";

const SERVICES = `
apiVersion: v1
kind: Service
metadata: {name: ingressgateway, namespace: istio-system}
spec: {clusterIP: 10.96.0.10, ports: [{name: https, port: 443}, {name: tls, port: 9443}], selector: {istio: ingressgateway}}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {clusterIP: 10.96.0.40, ports: [{name: http, port: 80}], selector: {app: api}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.96.0.42, ports: [{name: http, port: 80}], selector: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: legacy, namespace: shop}
spec: {clusterIP: 10.96.0.41, ports: [{name: https, port: 443}], selector: {app: legacy}}
---
apiVersion: v1
kind: Service
metadata: {name: billing, namespace: shop}
spec: {clusterIP: 10.96.0.43, ports: [{name: https, port: 443}], selector: {app: billing}}
`;

function httpsServer(name: string, host: string): string {
  return `  - port: {number: 443, name: ${name}, protocol: HTTPS}
    hosts: [${host}]
    tls: {mode: SIMPLE, credentialName: ${name}-cert}
`;
}

function httpRoute(name: string, host: string, service: string): string {
  return `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ${name}, namespace: shop}
spec:
  hosts: [${host}]
  gateways: [istio-system/edge]
  http: [{route: [{destination: {host: ${service}.shop.svc.cluster.local, port: {number: 80}}}]}]
`;
}

const SIMPLE = `${SERVICES}---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: istio-system}
spec:
  selector: {istio: ingressgateway}
  servers:
${httpsServer("api", "api.example.com")}${httpsServer("web", "'*.web.example.com'")}${httpRoute("api", "api.example.com", "api")}${httpRoute("web", "'*.web.example.com'", "web")}`;

const PASSTHROUGH = `${SERVICES}---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: istio-system}
spec:
  selector: {istio: ingressgateway}
  servers:
  - port: {number: 9443, name: tls, protocol: TLS}
    hosts: [legacy.example.com, billing.example.com]
    tls: {mode: PASSTHROUGH}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: passthrough, namespace: shop}
spec:
  hosts: [legacy.example.com, billing.example.com]
  gateways: [istio-system/edge]
  tls:
  - match: [{sniHosts: [legacy.example.com], port: 9443}]
    route: [{destination: {host: legacy.shop.svc.cluster.local, port: {number: 443}}}]
  - match: [{sniHosts: [billing.example.com], port: 9443}]
    route: [{destination: {host: billing.shop.svc.cluster.local, port: {number: 443}}}]
`;

const https = (sni: string): Call => ({
  mode: "direct",
  protocol: "http",
  address: "10.0.0.9",
  port: 443,
  tls: true,
  sni,
  alpn: ["h2", "http/1.1"],
  host: sni,
  path: "/",
});

test("SIMPLE: the SNI picks the server's chain and its route config; the Host picks the service", () => {
  const config = generate(SIMPLE, GATEWAY);
  const api = simulate(config, https("api.example.com"));
  assert.equal(api.error, undefined);
  assert.equal(api.listener, "0.0.0.0_443");
  assert.equal(api.routeConfig, "https.443.api.edge.istio-system");
  assert.equal(api.cluster, "outbound|80||api.shop.svc.cluster.local");
  // A wildcard server name takes the subdomains it covers.
  const web = simulate(config, https("shop.web.example.com"));
  assert.equal(web.error, undefined);
  assert.equal(web.routeConfig, "https.443.web.edge.istio-system");
  assert.equal(web.cluster, "outbound|80||web.shop.svc.cluster.local");
  // No server for the name: no chain.
  assert.equal(simulate(config, https("other.example.com")).error, "no filter chain matched");
});

test("PASSTHROUGH: the SNI picks the tls route's service, TLS untouched", () => {
  const config = generate(PASSTHROUGH, GATEWAY);
  const tls = (sni: string): Call => ({
    mode: "direct",
    protocol: "tcp",
    address: "10.0.0.9",
    port: 9443,
    tls: true,
    sni,
  });
  const legacy = simulate(config, tls("legacy.example.com"));
  assert.equal(legacy.listener, "0.0.0.0_9443");
  assert.equal(legacy.tcpProxyCluster, "outbound|443||legacy.shop.svc.cluster.local");
  assert.equal(legacy.error, undefined);
  assert.equal(
    simulate(config, tls("billing.example.com")).tcpProxyCluster,
    "outbound|443||billing.shop.svc.cluster.local",
  );
  assert.equal(simulate(config, tls("unknown.example.com")).tcpProxyCluster, undefined);
});

test("PASSTHROUGH and SIMPLE servers on one port share one listener, told apart by SNI", () => {
  const MIXED = `${SERVICES}---
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: edge, namespace: istio-system}
spec:
  selector: {istio: ingressgateway}
  servers:
${httpsServer("api", "api.example.com")}  - port: {number: 443, name: tls, protocol: TLS}
    hosts: [legacy.example.com]
    tls: {mode: PASSTHROUGH}
${httpRoute("api", "api.example.com", "api")}---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: legacy, namespace: shop}
spec:
  hosts: [legacy.example.com]
  gateways: [istio-system/edge]
  tls:
  - match: [{sniHosts: [legacy.example.com], port: 443}]
    route: [{destination: {host: legacy.shop.svc.cluster.local, port: {number: 443}}}]
`;
  const config = generate(MIXED, GATEWAY);
  assert.equal(simulate(config, https("api.example.com")).cluster, "outbound|80||api.shop.svc.cluster.local");
  const legacy = simulate(config, { ...https("legacy.example.com"), protocol: "tcp" });
  assert.equal(legacy.tcpProxyCluster, "outbound|443||legacy.shop.svc.cluster.local");
});
