import assert from "node:assert/strict";
import { test } from "node:test";
import { cfg, proxy, svc } from "../../test/support/model-fixtures.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG, kindKey } from "../config/index.ts";
import { ServiceRegistry } from "../registry/index.ts";
import { ConfigStore } from "../sources/index.ts";
import { buildPushContext } from "./mesh-push.ts";
import { mergePushRequests, newPushContext, pushRequest } from "./push-context.ts";
import { pushInputs } from "./push-inputs.ts";

const vs = (name: string) => ({ kind: "networking.istio.io/VirtualService", namespace: "default", name });

test("push versions are RFC 3339 time / counter and grow", () => {
  const a = newPushContext({}, new Date("2026-01-02T03:04:05.678Z"));
  const b = newPushContext({});
  assert.match(a.version, /^2026-01-02T03:04:05Z\/\d+$/);
  assert.notEqual(a.version, b.version);
  assert.ok(Object.isFrozen(a));
});

test("configsUpdated dedupes keys by value", () => {
  const req = pushRequest({ full: true, push: newPushContext({}), configsUpdated: [vs("a"), vs("a"), vs("b")] });
  assert.equal(req.configsUpdated.size, 2);
});

test("merging: full wins, newer push wins, earliest start stays, reasons add up", () => {
  const p1 = newPushContext({});
  const p2 = newPushContext({});
  const older = pushRequest({
    full: false,
    push: p1,
    configsUpdated: [vs("a")],
    reasons: ["endpoint"],
    start: new Date(1000),
  });
  const newer = pushRequest({
    full: true,
    push: p2,
    configsUpdated: [vs("b")],
    reasons: ["endpoint", "config"],
    start: new Date(2000),
  });
  const merged = mergePushRequests(older, newer);
  assert.equal(merged.full, true);
  assert.equal(merged.push, p2);
  assert.equal(merged.start.getTime(), 1000);
  assert.deepEqual([...merged.configsUpdated.values()].map((k) => k.name).sort(), ["a", "b"]);
  assert.deepEqual(Object.fromEntries(merged.reasons), { endpoint: 2, config: 1 });
});

test("merging with a full push of everything keeps everything", () => {
  const p = newPushContext({});
  const all = pushRequest({ full: true, push: p });
  const some = pushRequest({ full: false, push: p, configsUpdated: [vs("a")] });
  assert.equal(mergePushRequests(some, all).configsUpdated.size, 0);
  assert.equal(mergePushRequests(all, some).configsUpdated.size, 0);
});

test("buildPushContext reuses the indexes whose input lists are the previous push's arrays, Sidecar scopes included", () => {
  const services = [svc("reviews", "bookinfo")];
  const drs = [cfg("DestinationRule", "bookinfo", "reviews", { host: "reviews" })];
  const vss = [cfg("VirtualService", "bookinfo", "reviews", { hosts: ["reviews"] })];
  const kinds = (virtualServices: ConfigObject[]) =>
    new Map([
      ["destinationRule", drs],
      ["virtualService", virtualServices],
    ] as const);
  const first = buildPushContext({ configs: kinds(vss), services, mesh: DEFAULT_MESH_CONFIG });
  const scope = first.snapshot.sidecarScope(proxy("sidecar", "bookinfo"));

  const same = buildPushContext({ configs: kinds(vss), services, mesh: DEFAULT_MESH_CONFIG }, first).snapshot;
  assert.equal(same.sidecarScope(proxy("sidecar", "bookinfo")), scope);

  const changedVs = cfg("VirtualService", "bookinfo", "reviews", { hosts: ["reviews"], exportTo: ["."] });
  const next = buildPushContext({ configs: kinds([changedVs]), services, mesh: DEFAULT_MESH_CONFIG }, first).snapshot;
  assert.equal(next.destinationRules, first.snapshot.destinationRules);
  assert.notEqual(next.virtualServices, first.snapshot.virtualServices);
  assert.notEqual(next.sidecarScope(proxy("sidecar", "bookinfo")), scope);

  // A flat list of objects is grouped anew: nothing is kept from the previous push.
  const flat = buildPushContext({ configs: [...drs, ...vss], services, mesh: DEFAULT_MESH_CONFIG }, first).snapshot;
  assert.notEqual(flat.destinationRules, first.snapshot.destinationRules);
});

test("pushInputs reads the store and the registry; a DestinationRule change keeps the VirtualService index", () => {
  const store = new ConfigStore();
  const collection = (group: string, kind: string) => store.collection(kindKey(group, kind));
  const registry = new ServiceRegistry({
    services: collection("", "Service"),
    endpointSlices: collection("discovery.k8s.io", "EndpointSlice"),
    endpoints: collection("", "Endpoints"),
    pods: collection("", "Pod"),
    nodes: collection("", "Node"),
    serviceEntries: store.collection(kindKey("networking.istio.io", "ServiceEntry")),
    workloadEntries: store.collection(kindKey("networking.istio.io", "WorkloadEntry")),
    workloadGroups: store.collection(kindKey("networking.istio.io", "WorkloadGroup")),
  });
  store.upsert("test", {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "reviews", namespace: "bookinfo" },
    spec: { ports: [{ name: "http", port: 9080 }], selector: { app: "reviews" }, clusterIP: "10.0.0.9" },
  });
  store.upsert("test", cfg("VirtualService", "bookinfo", "reviews", { hosts: ["reviews"] }));
  const first = buildPushContext(pushInputs(store, registry, DEFAULT_MESH_CONFIG));
  const scope = first.snapshot.sidecarScope(proxy("sidecar", "bookinfo"));
  assert.deepEqual(
    scope.services.map((s) => s.hostname),
    ["reviews.bookinfo.svc.cluster.local"],
  );
  assert.deepEqual(
    scope.egressListeners[0].virtualServices.map((v) => v.metadata.name),
    ["reviews"],
  );

  store.upsert("test", cfg("DestinationRule", "bookinfo", "reviews", { host: "reviews" }));
  const second = buildPushContext(
    pushInputs(store, registry, DEFAULT_MESH_CONFIG, {}, first.snapshot.inputs),
    first,
  ).snapshot;
  // The krt collections of VirtualServices and services did not change: their lists and indexes are kept.
  assert.equal(second.inputs.kinds.get("virtualService"), first.snapshot.inputs.kinds.get("virtualService"));
  assert.equal(second.virtualServices, first.snapshot.virtualServices);
  assert.equal(second.services, first.snapshot.services);
  assert.notEqual(second.destinationRules, first.snapshot.destinationRules);
  assert.equal(
    second
      .sidecarScope(proxy("sidecar", "bookinfo"))
      .destinationRule("outbound", {}, "reviews.bookinfo.svc.cluster.local")?.rule.metadata.name,
    "reviews",
  );

  store.upsert("test", cfg("VirtualService", "bookinfo", "reviews", { hosts: ["reviews"], gateways: ["mesh"] }));
  const third = buildPushContext(pushInputs(store, registry, DEFAULT_MESH_CONFIG, {}, second.inputs)).snapshot;
  assert.notEqual(third.inputs.kinds.get("virtualService"), second.inputs.kinds.get("virtualService"));
  assert.equal(third.inputs.kinds.get("destinationRule"), second.inputs.kinds.get("destinationRule"));
  assert.equal(third.inputs.services, second.inputs.services);
});
