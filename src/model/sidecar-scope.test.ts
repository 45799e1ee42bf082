import assert from "node:assert/strict";
import { test } from "node:test";
import { cfg, proxy, snapshot, svc } from "../../test/support/model-fixtures.ts";
import type { SidecarSpec } from "../config/types/index.ts";
import type { Service } from "../registry/index.ts";

const sidecar = (namespace: string, name: string, spec: SidecarSpec, created = 0) =>
  cfg("Sidecar", namespace, name, spec, { created });
const hosts = (services: readonly Service[]) => services.map((s) => s.hostname).sort();

const services = [
  svc("productpage", "bookinfo"),
  svc("reviews", "bookinfo"),
  svc("istiod", "istio-system"),
  svc("zipkin", "istio-system"),
  svc("api", "external", { hostname: "api.example.com", registry: "External", exportTo: ["*"] }),
  svc("www", "external", { hostname: "www.example.com", registry: "External" }),
  svc("secret", "team", { exportTo: ["."] }),
];

test("without a Sidecar, a proxy sees every service visible to its namespace", () => {
  const scope = snapshot([], services).sidecarScope(proxy("sidecar", "bookinfo"));
  assert.equal(scope.name, "default-sidecar");
  assert.deepEqual(hosts(scope.services), [
    "api.example.com",
    "istiod.istio-system.svc.cluster.local",
    "productpage.bookinfo.svc.cluster.local",
    "reviews.bookinfo.svc.cluster.local",
    "www.example.com",
    "zipkin.istio-system.svc.cluster.local",
  ]);
  assert.equal(scope.outboundTrafficPolicy.mode, "ALLOW_ANY");
});

test("egress hosts: './*' is the proxy's namespace, 'ns/*' a namespace, '*/host' a host anywhere", () => {
  const snap = snapshot(
    [
      sidecar("bookinfo", "default", {
        egress: [{ hosts: ["./*", "istio-system/istiod.istio-system.svc.cluster.local", "*/api.example.com"] }],
      }),
    ],
    services,
  );
  const scope = snap.sidecarScope(proxy("sidecar", "bookinfo"));
  assert.equal(scope.name, "default");
  assert.deepEqual(hosts(scope.services), [
    "api.example.com",
    "istiod.istio-system.svc.cluster.local",
    "productpage.bookinfo.svc.cluster.local",
    "reviews.bookinfo.svc.cluster.local",
  ]);
});

test("egress wildcard hosts import the services they cover; exportTo still applies", () => {
  const snap = snapshot(
    [sidecar("bookinfo", "default", { egress: [{ hosts: ["*/*.example.com", "team/*"] }] })],
    services,
  );
  assert.deepEqual(hosts(snap.sidecarScope(proxy("sidecar", "bookinfo")).services), [
    "api.example.com",
    "www.example.com",
  ]);
});

test("'~' excludes: '~/*' imports nothing, '~ns/host' removes a host from a wider import", () => {
  const none = snapshot([sidecar("bookinfo", "default", { egress: [{ hosts: ["~/*"] }] })], services);
  assert.deepEqual(none.sidecarScope(proxy("sidecar", "bookinfo")).services, []);
  const most = snapshot(
    [
      sidecar("bookinfo", "default", {
        egress: [{ hosts: ["istio-system/*", "~istio-system/zipkin.istio-system.svc.cluster.local"] }],
      }),
    ],
    services,
  );
  assert.deepEqual(hosts(most.sidecarScope(proxy("sidecar", "bookinfo")).services), [
    "istiod.istio-system.svc.cluster.local",
  ]);
});

