// ADS protocol behaviour against a raw client: what istiod answers, acks, ignores and remembers.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { status } from "@grpc/grpc-js";
import { Registry } from "prom-client";
import { TypeUrl, XdsMetrics } from "../../src/xds/index.ts";
import { DeltaClient, names, SotwClient, sidecarNode } from "../support/ads-client.ts";
import {
  assertNoDeltaResponse,
  assertNoResponse,
  edsCluster,
  type Harness,
  loadAssignment,
  startServer,
  type TestSnapshot,
  testGenerators,
} from "../support/xds-fixtures.ts";

const clusters = (...n: string[]) => n.map((name) => edsCluster(name));
const base: TestSnapshot = {
  [TypeUrl.Cluster]: clusters("a", "b"),
  [TypeUrl.Endpoint]: [loadAssignment("a", [["10.0.0.1", 80]]), loadAssignment("b", [["10.0.0.2", 80]])],
};

const BROKEN_TYPE = "type.googleapis.com/sluice.test.Broken";

let h: Harness;
let metrics: Registry;
const open: { close(): void }[] = [];

function sotw(): SotwClient {
  const c = SotwClient.connect(h.address);
  open.push(c);
  return c;
}
function delta(): DeltaClient {
  const c = DeltaClient.connect(h.address);
  open.push(c);
  return c;
}

before(async () => {
  metrics = new Registry();
  const generators = testGenerators();
  generators.register(BROKEN_TYPE, {
    generate() {
      throw new Error("generator bug");
    },
  });
  h = await startServer(base, { metrics: new XdsMetrics(metrics), generators });
});
after(async () => {
  for (const c of open) c.close();
  await h.close();
});

async function metricValue(name: string, labels: Record<string, string>): Promise<number> {
  const m = (await metrics.getMetricsAsJSON()).find((x) => x.name === name);
  const v = m?.values.find((x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val));
  return v?.value ?? 0;
}

test("first request carries the node; the answer holds every cluster (wildcard CDS) with the push version", async () => {
  const c = sotw();
  c.request({ node: sidecarNode(), typeUrl: TypeUrl.Cluster });
  const res = await c.next();
  assert.equal(res.typeUrl, TypeUrl.Cluster);
  assert.deepEqual(names(res), ["a", "b"]);
  assert.equal(res.versionInfo, h.server.pushContext?.version);
  assert.notEqual(res.nonce, "");
  // As istiod: only sync status responses name the control plane (test/xds/discovery.test.ts).
  assert.equal(res.controlPlane, undefined);
});

test("an ACK gets no answer and marks the type synced", async () => {
  const c = sotw();
  c.request({ node: sidecarNode("ack-1"), typeUrl: TypeUrl.Cluster });
  const res = await c.next();
  c.ack(res);
  await assertNoResponse(c);
  const conn = h.server.syncStatus().find((s) => s.proxy.id === "ack-1.default");
  const cds = conn?.types.find((t) => t.typeUrl === TypeUrl.Cluster);
  assert.equal(cds?.state, "SYNCED");
  assert.equal(cds?.acked?.version, res.versionInfo);
  assert.equal(cds?.sent?.nonce, res.nonce);
});

test("a NACK is recorded, not answered, not re-pushed unchanged; a config change recovers", async () => {
  const c = sotw();
  c.request({ node: sidecarNode("nack-1"), typeUrl: TypeUrl.Cluster });
  const first = await c.next();
  const rejectsBefore = await metricValue("pilot_total_xds_rejects", { type: "cds" });
  c.nack(first, "cluster a: bad config");
  await assertNoResponse(c);
  const status1 = h.server.syncStatus().find((s) => s.proxy.id === "nack-1.default");
  const cds1 = status1?.types.find((t) => t.typeUrl === TypeUrl.Cluster);
  assert.equal(cds1?.state, "NACKED");
  assert.equal(cds1?.lastNack?.message, "cluster a: bad config");
  assert.equal(cds1?.lastNack?.nonce, first.nonce);
  assert.equal(await metricValue("pilot_total_xds_rejects", { type: "cds" }), rejectsBefore + 1);

  // A push that leaves this proxy's clusters as they were sends nothing: no NACK loop.
  await h.push({ ...base });
  await assertNoResponse(c);

  await h.push({ ...base, [TypeUrl.Cluster]: clusters("a", "b", "c") });
  const fixed = await c.next();
  assert.deepEqual(names(fixed), ["a", "b", "c"]);
  c.ack(fixed);
  await assertNoResponse(c);
  const cds2 = h.server
    .syncStatus()
    .find((s) => s.proxy.id === "nack-1.default")
    ?.types.find((t) => t.typeUrl === TypeUrl.Cluster);
  assert.equal(cds2?.state, "SYNCED");
  assert.equal(cds2?.lastNack?.message, "cluster a: bad config", "the last NACK stays visible for debugging");
  await h.push(base);
});

