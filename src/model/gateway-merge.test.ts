import assert from "node:assert/strict";
import { test } from "node:test";
import { cfg, snapshot, svc } from "../../test/support/model-fixtures.ts";
import { DEFAULT_MESH_CONFIG } from "../config/index.ts";
import type { GatewayServers, GatewaySpec } from "../config/types/index.ts";
import { PushSnapshot } from "./push-snapshot.ts";

const gw = (namespace: string, name: string, spec: GatewaySpec, created = 0, annotations?: Record<string, string>) =>
  cfg("Gateway", namespace, name, spec, { created, annotations });
const ingress = { configNamespace: "istio-system", labels: { istio: "ingressgateway" } };
const http = (hosts: string[], number = 80, name = "http"): GatewayServers => ({
  hosts,
  port: { number, name, protocol: "HTTP" },
});
const https = (hosts: string[], name: string, mode: "SIMPLE" | "PASSTHROUGH" = "SIMPLE"): GatewayServers => ({
  hosts,
  port: { number: 443, name, protocol: "HTTPS" },
  tls: { mode, credentialName: "cert" },
});

test("a router gets the Gateways whose selector labels it has, from any namespace by default", () => {
  const configs = [
    gw("istio-system", "ingress", { selector: { istio: "ingressgateway" }, servers: [http(["a.example.com"])] }, 1),
    gw("team", "shared", { selector: { istio: "ingressgateway" }, servers: [http(["b.example.com"])] }, 2),
    gw("team", "egress", { selector: { istio: "egressgateway" }, servers: [http(["c.example.com"])] }, 3),
  ];
  assert.deepEqual(snapshot(configs).mergedGateway(ingress)?.gatewayNames, ["istio-system/ingress", "team/shared"]);
  assert.equal(snapshot(configs).mergedGateway({ configNamespace: "x", labels: {} }), undefined);
});

test("PILOT_SCOPE_GATEWAY_TO_NAMESPACE limits a router to the Gateways of its namespace", () => {
  const configs = [
    gw("istio-system", "ingress", { selector: { istio: "ingressgateway" }, servers: [http(["a"])] }),
    gw("team", "shared", { selector: { istio: "ingressgateway" }, servers: [http(["b"])] }),
  ];
  const scoped = new PushSnapshot({ configs, services: [], mesh: DEFAULT_MESH_CONFIG, scopeGatewayToNamespace: true });
  assert.deepEqual(scoped.mergedGateway(ingress)?.gatewayNames, ["istio-system/ingress"]);
});

test("plaintext HTTP servers on one port merge into route http.<port>", () => {
  const snap = snapshot([
    gw("istio-system", "a", { selector: { istio: "ingressgateway" }, servers: [http(["a.example.com"])] }, 1),
    gw("istio-system", "b", { selector: { istio: "ingressgateway" }, servers: [http(["b.example.com"])] }, 2),
  ]);
  const merged = snap.mergedGateway(ingress);
  // Merged once per push for alike proxies.
  assert.equal(snap.mergedGateway({ ...ingress, labels: { ...ingress.labels } }), merged);
  assert.equal(merged?.ports.length, 1);
  assert.deepEqual(merged?.ports[0].port, { number: 80, protocol: "HTTP", bind: "" });
  assert.equal(merged?.ports[0].routeName, "http.80");
  assert.deepEqual(
    merged?.serversByRouteName.get("http.80")?.map((s) => s.gatewayName),
    ["istio-system/a", "istio-system/b"],
  );
  assert.deepEqual([...(merged?.portMap.get(80) ?? [])], [80]);
});

test("HTTPS servers share port 443 with one route each; a duplicate SNI host drops the later server", () => {
  const merged = snapshot([
    gw(
      "istio-system",
      "a",
      { selector: { istio: "ingressgateway" }, servers: [https(["a.example.com"], "https-a")] },
      1,
    ),
    gw(
      "istio-system",
      "b",
      { selector: { istio: "ingressgateway" }, servers: [https(["b.example.com"], "https-b")] },
      2,
    ),
    gw(
      "istio-system",
      "dup",
      { selector: { istio: "ingressgateway" }, servers: [https(["a.example.com"], "https-dup")] },
      3,
    ),
  ]).mergedGateway(ingress);
  assert.equal(merged?.ports.length, 1);
  assert.deepEqual(
    merged?.ports[0].servers.map((s) => s.tls?.routeName),
    ["https.443.https-a.a.istio-system", "https.443.https-b.b.istio-system"],
  );
  assert.deepEqual(merged?.rejected, ["istio-system/dup"]);
  assert.deepEqual(merged?.ports[0].servers[0].tls?.sniHosts, ["a.example.com"]);
});

test("TLS passthrough servers have no route name; AUTO_PASSTHROUGH hosts are collected", () => {
  const merged = snapshot([
    gw("istio-system", "pt", {
      selector: { istio: "ingressgateway" },
      servers: [
        https(["pass.example.com"], "tls-pass", "PASSTHROUGH"),
        {
          hosts: ["*.local"],
          port: { number: 15443, name: "tls", protocol: "TLS" },
          tls: { mode: "AUTO_PASSTHROUGH" },
        },
      ],
    }),
  ]).mergedGateway(ingress);
  assert.equal(merged?.ports[0].servers[0].tls?.routeName, "");
  assert.deepEqual([...(merged?.autoPassthroughSniHosts ?? [])], ["*.local"]);
  assert.equal(merged?.serversByRouteName.size, 0);
});