test("an egress listener with a port keeps only that port of each service", () => {
  const multi = svc("multi", "bookinfo", {
    ports: [
      { name: "http", port: 80, protocol: "HTTP", targetPort: 8080 },
      { name: "grpc", port: 9090, protocol: "GRPC", targetPort: 9090 },
    ],
  });
  const snap = snapshot(
    [
      sidecar("bookinfo", "default", {
        egress: [{ port: { number: 9090, protocol: "GRPC", name: "grpc" }, hosts: ["./*"] }],
      }),
    ],
    [multi, svc("web", "bookinfo")],
  );
  const scope = snap.sidecarScope(proxy("sidecar", "bookinfo"));
  assert.deepEqual(
    scope.services.map((s) => `${s.name}:${s.ports.map((p) => p.port)}`),
    ["multi:9090"],
  );
  assert.equal(scope.egressListenerFor(9090, "")?.egress?.port?.number, 9090);
  assert.equal(scope.egressListenerFor(80, ""), undefined);
});

test("a Sidecar with a matching workloadSelector wins over the namespace default; the root namespace Sidecar is the fallback", () => {
  const snap = snapshot(
    [
      sidecar("istio-system", "mesh", {
        egress: [{ hosts: ["istio-system/*"] }],
        outboundTrafficPolicy: { mode: "REGISTRY_ONLY" },
      }),
      sidecar("bookinfo", "ns-default", { egress: [{ hosts: ["./*"] }] }, 1),
      sidecar(
        "bookinfo",
        "for-reviews",
        { workloadSelector: { labels: { app: "reviews" } }, egress: [{ hosts: ["external/*"] }] },
        2,
      ),
    ],
    services,
  );
  assert.equal(snap.sidecarScope(proxy("sidecar", "bookinfo", { app: "reviews" })).name, "for-reviews");
  assert.equal(snap.sidecarScope(proxy("sidecar", "bookinfo", { app: "ratings" })).name, "ns-default");
  const other = snap.sidecarScope(proxy("sidecar", "other"));
  assert.equal(other.name, "mesh");
  assert.equal(other.namespace, "other");
  assert.equal(other.outboundTrafficPolicy.mode, "REGISTRY_ONLY");
  assert.deepEqual(hosts(other.services), [
    "istiod.istio-system.svc.cluster.local",
    "zipkin.istio-system.svc.cluster.local",
  ]);
});

test("outboundTrafficPolicy: the Sidecar's, else the mesh's", () => {
  const registryOnly = snapshot([], services, { outboundTrafficPolicy: { mode: "REGISTRY_ONLY" } });
  assert.equal(registryOnly.sidecarScope(proxy("sidecar", "bookinfo")).outboundTrafficPolicy.mode, "REGISTRY_ONLY");
  const override = snapshot([sidecar("bookinfo", "s", { outboundTrafficPolicy: { mode: "ALLOW_ANY" } })], services, {
    outboundTrafficPolicy: { mode: "REGISTRY_ONLY" },
  });
  assert.equal(override.sidecarScope(proxy("sidecar", "bookinfo")).outboundTrafficPolicy.mode, "ALLOW_ANY");
  const egressProxy = { host: "egress.istio-system.svc.cluster.local" };
  const withoutMode = snapshot([sidecar("bookinfo", "s", { outboundTrafficPolicy: { egressProxy } })], services);
  assert.deepEqual(withoutMode.sidecarScope(proxy("sidecar", "bookinfo")).outboundTrafficPolicy, {
    mode: "REGISTRY_ONLY",
    egressProxy,
  });
});

test("VirtualServices are imported by their hosts, and pull in the services they route to", () => {
  const snap = snapshot(
    [
      sidecar("bookinfo", "default", { egress: [{ hosts: ["./*"] }] }),
      cfg("VirtualService", "bookinfo", "reviews", {
        hosts: ["reviews"],
        http: [{ route: [{ destination: { host: "zipkin.istio-system.svc.cluster.local" } }] }],
      }),
      cfg("VirtualService", "istio-system", "zipkin", { hosts: ["zipkin"] }),
    ],
    services,
  );
  const scope = snap.sidecarScope(proxy("sidecar", "bookinfo"));
  assert.deepEqual(
    scope.egressListeners[0].virtualServices.map((v) => v.metadata.name),
    ["reviews"],
  );
  assert.ok(scope.service("zipkin.istio-system.svc.cluster.local"));
  assert.equal(scope.service("istiod.istio-system.svc.cluster.local"), undefined);
});