test("a stale nonce is ignored, even when it changes the subscription", async () => {
  const c = sotw();
  c.request({ node: sidecarNode("stale-1"), typeUrl: TypeUrl.Endpoint, resourceNames: ["a"] });
  const first = await c.next();
  assert.deepEqual(first.resources.length, 1);
  c.request({ typeUrl: TypeUrl.Endpoint, responseNonce: "not-the-last-nonce", resourceNames: ["a", "b"] });
  await assertNoResponse(c);
  const eds = h.server
    .syncStatus()
    .find((s) => s.proxy.id === "stale-1.default")
    ?.types.find((t) => t.typeUrl === TypeUrl.Endpoint);
  assert.equal(eds?.state, "STALE");
  assert.deepEqual(eds?.resourceNames, ["a"]);
});

test("named subscriptions: subscribe more, drop some, unsubscribe with an empty list", async () => {
  const c = sotw();
  c.request({ node: sidecarNode("sub-1"), typeUrl: TypeUrl.Endpoint, resourceNames: ["a"] });
  const r1 = await c.next();
  assert.equal(r1.resources.length, 1);
  c.ack(r1, ["a", "b"]);
  const r2 = await c.next();
  assert.equal(r2.resources.length, 2, "adding a name is answered with both");
  c.ack(r2, ["b"]);
  await assertNoResponse(c);
  c.ack(r2, []);
  await assertNoResponse(c);
  const conn = h.server.syncStatus().find((s) => s.proxy.id === "sub-1.default");
  assert.equal(
    conn?.types.some((t) => t.typeUrl === TypeUrl.Endpoint),
    false,
    "an empty EDS list unsubscribes",
  );
  // After unsubscribing, pushes send no EDS to this proxy.
  await h.push({ ...base, [TypeUrl.Endpoint]: [loadAssignment("a", [["10.0.0.9", 80]])] });
  await assertNoResponse(c);
  await h.push(base);
});

test("after a CDS answer, the EDS request Envoy sends to warm clusters is answered though it looks like an ACK", async () => {
  const c = sotw();
  c.request({ node: sidecarNode("warm-1"), typeUrl: TypeUrl.Cluster });
  c.ack(await c.next());
  c.request({ typeUrl: TypeUrl.Endpoint, resourceNames: ["a", "b"] });
  const eds = await c.next();
  c.ack(eds, ["a", "b"]);
  await assertNoResponse(c);
  // Envoy re-requests CDS (a new request, no nonce): the answer makes it warm its clusters...
  c.request({ typeUrl: TypeUrl.Cluster });
  c.ack(await c.next());
  // ...and its EDS request with the same names and the last nonce gets endpoints.
  c.ack(eds, ["a", "b"]);
  const warmed = await c.next();
  assert.equal(warmed.typeUrl, TypeUrl.Endpoint);
  assert.deepEqual(names(warmed), ["a", "b"]);
  // Once only.
  c.ack(warmed, ["a", "b"]);
  await assertNoResponse(c);
});

test("wildcard LDS/CDS get the whole type on every change", async () => {
  const c = sotw();
  c.request({ node: sidecarNode("wild-1"), typeUrl: TypeUrl.Cluster });
  c.ack(await c.next());
  await h.push({ ...base, [TypeUrl.Cluster]: clusters("a", "b", "d") });
  const res = await c.next();
  assert.deepEqual(names(res), ["a", "b", "d"]);
  await h.push(base);
  assert.deepEqual(names(await c.next()), ["a", "b"]);
});

