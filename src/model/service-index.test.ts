import assert from "node:assert/strict";
import { test } from "node:test";
import { snapshot, svc } from "../../test/support/model-fixtures.ts";

const hosts = (services: { hostname: string }[]) => services.map((s) => s.hostname).sort();

test("service exportTo: '*' is every namespace, '.' its own, names those namespaces, '~' none", () => {
  const snap = snapshot(
    [],
    [
      svc("public", "a", { exportTo: ["*"] }),
      svc("private", "a", { exportTo: ["."] }),
      svc("named", "a", { exportTo: ["b"] }),
      svc("hidden", "a", { exportTo: ["~"] }),
      svc("unset", "a"),
    ],
  );
  assert.deepEqual(hosts(snap.servicesVisibleTo("a")), [
    "private.a.svc.cluster.local",
    "public.a.svc.cluster.local",
    "unset.a.svc.cluster.local",
  ]);
  assert.deepEqual(hosts(snap.servicesVisibleTo("b")), [
    "named.a.svc.cluster.local",
    "public.a.svc.cluster.local",
    "unset.a.svc.cluster.local",
  ]);
  assert.deepEqual(hosts(snap.servicesVisibleTo("c")), ["public.a.svc.cluster.local", "unset.a.svc.cluster.local"]);
});

test("services without exportTo follow the mesh defaultServiceExportTo", () => {
  const snap = snapshot([], [svc("unset", "a"), svc("open", "a", { exportTo: ["*"] })], {
    defaultServiceExportTo: ["."],
  });
  assert.deepEqual(hosts(snap.servicesVisibleTo("b")), ["open.a.svc.cluster.local"]);
  assert.deepEqual(hosts(snap.servicesVisibleTo("a")), ["open.a.svc.cluster.local", "unset.a.svc.cluster.local"]);
});

test("isServiceVisible applies the same exportTo rules", () => {
  const named = svc("named", "a", { exportTo: ["b", "."] });
  const snap = snapshot([], [named]);
  assert.equal(snap.isServiceVisible(named, "a"), true);
  assert.equal(snap.isServiceVisible(named, "b"), true);
  assert.equal(snap.isServiceVisible(named, "c"), false);
});
