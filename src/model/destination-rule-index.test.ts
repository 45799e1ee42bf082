import assert from "node:assert/strict";
import { test } from "node:test";
import { cfg, snapshot, svc } from "../../test/support/model-fixtures.ts";
import type { DestinationRuleSpec } from "../config/types/index.ts";

const dr = (namespace: string, name: string, spec: DestinationRuleSpec, created = 0) =>
  cfg("DestinationRule", namespace, name, spec, { created });
const reviews = svc("reviews", "bookinfo");
const subsetNames = (spec: DestinationRuleSpec | undefined) => (spec?.subsets ?? []).map((s) => s.name);

test("rules for one host in one namespace merge: new subsets appended, the oldest traffic policy wins", () => {
  const snap = snapshot([
    dr(
      "bookinfo",
      "b",
      {
        host: "reviews",
        subsets: [{ name: "v1", labels: { version: "v1b" } }, { name: "v3" }],
        trafficPolicy: { tls: { mode: "DISABLE" } },
      },
      2,
    ),
    dr(
      "bookinfo",
      "a",
      {
        host: "reviews.bookinfo.svc.cluster.local",
        subsets: [{ name: "v1", labels: { version: "v1" } }, { name: "v2" }],
      },
      1,
    ),
  ]);
  const rules = snap.destinationRulesFor("bookinfo", reviews);
  assert.equal(rules.length, 1);
  assert.deepEqual(subsetNames(rules[0].rule.spec), ["v1", "v2", "v3"]);
  assert.deepEqual(rules[0].rule.spec?.subsets?.[0].labels, { version: "v1" });
  // The oldest had no traffic policy, so the next one's is taken.
  assert.deepEqual(rules[0].rule.spec?.trafficPolicy, { tls: { mode: "DISABLE" } });
  assert.deepEqual(rules[0].from, ["bookinfo/a", "bookinfo/b"]);
  assert.equal(rules[0].rule.metadata.name, "a");
});

test("the first traffic policy is kept when both rules have one", () => {
  const snap = snapshot([
    dr("bookinfo", "old", { host: "reviews", trafficPolicy: { loadBalancer: { simple: "RANDOM" } } }, 1),
    dr("bookinfo", "new", { host: "reviews", trafficPolicy: { loadBalancer: { simple: "LEAST_REQUEST" } } }, 2),
  ]);
  assert.deepEqual(snap.destinationRulesFor("bookinfo", reviews)[0].rule.spec?.trafficPolicy?.loadBalancer, {
    simple: "RANDOM",
  });
});

test("rules with different exportTo stay apart; each client namespace sees the ones exported to it", () => {
  const snap = snapshot([
    dr("bookinfo", "for-a", { host: "reviews", exportTo: ["a"], subsets: [{ name: "a" }] }, 1),
    dr("bookinfo", "for-b", { host: "reviews", exportTo: ["b"], subsets: [{ name: "b" }] }, 2),
  ]);
  assert.deepEqual(
    snap.destinationRulesFor("a", reviews).map((r) => r.rule.metadata.name),
    ["for-a"],
  );
  assert.deepEqual(
    snap.destinationRulesFor("b", reviews).map((r) => r.rule.metadata.name),
    ["for-b"],
  );
  assert.deepEqual(snap.destinationRulesFor("c", reviews), []);
});

test("lookup order: proxy namespace, then the service's namespace, then the root namespace", () => {
  const configs = [
    dr("istio-system", "mesh-wide", { host: "*.local", trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } }),
    dr("bookinfo", "owner", { host: "reviews", subsets: [{ name: "v1" }] }),
    dr("client", "consumer", { host: "reviews.bookinfo.svc.cluster.local", subsets: [{ name: "mine" }] }),
  ];
  const snap = snapshot(configs);
  assert.equal(snap.destinationRulesFor("client", reviews)[0].rule.metadata.name, "consumer");
  assert.equal(snap.destinationRulesFor("other", reviews)[0].rule.metadata.name, "owner");
  assert.equal(snap.destinationRulesFor("other", svc("ratings", "bookinfo"))[0].rule.metadata.name, "mesh-wide");
  // The root namespace itself looks at its own rules only after the service's namespace.
  assert.equal(snap.destinationRulesFor("istio-system", reviews)[0].rule.metadata.name, "owner");
});