test("a reconnecting SotW proxy presenting its last version and nonce is answered as a new subscription", async () => {
  const c1 = sotw();
  c1.request({ node: sidecarNode("re-1"), typeUrl: TypeUrl.Cluster });
  const last = await c1.next();
  c1.close();
  const c2 = sotw();
  c2.request({
    node: sidecarNode("re-1"),
    typeUrl: TypeUrl.Cluster,
    versionInfo: last.versionInfo,
    responseNonce: last.nonce,
  });
  const res = await c2.next();
  assert.deepEqual(names(res), ["a", "b"]);
});

test("two proxies each see only their own config", async () => {
  await h.push({
    ...base,
    [TypeUrl.Cluster]: (proxy) => clusters(`${proxy.configNamespace}-only`),
  });
  const a = sotw();
  const b = sotw();
  a.request({ node: sidecarNode("p", "team-a"), typeUrl: TypeUrl.Cluster });
  b.request({ node: sidecarNode("p", "team-b"), typeUrl: TypeUrl.Cluster });
  assert.deepEqual(names(await a.next()), ["team-a-only"]);
  assert.deepEqual(names(await b.next()), ["team-b-only"]);
  await h.push(base);
  assert.deepEqual(names(await a.next()), ["a", "b"]);
});

test("a bad node id ends the stream with InvalidArgument", async () => {
  const c = sotw();
  c.request({ node: { id: "not-a-node-id" }, typeUrl: TypeUrl.Cluster });
  const end = await c.ended;
  assert.equal(end.code, status.INVALID_ARGUMENT);
  assert.match(end.details, /missing parts in the service node/);
  const d = delta();
  d.request({ node: { id: "gateway~10.0.0.1~x.ns~ns.svc" }, typeUrl: TypeUrl.Cluster });
  const end2 = await d.ended;
  assert.equal(end2.code, status.INVALID_ARGUMENT);
  assert.match(end2.details, /invalid node type/);
});

test("delta: the first answer carries every resource with a version; unchanged resources are never sent again", async () => {
  const d = delta();
  d.request({ node: sidecarNode("delta-1"), typeUrl: TypeUrl.Cluster });
  const first = await d.next();
  assert.deepEqual(names(first), ["a", "b"]);
  assert.ok(first.resources.every((r) => r.version !== ""));
  d.ack(first);
  await assertNoDeltaResponse(d);

  // Same content in a new push context: nothing to send.
  await h.push({ ...base, [TypeUrl.Cluster]: clusters("a", "b") });
  await assertNoDeltaResponse(d);

  // b changes: only b is sent.
  await h.push({ ...base, [TypeUrl.Cluster]: [edsCluster("a"), edsCluster("b", 5)] });
  const changed = await d.next();
  assert.deepEqual(names(changed), ["b"]);
  assert.notEqual(changed.resources[0].version, first.resources.find((r) => r.name === "b")?.version);
  assert.deepEqual(changed.removedResources, []);
  d.ack(changed);

  // b is deleted: removed_resources names it, no resources are sent.
  await h.push({ ...base, [TypeUrl.Cluster]: [edsCluster("a")] });
  const removed = await d.next();
  assert.deepEqual(removed.resources, []);
  assert.deepEqual(removed.removedResources, ["b"]);
  await h.push(base);
});

test("delta: named subscribe and unsubscribe; a missing name comes back as removed", async () => {
  const d = delta();
  d.request({ node: sidecarNode("delta-2"), typeUrl: TypeUrl.Endpoint, resourceNamesSubscribe: ["a"] });
  const r1 = await d.next();
  assert.deepEqual(names(r1), ["a"]);
  d.request({ typeUrl: TypeUrl.Endpoint, responseNonce: r1.nonce, resourceNamesSubscribe: ["b", "nope"] });
  const r2 = await d.next();
  assert.deepEqual(names(r2), ["b"], "a is held already and not resent");
  assert.deepEqual(r2.removedResources, ["nope"]);
  d.request({ typeUrl: TypeUrl.Endpoint, responseNonce: r2.nonce, resourceNamesUnsubscribe: ["a"] });
  await assertNoDeltaResponse(d);
  // Endpoints of a change, but a is no longer watched: nothing is sent.
  await h.push({
    ...base,
    [TypeUrl.Endpoint]: [loadAssignment("a", [["10.9.9.9", 80]]), loadAssignment("b", [["10.0.0.2", 80]])],
  });
  await assertNoDeltaResponse(d);
  await h.push(base);
});

