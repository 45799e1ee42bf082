import assert from "node:assert/strict";
import { test } from "node:test";
import { routeAction, runGoldenCase, serviceFixture, vhostNamed } from "../../../test/support/route-cases.ts";
import { DEFAULT_MESH_CONFIG } from "../../config/index.ts";
import { altVirtualHosts, catchAllVirtualHost, NO_PORT, serviceDomains } from "./vhost.ts";

test("vhost golden: a virtual host per HTTP service of the port, sorted by name, catch-all last", () => {
  const config = runGoldenCase("vhost").get("9080");
  assert.deepEqual(
    config?.virtualHosts.map((v) => v.name),
    [
      "api.example.com:9080",
      "pods.default.svc.cluster.local:9080",
      "ratings.prod.svc.cluster.local:9080",
      "reviews.default.svc.cluster.local:9080",
      "allow_any",
    ],
  );
  assert.equal(config?.validateClusters, false);
  assert.equal(config?.ignorePortInHostMatching, true);
  assert.equal(config?.maxDirectResponseBodySizeBytes, 1048576);
});

test("same-namespace service: FQDN, absolute FQDN, short name, name.ns.svc, name.ns, VIP (no ports: sidecars ignore them)", () => {
  const vh = vhostNamed(runGoldenCase("vhost").get("9080"), "reviews.default.svc.cluster.local:9080");
  assert.deepEqual(vh.domains, [
    "reviews.default.svc.cluster.local",
    "reviews.default.svc.cluster.local.",
    "reviews",
    "reviews.default.svc",
    "reviews.default",
    "10.96.0.10",
  ]);
  assert.equal(vh.includeRequestAttemptCount, true);
});

test("other-namespace service: no bare short name", () => {
  const vh = vhostNamed(runGoldenCase("vhost").get("9080"), "ratings.prod.svc.cluster.local:9080");
  assert.deepEqual(vh.domains, [
    "ratings.prod.svc.cluster.local",
    "ratings.prod.svc.cluster.local.",
    "ratings.prod",
    "ratings.prod.svc",
    "10.96.0.11",
  ]);
});

test("headless Kubernetes service: every name also as a *. wildcard, no VIP", () => {
  const vh = vhostNamed(runGoldenCase("vhost").get("9080"), "pods.default.svc.cluster.local:9080");
  assert.ok(vh.domains.includes("*.pods.default.svc.cluster.local"));
  assert.ok(vh.domains.includes("*.pods"));
  assert.equal(vh.domains.length, 10);
});

test("non-Kubernetes host: FQDN forms only, IPv6 VIP bracketed", () => {
  const vh = vhostNamed(runGoldenCase("vhost").get("9080"), "api.example.com:9080");
  assert.deepEqual(vh.domains, ["api.example.com", "api.example.com.", "[2001:db8::1]"]);
});

test("default route: outbound|port||host, 0s timeout, Istio's default retry policy, decorator host:port/*", () => {
  const vh = vhostNamed(runGoldenCase("vhost").get("9080"), "reviews.default.svc.cluster.local:9080");
  assert.equal(vh.routes.length, 1);
  const r = vh.routes[0];
  assert.equal(r.name, "default");
  assert.equal(r.decorator?.operation, "reviews.default.svc.cluster.local:9080/*");
  const action = routeAction(r);
  assert.deepEqual(action.clusterSpecifier, {
    case: "cluster",
    value: "outbound|9080||reviews.default.svc.cluster.local",
  });
  assert.equal(action.timeout?.seconds, 0n);
  assert.equal(action.maxGrpcTimeout?.seconds, 0n);
  assert.equal(action.retryPolicy?.numRetries, 2);
  assert.equal(
    action.retryPolicy?.retryOn,
    "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
  );
  assert.equal(action.retryPolicy?.retryHostPredicate[0]?.name, "envoy.retry_host_predicates.previous_hosts");
  assert.equal(action.retryPolicy?.hostSelectionRetryMaxAttempts, 5n);
});

test("TCP services and services without the port get no virtual host", () => {
  const names =
    runGoldenCase("vhost")
      .get("9080")
      ?.virtualHosts.map((v) => v.name) ?? [];
  assert.ok(!names.includes("db.default.svc.cluster.local:9080"));
  assert.ok(!names.some((n) => n.startsWith("other.")));
});

test("with ports (proxyless gRPC, http_proxy) every name is followed by name:port", () => {
  const svc = serviceFixture({
    hostname: "reviews.default.svc.cluster.local",
    addresses: ["10.96.0.10"],
    ports: [{ port: 9080 }],
  });
  const { domains } = serviceDomains(svc, 9080, "default.svc.cluster.local");
  assert.deepEqual(domains.slice(0, 6), [
    "reviews.default.svc.cluster.local",
    "reviews.default.svc.cluster.local:9080",
    "reviews.default.svc.cluster.local.",
    "reviews.default.svc.cluster.local.:9080",
    "reviews",
    "reviews:9080",
  ]);
  assert.deepEqual(domains.slice(-2), ["10.96.0.10", "10.96.0.10:9080"]);
});

test("proxy domain outside Kubernetes: alternate names from the shared DNS suffix", () => {
  assert.deepEqual(altVirtualHosts("foo.local.campus.net", NO_PORT, "local.campus.net"), [
    "foo.local.campus.net.",
    "foo",
  ]);
  assert.deepEqual(altVirtualHosts("foo.local.campus.net", NO_PORT, "remote.campus.net"), [
    "foo.local.campus.net.",
    "foo.local",
    "foo.local.campus",
  ]);
  assert.deepEqual(altVirtualHosts("foobar.com", NO_PORT, "local.net"), ["foobar.com."]);
});

test("catch-all: allow_any to PassthroughCluster, block_all 502, egress proxy cluster, dynamic DNS", () => {
  const opts = { includeRequestAttemptCount: true, appendXForwardedHost: false };
  const allow = catchAllVirtualHost("ALLOW_ANY", opts);
  assert.equal(allow.name, "allow_any");
  assert.deepEqual(routeAction(allow.routes[0]).clusterSpecifier, { case: "cluster", value: "PassthroughCluster" });
  const block = catchAllVirtualHost("REGISTRY_ONLY", opts);
  assert.equal(block.routes[0].name, "block_all");
  assert.equal(block.routes[0].action.case === "directResponse" && block.routes[0].action.value.status, 502);
  const egress = catchAllVirtualHost("ALLOW_ANY", {
    ...opts,
    egressProxy: { host: "egress.istio-system.svc.cluster.local", port: { number: 443 } },
  });
  assert.deepEqual(routeAction(egress.routes[0]).clusterSpecifier, {
    case: "cluster",
    value: "outbound|443||egress.istio-system.svc.cluster.local",
  });
  const dns = catchAllVirtualHost("ALLOW_ANY_DYNAMIC_DNS", opts);
  assert.deepEqual(routeAction(dns.routes[0]).clusterSpecifier, {
    case: "cluster",
    value: "AllowAnyDynamicDNSCluster",
  });
  assert.ok(DEFAULT_MESH_CONFIG.outboundTrafficPolicy);
});