test("the most specific host wins: exact, then the longest wildcard", () => {
  const snap = snapshot([
    dr("ns", "com", { host: "*.com" }),
    dr("ns", "example", { host: "*.example.com" }),
    dr("ns", "exact", { host: "api.example.com" }),
  ]);
  const ext = (host: string) => svc(host, "ns", { hostname: host, registry: "External" });
  assert.equal(snap.destinationRulesFor("ns", ext("api.example.com"))[0].rule.metadata.name, "exact");
  assert.equal(snap.destinationRulesFor("ns", ext("www.example.com"))[0].rule.metadata.name, "example");
  assert.equal(snap.destinationRulesFor("ns", ext("foo.com"))[0].rule.metadata.name, "com");
});

test("a root namespace rule exported to '.' applies only to proxies in the root namespace", () => {
  const snap = snapshot([dr("istio-system", "private", { host: "*.local", exportTo: ["."] })]);
  assert.equal(snap.destinationRulesFor("istio-system", reviews)[0].rule.metadata.name, "private");
  assert.deepEqual(snap.destinationRulesFor("bookinfo", reviews), []);
});

test("mesh defaultDestinationRuleExportTo '.' keeps rules without exportTo in their namespace", () => {
  const snap = snapshot([dr("bookinfo", "local", { host: "reviews" })], [], { defaultDestinationRuleExportTo: ["."] });
  assert.equal(snap.destinationRulesFor("bookinfo", reviews).length, 1);
  assert.deepEqual(snap.destinationRulesFor("other", reviews), []);
});

test("workloadSelector rules apply to matching proxies of their namespace; others get the catch-all", () => {
  const snap = snapshot([
    dr("bookinfo", "all", { host: "reviews", subsets: [{ name: "v1" }] }, 1),
    dr(
      "bookinfo",
      "canary",
      { host: "reviews", workloadSelector: { matchLabels: { app: "productpage" } }, subsets: [{ name: "canary" }] },
      2,
    ),
  ]);
  const rules = snap.destinationRulesFor("bookinfo", reviews);
  assert.deepEqual(
    rules.map((r) => r.rule.metadata.name),
    ["canary", "all"],
  );
  const forProductpage = snap.destinationRule({ configNamespace: "bookinfo", labels: { app: "productpage" } }, reviews);
  assert.equal(forProductpage?.rule.metadata.name, "canary");
  const forOthers = snap.destinationRule({ configNamespace: "bookinfo", labels: { app: "details" } }, reviews);
  assert.equal(forOthers?.rule.metadata.name, "all");
  // Selector rules are never exported.
  assert.deepEqual(
    snap.destinationRulesFor("other", reviews).map((r) => r.rule.metadata.name),
    ["all"],
  );
});

test("rules with the same workloadSelector merge; different selectors stay apart", () => {
  const snap = snapshot([
    dr(
      "ns",
      "s1",
      {
        host: "reviews.bookinfo.svc.cluster.local",
        workloadSelector: { matchLabels: { app: "x" } },
        subsets: [{ name: "a" }],
      },
      1,
    ),
    dr(
      "ns",
      "s2",
      {
        host: "reviews.bookinfo.svc.cluster.local",
        workloadSelector: { matchLabels: { app: "x" } },
        subsets: [{ name: "b" }],
      },
      2,
    ),
    dr(
      "ns",
      "s3",
      {
        host: "reviews.bookinfo.svc.cluster.local",
        workloadSelector: { matchLabels: { app: "y" } },
        subsets: [{ name: "c" }],
      },
      3,
    ),
  ]);
  const rules = snap.destinationRulesFor("ns", reviews);
  assert.deepEqual(
    rules.map((r) => subsetNames(r.rule.spec)),
    [["a", "b"], ["c"]],
  );
});