test("delta reconnect: initial_resource_versions avoid resending what the proxy holds; gone resources are removed", async () => {
  const d1 = delta();
  d1.request({ node: sidecarNode("delta-3"), typeUrl: TypeUrl.Cluster });
  const first = await d1.next();
  d1.close();
  const versions = Object.fromEntries(first.resources.map((r) => [r.name, r.version]));
  const d2 = delta();
  d2.request({
    node: sidecarNode("delta-3"),
    typeUrl: TypeUrl.Cluster,
    initialResourceVersions: { ...versions, a: "outdated", gone: "v1" },
  });
  const res = await d2.next();
  assert.deepEqual(names(res), ["a"], "only the outdated resource is sent");
  assert.deepEqual(res.removedResources, ["gone"]);
});

test("delta NACK is recorded and the same state is not pushed again", async () => {
  const d = delta();
  d.request({ node: sidecarNode("delta-4"), typeUrl: TypeUrl.Cluster });
  const first = await d.next();
  d.nack(first, "rejected");
  await assertNoDeltaResponse(d);
  await h.push({ ...base });
  await assertNoDeltaResponse(d);
  const cds = h.server
    .syncStatus()
    .find((s) => s.proxy.id === "delta-4.default")
    ?.types.find((t) => t.typeUrl === TypeUrl.Cluster);
  assert.equal(cds?.state, "NACKED");
  assert.equal(cds?.lastNack?.message, "rejected");
});

test("delta: subscribing and unsubscribing '*' at once asks for nothing until names are subscribed", async () => {
  const d = delta();
  d.request({
    node: sidecarNode("delta-5"),
    typeUrl: TypeUrl.Cluster,
    resourceNamesSubscribe: ["*"],
    resourceNamesUnsubscribe: ["*"],
  });
  const first = await d.next();
  assert.deepEqual(first.resources, [], "the first request is answered, with nothing");
  d.request({ typeUrl: TypeUrl.Cluster, responseNonce: first.nonce, resourceNamesSubscribe: ["b"] });
  assert.deepEqual(names(await d.next()), ["b"]);
});

test("delta reconnect on a named type: initial_resource_versions are subscriptions too", async () => {
  const d1 = delta();
  d1.request({ node: sidecarNode("delta-6"), typeUrl: TypeUrl.Endpoint, resourceNamesSubscribe: ["a", "b"] });
  const held = await d1.next();
  d1.close();
  const d2 = delta();
  d2.request({
    node: sidecarNode("delta-6"),
    typeUrl: TypeUrl.Endpoint,
    initialResourceVersions: Object.fromEntries(held.resources.map((r) => [r.name, r.version])),
  });
  const first = await d2.next();
  assert.deepEqual(first.resources, [], "nothing changed since");
  d2.ack(first);
  await h.push({
    ...base,
    [TypeUrl.Endpoint]: [loadAssignment("a", [["10.0.0.1", 80]]), loadAssignment("b", [["10.7.7.7", 80]])],
  });
  assert.deepEqual(names(await d2.next()), ["b"], "b is watched again without being named in a subscribe");
  await h.push(base);
});

test("a throwing generator is an internal error, not a broken stream", async () => {
  const before = await metricValue("pilot_total_xds_internal_errors", {});
  const c = sotw();
  c.request({ node: sidecarNode("broken-1"), typeUrl: BROKEN_TYPE });
  await assertNoResponse(c);
  assert.equal(await metricValue("pilot_total_xds_internal_errors", {}), before + 1);
  c.request({ typeUrl: TypeUrl.Cluster });
  assert.deepEqual(names(await c.next()), ["a", "b"]);
});

test("metrics: pushes, config size and connected proxies under Istio's names", async () => {
  assert.ok((await metricValue("pilot_xds_pushes", { type: "cds" })) > 0);
  const text = await metrics.metrics();
  assert.match(text, /pilot_xds_config_size_bytes_count\{type="cds"\} [1-9]/);
  assert.match(text, /pilot_xds\{version="1.24.0"\} [1-9]/);
  assert.match(
    text,
    /grpc_server_started_total\{grpc_type="bidi_stream",grpc_service="envoy.service.discovery.v3.AggregatedDiscoveryService",grpc_method="StreamAggregatedResources"\} [1-9]/,
  );
  assert.match(text, /pilot_proxy_convergence_time_count [1-9]/);
});
