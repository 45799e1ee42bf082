import assert from "node:assert/strict";
import { test } from "node:test";
import { cfg, snapshot, svc } from "../../test/support/model-fixtures.ts";
import type { PeerAuthenticationSpec } from "../config/types/index.ts";

const pa = (namespace: string, name: string, spec: PeerAuthenticationSpec, created = 0) =>
  cfg("PeerAuthentication", namespace, name, spec, { created });
const reviews = { configNamespace: "bookinfo", labels: { app: "reviews" } };

test("no PeerAuthentication: PERMISSIVE", () => {
  assert.equal(snapshot([]).mtlsMode(reviews, 9080), "PERMISSIVE");
});

test("precedence: workload over namespace over mesh (root namespace)", () => {
  const mesh = pa("istio-system", "mesh", { mtls: { mode: "STRICT" } });
  const ns = pa("bookinfo", "ns", { mtls: { mode: "PERMISSIVE" } });
  const workload = pa("bookinfo", "wl", { selector: { matchLabels: { app: "reviews" } }, mtls: { mode: "DISABLE" } });
  assert.equal(snapshot([mesh]).mtlsMode(reviews, 9080), "STRICT");
  assert.equal(snapshot([mesh, ns]).mtlsMode(reviews, 9080), "PERMISSIVE");
  assert.equal(snapshot([mesh, ns, workload]).mtlsMode(reviews, 9080), "DISABLE");
  assert.equal(
    snapshot([mesh, ns, workload]).mtlsMode({ configNamespace: "bookinfo", labels: { app: "x" } }, 9080),
    "PERMISSIVE",
  );
  assert.equal(
    snapshot([mesh, ns, workload]).mtlsMode({ configNamespace: "other", labels: { app: "reviews" } }, 9080),
    "STRICT",
  );
});

test("UNSET inherits from the level above; port-level settings override the workload mode", () => {
  const snap = snapshot([
    pa("istio-system", "mesh", { mtls: { mode: "STRICT" } }),
    pa("bookinfo", "ns", { mtls: { mode: "UNSET" } }),
    pa("bookinfo", "wl", {
      selector: { matchLabels: { app: "reviews" } },
      portLevelMtls: { "9080": { mode: "DISABLE" }, "9090": { mode: "UNSET" } },
    }),
  ]);
  const effective = snap.effectiveMtls(reviews);
  assert.equal(effective.mode, "STRICT");
  assert.deepEqual(Object.fromEntries(effective.perPort), { 9080: "DISABLE", 9090: "STRICT" });
  assert.equal(snap.mtlsMode(reviews, 9080), "DISABLE");
  assert.equal(snap.mtlsMode(reviews, 8080), "STRICT");
});

test("several policies at one level: the oldest wins; selector policies in the root namespace are ignored", () => {
  const snap = snapshot([
    pa("bookinfo", "newer", { mtls: { mode: "DISABLE" } }, 2),
    pa("bookinfo", "older", { mtls: { mode: "STRICT" } }, 1),
    pa("istio-system", "root-selector", { selector: { matchLabels: { app: "reviews" } }, mtls: { mode: "DISABLE" } }),
  ]);
  assert.equal(snap.mtlsMode(reviews, 9080), "STRICT");
});

test("port-level settings of namespace-wide policies do not apply", () => {
  const snap = snapshot([
    pa("bookinfo", "ns", { mtls: { mode: "STRICT" }, portLevelMtls: { "9080": { mode: "DISABLE" } } }),
  ]);
  assert.equal(snap.mtlsMode(reviews, 9080), "STRICT");
});

test("auto-mTLS inference: namespace policy, else mesh policy, else PERMISSIVE; external services unknown", () => {
  const reviewsSvc = svc("reviews", "bookinfo");
  const ratingsSvc = svc("ratings", "other");
  const snap = snapshot([
    pa("istio-system", "mesh", { mtls: { mode: "STRICT" } }),
    pa("bookinfo", "ns", { mtls: { mode: "DISABLE" } }),
    pa("bookinfo", "wl", { selector: { matchLabels: { app: "reviews" } }, mtls: { mode: "STRICT" } }),
  ]);
  assert.equal(snap.inferServiceMtlsMode(reviewsSvc, undefined, []), "DISABLE");
  assert.equal(snap.inferServiceMtlsMode(ratingsSvc, undefined, []), "STRICT");
  assert.equal(snapshot([]).inferServiceMtlsMode(ratingsSvc, undefined, []), "PERMISSIVE");
  assert.equal(snap.inferServiceMtlsMode(svc("api", "x", { meshExternal: true }), undefined, []), undefined);
});

test("auto-mTLS inference for passthrough: DISABLE without endpoints or with a plaintext endpoint", () => {
  const headless = svc("db", "other", { resolution: "Passthrough" });
  const snap = snapshot([pa("istio-system", "mesh", { mtls: { mode: "STRICT" } })]);
  assert.equal(snap.inferServiceMtlsMode(headless, undefined, []), "DISABLE");
  assert.equal(
    snap.inferServiceMtlsMode(headless, undefined, [{ tlsMode: "istio" }, { tlsMode: "disabled" }]),
    "DISABLE",
  );
  assert.equal(snap.inferServiceMtlsMode(headless, undefined, [{ tlsMode: "istio" }]), "STRICT");
  const lbPassthrough = { loadBalancer: { simple: "PASSTHROUGH" as const } };
  assert.equal(snap.inferServiceMtlsMode(svc("web", "other"), lbPassthrough, []), "DISABLE");
});