test("the scope carries the DestinationRules of its services, with workloadSelector rules chosen per proxy", () => {
  const snap = snapshot(
    [
      cfg("DestinationRule", "bookinfo", "all", { host: "reviews", subsets: [{ name: "v1" }] }, { created: 1 }),
      cfg(
        "DestinationRule",
        "bookinfo",
        "pp",
        { host: "reviews", workloadSelector: { matchLabels: { app: "productpage" } } },
        { created: 2 },
      ),
    ],
    services,
  );
  const scope = snap.sidecarScope(proxy("sidecar", "bookinfo"));
  const host = "reviews.bookinfo.svc.cluster.local";
  assert.equal(scope.destinationRules(host).length, 2);
  assert.equal(scope.destinationRule("outbound", { app: "productpage" }, host)?.rule.metadata.name, "pp");
  assert.equal(scope.destinationRule("inbound", { app: "productpage" }, host)?.rule.metadata.name, "all");
  assert.equal(scope.destinationRule("outbound", { app: "x" }, host)?.rule.metadata.name, "all");
});

test("a proxy's scope is chosen again when its labels, namespace or type change", () => {
  const snap = snapshot(
    [
      sidecar("bookinfo", "ns-default", { egress: [{ hosts: ["./*"] }] }, 1),
      sidecar("bookinfo", "for-reviews", { workloadSelector: { labels: { app: "reviews" } } }, 2),
    ],
    services,
  );
  const node = proxy("sidecar", "bookinfo", { app: "ratings" });
  assert.equal(snap.sidecarScope(node).name, "ns-default");
  assert.equal(snap.sidecarScope(node).name, "ns-default");
  node.labels = { app: "reviews" };
  assert.equal(snap.sidecarScope(node).name, "for-reviews");
  node.configNamespace = "other";
  assert.equal(snap.sidecarScope(node).namespace, "other");
  node.type = "router";
  assert.equal(snap.sidecarScope(node), snap.sidecarScope(proxy("router", "other")));
});

test("scopes are computed once per push per Sidecar and namespace; routers share the gateway scope", () => {
  const snap = snapshot([], services);
  const a = snap.sidecarScope(proxy("sidecar", "bookinfo", { app: "a" }));
  assert.equal(snap.sidecarScope(proxy("sidecar", "bookinfo", { app: "b" })), a);
  assert.notEqual(snap.sidecarScope(proxy("sidecar", "other")), a);
  const router = snap.sidecarScope(proxy("router", "istio-system"));
  assert.equal(snap.sidecarScope(proxy("router", "istio-system", { istio: "ingressgateway" })), router);
  assert.notEqual(router, snap.sidecarScope(proxy("sidecar", "istio-system")));
  assert.equal(router.services.length, 6);
});

test("one service per hostname: the proxy namespace's, else Kubernetes over ServiceEntry", () => {
  const shared = "shared.example.com";
  const snap = snapshot(
    [],
    [
      svc("se", "a", { hostname: shared, registry: "External", creationTime: "2020-01-01T00:00:00Z" }),
      svc("k8s", "b", { hostname: shared }),
      svc("own", "c", { hostname: shared, registry: "External" }),
    ],
  );
  assert.equal(snap.sidecarScope(proxy("sidecar", "c")).service(shared)?.name, "own");
  assert.equal(snap.sidecarScope(proxy("sidecar", "d")).service(shared)?.name, "k8s");
});