test("a rule whose exportTo covers an existing rule's merges into it, as Istio's enhanced merge does", () => {
  const snap = snapshot([
    dr(
      "owner",
      "narrow",
      { host: "reviews.bookinfo.svc.cluster.local", exportTo: ["a"], subsets: [{ name: "v1" }] },
      1,
    ),
    dr(
      "owner",
      "wide",
      { host: "reviews.bookinfo.svc.cluster.local", exportTo: ["a", "b"], subsets: [{ name: "v2" }] },
      2,
    ),
  ]);
  const forA = snap.destinationRulesFor(
    "a",
    svc("reviews", "owner", { hostname: "reviews.bookinfo.svc.cluster.local" }),
  );
  assert.deepEqual(
    forA.map((r) => [r.rule.metadata.name, subsetNames(r.rule.spec)]),
    [["narrow", ["v1", "v2"]]],
  );
});

test("Istio's workload-selector case: a namespace rule covering the selector rules' exportTo merges into each and stays on its own", () => {
  const host = "httpbin.org";
  const snap = snapshot([
    dr("test", "nsRule1", { host, exportTo: ["test2", "."], workloadSelector: { matchLabels: { app: "app1" } } }, 10),
    dr("test", "nsRule2", { host, exportTo: ["test2", "."], workloadSelector: { matchLabels: { app: "app2" } } }, 11),
    dr("test", "nsRule3", { host, exportTo: ["test2", "."], workloadSelector: { matchLabels: { app: "app2" } } }, 11),
    dr("test", "nsRule4", { host, exportTo: [".", "test2"], trafficPolicy: { tls: { mode: "SIMPLE" } } }, 9),
  ]);
  const httpbin = svc("httpbin", "test", { hostname: host, registry: "External" });
  const local = snap.destinationRulesFor("test", httpbin);
  assert.deepEqual(
    local.map((r) => [r.rule.metadata.name, r.from]),
    [
      ["nsRule1", ["test/nsRule1", "test/nsRule4"]],
      ["nsRule2", ["test/nsRule2", "test/nsRule3", "test/nsRule4"]],
      ["nsRule4", ["test/nsRule4"]],
    ],
  );
  // The selector rules took the namespace rule's traffic policy, having none of their own.
  assert.deepEqual(local[0].rule.spec?.trafficPolicy, { tls: { mode: "SIMPLE" } });
  assert.deepEqual(
    snap.destinationRulesFor("test2", httpbin).map((r) => r.rule.metadata.name),
    ["nsRule4"],
  );
});

test("a user rule and a Gateway API backend policy rule merge field by field, the user's winning either way round", () => {
  const host = "backend.test.svc.cluster.local";
  const backendSvc = svc("backend", "test");
  for (const backendCreated of [1, 3]) {
    const snap = snapshot([
      dr(
        "test",
        "user-dr",
        {
          host,
          trafficPolicy: {
            loadBalancer: { simple: "ROUND_ROBIN" },
            tls: { mode: "MUTUAL" },
            portLevelSettings: [{ port: { number: 80 }, tls: { mode: "DISABLE" } }],
          },
          subsets: [{ name: "v1" }],
        },
        2,
      ),
      cfg(
        "DestinationRule",
        "test",
        "backend.test~istio-gateway",
        {
          host,
          trafficPolicy: {
            loadBalancer: { simple: "LEAST_REQUEST" },
            tls: { mode: "SIMPLE" },
            connectionPool: { tcp: { maxConnections: 7 } },
            portLevelSettings: [
              { port: { number: 80 }, loadBalancer: { simple: "RANDOM" }, tls: { mode: "SIMPLE" } },
              { port: { number: 443 }, tls: { mode: "SIMPLE" } },
            ],
          },
        },
        { created: backendCreated, annotations: { "internal.istio.io/parents": "XBackendTrafficPolicy/policy.test" } },
      ),
    ]);
    const [merged] = snap.destinationRulesFor("test", backendSvc);
    assert.deepEqual(merged.rule.spec?.trafficPolicy, {
      loadBalancer: { simple: "ROUND_ROBIN" },
      tls: { mode: "MUTUAL" },
      connectionPool: { tcp: { maxConnections: 7 } },
      portLevelSettings: [
        { port: { number: 80 }, tls: { mode: "DISABLE" }, loadBalancer: { simple: "RANDOM" } },
        { port: { number: 443 }, tls: { mode: "SIMPLE" } },
      ],
    });
    assert.deepEqual(subsetNames(merged.rule.spec), ["v1"]);
  }
});