test("a non-HTTP server on a port taken by plaintext HTTP is rejected", () => {
  const merged = snapshot([
    gw("istio-system", "web", { selector: { istio: "ingressgateway" }, servers: [http(["a"], 8080)] }, 1),
    gw(
      "istio-system",
      "tcp",
      {
        selector: { istio: "ingressgateway" },
        servers: [{ hosts: ["*"], port: { number: 8080, name: "tcp", protocol: "TCP" } }],
      },
      2,
    ),
  ]).mergedGateway(ingress);
  assert.deepEqual(merged?.rejected, ["istio-system/tcp"]);
  assert.equal(merged?.ports[0].servers.length, 1);
});

test("server hosts are sanitized: ./h names the Gateway's namespace, */h drops the namespace", () => {
  const merged = snapshot([
    gw("istio-system", "g", {
      selector: { istio: "ingressgateway" },
      servers: [http(["./a.example.com", "*/b.example.com", "team/c.example.com"])],
    }),
  ]).mergedGateway(ingress);
  assert.deepEqual(merged?.ports[0].servers[0].server.hosts, [
    "istio-system/a.example.com",
    "b.example.com",
    "team/c.example.com",
  ]);
});

test("a server port the gateway's Service declares listens on the Service's targetPort", () => {
  const gatewayService = svc("istio-ingressgateway", "istio-system", {
    selector: { istio: "ingressgateway" },
    ports: [{ name: "http2", port: 80, protocol: "HTTP2", targetPort: 8080 }],
  });
  const merged = snapshot(
    [gw("istio-system", "g", { selector: { istio: "ingressgateway" }, servers: [http(["a"])] })],
    [gatewayService],
  ).mergedGateway(ingress);
  assert.equal(merged?.ports[0].port.number, 8080);
  assert.equal(merged?.ports[0].routeName, "http.8080");
});

test("Gateway API Gateways apply to the proxies backing their named service", () => {
  const gatewayService = svc("web-istio", "apps", { selector: { "gateway.networking.k8s.io/gateway-name": "web" } });
  const translated = gw("apps", "web-istio-autogenerated-k8s-gateway-http", { servers: [http(["*"])] }, 0, {
    "internal.istio.io/gateway-service": "web-istio.apps.svc.cluster.local",
  });
  const snap = snapshot([translated], [gatewayService]);
  const backing = { configNamespace: "apps", labels: { "gateway.networking.k8s.io/gateway-name": "web" } };
  assert.equal(snap.mergedGateway(backing)?.ports[0].port.number, 8080);
  assert.equal(snap.mergedGateway({ configNamespace: "apps", labels: {} }), undefined);
});

test("PILOT_ENABLE_QUIC_LISTENERS: TLS-terminated HTTPS servers on a port the gateway's Service exposes over UDP get QUIC", () => {
  const gatewayService = svc("ingressgateway", "istio-system", {
    selector: { istio: "ingressgateway" },
    ports: [
      { name: "http", port: 80, protocol: "HTTP", targetPort: 8080 },
      { name: "https", port: 443, protocol: "HTTPS", targetPort: 8443 },
      { name: "http3", port: 443, protocol: "UDP", targetPort: 8443 },
      { name: "tls", port: 9443, protocol: "TLS", targetPort: 9443 },
      { name: "tls-udp", port: 9443, protocol: "UDP", targetPort: 9443 },
    ],
  });
  const configs = [
    gw("istio-system", "edge", {
      selector: { istio: "ingressgateway" },
      servers: [
        http(["a.example.com"]),
        https(["a.example.com"], "https-a"),
        https(["b.example.com"], "https-b"),
        {
          ...https(["c.example.com"], "tls-c", "PASSTHROUGH"),
          port: { number: 9443, name: "tls-c", protocol: "HTTPS" },
        },
      ],
    }),
  ];
  const on = new PushSnapshot({ configs, services: [gatewayService], mesh: DEFAULT_MESH_CONFIG, quicListeners: true });
  const merged = on.mergedGateway(ingress);
  // Listened on the Service's target port, as the TCP listener; passthrough and plain HTTP servers excluded.
  assert.deepEqual(
    merged?.quicPorts.map((p) => ({ number: p.port.number, servers: p.servers.map((s) => s.server.port.name) })),
    [{ number: 8443, servers: ["https-a", "https-b"] }],
  );
  assert.deepEqual(
    [...(merged?.http3Routes ?? [])],
    ["https.443.https-a.edge.istio-system", "https.443.https-b.edge.istio-system"],
  );

  const off = new PushSnapshot({ configs, services: [gatewayService], mesh: DEFAULT_MESH_CONFIG }).mergedGateway(
    ingress,
  );
  assert.deepEqual(off?.quicPorts, []);
  assert.equal(off?.http3Routes.size, 0);
  assert.deepEqual(off?.ports, merged?.ports);

  // The Service does not expose 443 over UDP: nothing to listen with.
  const tcpOnly = { ...gatewayService, ports: gatewayService.ports.filter((p) => p.protocol !== "UDP") };
  const noUdp = new PushSnapshot({ configs, services: [tcpOnly], mesh: DEFAULT_MESH_CONFIG, quicListeners: true });
  assert.deepEqual(noUdp.mergedGateway(ingress)?.quicPorts, []);
});