test("dependsOn: a scope depends on the VirtualServices, delegates, DestinationRules, Sidecar and services it used", () => {
  const snap = snapshot(
    [
      sidecar("bookinfo", "default", { egress: [{ hosts: ["./*"] }] }),
      cfg("VirtualService", "bookinfo", "reviews", {
        hosts: ["reviews"],
        http: [{ delegate: { name: "team-routes", namespace: "team" } }],
      }),
      cfg("VirtualService", "istio-system", "zipkin", { hosts: ["zipkin.istio-system.svc.cluster.local"] }),
      cfg("DestinationRule", "bookinfo", "reviews", { host: "reviews" }),
    ],
    services,
  );
  const scope = snap.sidecarScope(proxy("sidecar", "bookinfo"));
  const key = (kind: string, namespace: string, name: string) => ({ kind, namespace, name });
  const NET = "networking.istio.io";
  assert.equal(scope.dependsOn(key(`${NET}/VirtualService`, "bookinfo", "reviews")), true);
  assert.equal(scope.dependsOn(key(`${NET}/VirtualService`, "team", "team-routes")), true);
  assert.equal(scope.dependsOn(key(`${NET}/VirtualService`, "istio-system", "zipkin")), false);
  assert.equal(scope.dependsOn(key(`${NET}/DestinationRule`, "bookinfo", "reviews")), true);
  assert.equal(scope.dependsOn(key(`${NET}/Sidecar`, "bookinfo", "default")), true);
  assert.equal(scope.dependsOn(key("/Service", "bookinfo", "reviews")), true);
  assert.equal(scope.dependsOn(key("/Service", "istio-system", "zipkin")), false);
  assert.equal(scope.dependsOn(key(`${NET}/ServiceEntry`, "bookinfo", "reviews.bookinfo.svc.cluster.local")), true);
  assert.equal(
    scope.dependsOn(key(`${NET}/ServiceEntry`, "istio-system", "zipkin.istio-system.svc.cluster.local")),
    false,
  );
  assert.equal(scope.dependsOn(key(`${NET}/EnvoyFilter`, "istio-system", "any")), true);
  assert.equal(scope.dependsOn(key(`${NET}/EnvoyFilter`, "other", "any")), false);
  assert.equal(scope.dependsOn(key("security.istio.io/PeerAuthentication", "bookinfo", "x")), true);
  assert.equal(scope.dependsOn(key("security.istio.io/PeerAuthentication", "team", "x")), false);
  assert.equal(scope.dependsOn(key("/Secret", "anywhere", "x")), true);
});

test("each imported service gets the VirtualService with the most specific matching host", () => {
  const external = [
    svc("api", "external", { hostname: "api.example.com", registry: "External" }),
    svc("www", "external", { hostname: "www.example.com", registry: "External" }),
    svc("x", "external", { hostname: "x.other.org", registry: "External" }),
  ];
  const snap = snapshot(
    [
      cfg("VirtualService", "external", "wild", { hosts: ["*.example.com"] }, { created: 1 }),
      cfg("VirtualService", "external", "api", { hosts: ["api.example.com"] }, { created: 2 }),
      cfg("VirtualService", "external", "everything", { hosts: ["*"] }, { created: 3 }),
    ],
    external,
  );
  const [listener] = snap.sidecarScope(proxy("sidecar", "bookinfo")).egressListeners;
  const chosen = Object.fromEntries([...listener.virtualServiceByHostname].map(([h, v]) => [h, v.metadata.name]));
  assert.deepEqual(chosen, { "api.example.com": "api", "www.example.com": "wild", "x.other.org": "everything" });
});

test("a root namespace Sidecar's './*' means each proxy's own namespace", () => {
  const snap = snapshot([sidecar("istio-system", "mesh", { egress: [{ hosts: ["./*"] }] })], services);
  assert.deepEqual(hosts(snap.sidecarScope(proxy("sidecar", "bookinfo")).services), [
    "productpage.bookinfo.svc.cluster.local",
    "reviews.bookinfo.svc.cluster.local",
  ]);
  assert.deepEqual(hosts(snap.sidecarScope(proxy("sidecar", "external")).services), [
    "api.example.com",
    "www.example.com",
  ]);
});
