import assert from "node:assert/strict";
import { connect } from "node:http2";
import { type TestContext, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { pino } from "pino";
import { openStream, startServer } from "../../../test/support/raw-ads.ts";
import { cluster, discovery } from "../../api/index.ts";
import { pushRequest } from "../../model/push-context.ts";
import { MemoStore } from "../../util/memo.ts";
import { type GenerateResult, GeneratorRegistry, type XdsResource } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { type Connection, Watch } from "./connection.ts";
import type { XdsEnv } from "./env.ts";
import { ResponseSlots } from "./response-slots.ts";
import { handleSotwRequest, pushSotwType } from "./sotw.ts";

const resource = (name: string, port = 80): XdsResource => ({
  name,
  resource: create(cluster.ClusterSchema, { name, perConnectionBufferLimitBytes: port }),
});

/** An environment serving `generators`, a server for its connections, and an HTTP/2 client session. */
async function serve(t: TestContext, generators: GeneratorRegistry) {
  const env: XdsEnv = {
    generators,
    log: pino({ level: "silent" }),
    controlPlane: new Uint8Array(),
    responseSlots: new ResponseSlots(10, 60_000),
    memos: new MemoStore(),
  };
  const server = await startServer();
  const session = connect(`http://${server.address}`);
  t.after(() => {
    session.destroy();
    server.stop();
  });
  return { env, server, session };
}

/** One proxy's watch of `typeUrl` on a server whose generator returns `generated()`; `push` runs a full push of it. */
async function watchOf(t: TestContext, typeUrl: string, names: string[], generated: () => GenerateResult) {
  const generators = new GeneratorRegistry();
  generators.register(typeUrl, { generate: generated });
  const { env, server, session } = await serve(t, generators);
  openStream(session).resume(); // a proxy reading everything
  const conn = await server.accepted();
  const w = new Watch(typeUrl, names);
  conn.watches.set(typeUrl, w);
  const push = () => pushSotwType(env, conn, w, pushRequest({ full: true, push: conn.pushContext }), false);
  return { w, push };
}

test("proxies sent the same generated list share its map of sent versions; a push of that list again sends nothing", async (t) => {
  // What the generator returns, the same array object to every proxy.
  let result: GenerateResult = { resources: [resource("a"), resource("b")] };
  const generators = new GeneratorRegistry();
  generators.register(TypeUrl.Cluster, { generate: () => result });
  const { env, server, session } = await serve(t, generators);
  const watches: Watch[] = [];
  const connections: Connection[] = [];
  for (let i = 0; i < 2; i++) {
    openStream(session).resume(); // a proxy reading everything
    const conn = await server.accepted();
    const w = new Watch(TypeUrl.Cluster, []);
    conn.watches.set(TypeUrl.Cluster, w);
    await pushSotwType(env, conn, w, pushRequest({ full: true, push: conn.pushContext }), false);
    watches.push(w);
    connections.push(conn);
  }
  const [first, second] = watches;
  assert.ok(first.sentVersions?.unchanged);
  assert.equal(second.sentVersions?.base, first.sentVersions.base, "one map for both connections");
  const conn = connections[0];
  const sentNonce = first.sent?.nonce;
  await pushSotwType(env, conn, first, pushRequest({ full: true, push: conn.pushContext }), false);
  assert.equal(first.sent?.nonce, sentNonce, "the same list again: nothing sent");

  // An incremental response is laid over the shared map, which is left as it was.
  const shared = first.sentVersions.base;
  result = { resources: [resource("a", 81)], logDetails: { incremental: true } };
  await pushSotwType(env, conn, first, pushRequest({ full: false, push: conn.pushContext }), false);
  assert.notEqual(first.sent?.nonce, sentNonce);
  assert.equal(first.sentVersions.unchanged, false);
  assert.deepEqual([...first.sentVersions.keys()], ["a", "b"]);
  assert.notEqual(first.sentVersions.get("a"), shared.get("a"));
  assert.equal(second.sentVersions?.base, shared);
  assert.ok(second.sentVersions?.unchanged);
  assert.equal(shared.size, 2);
});

test("a requested push keeps the watched names and their order", async (t) => {
  const generators = new GeneratorRegistry();
  const resources = [resource("a"), resource("b")];
  generators.register(TypeUrl.Endpoint, { generate: () => ({ resources }) });
  const { env, server, session } = await serve(t, generators);
  openStream(session).resume();
  const conn = await server.accepted();
  const w = new Watch(TypeUrl.Endpoint, ["b", "missing", "a"]);
  conn.watches.set(TypeUrl.Endpoint, w);
  await pushSotwType(env, conn, w, pushRequest({ full: true, push: conn.pushContext }), true);
  assert.ok(w.sent);
  assert.deepEqual([...w.resourceNames], ["b", "missing", "a"]);
});

test("a CDS response that would delete a resource the proxy holds is held back; one leaving out only what it never held goes", async (t) => {
  let result: GenerateResult = { resources: [resource("a"), resource("b")] };
  const { w, push } = await watchOf(t, TypeUrl.Cluster, [], () => result);
  await push();
  const held = { nonce: w.sent?.nonce, versions: [...(w.sentVersions ?? [])] };
  assert.equal(w.sent?.resources, 2);

  result = { resources: [resource("a", 81)], errors: [{ name: "b", error: "boom" }] };
  await push();
  assert.equal(w.sent?.nonce, held.nonce, "nothing sent: the response would have deleted b");
  assert.deepEqual([...(w.sentVersions ?? [])], held.versions);

  result = { resources: [resource("a", 81), resource("b")], errors: [{ name: "new", error: "boom" }] };
  await push();
  assert.notEqual(w.sent?.nonce, held.nonce, "sent: the proxy never held the one left out");
  assert.deepEqual([...(w.sentVersions?.keys() ?? [])], ["a", "b"]);
  assert.equal(w.sent?.resources, 2);
});

test("an EDS response goes without the assignments that failed: the proxy keeps its own", async (t) => {
  let result: GenerateResult = { resources: [resource("a"), resource("b")] };
  const { w, push } = await watchOf(t, TypeUrl.Endpoint, ["a", "b"], () => result);
  await push();
  const firstNonce = w.sent?.nonce;
  result = { resources: [resource("a", 81)], errors: [{ name: "b", error: "boom" }] };
  await push();
  assert.notEqual(w.sent?.nonce, firstNonce);
  assert.equal(w.sent?.resources, 1);
});

test("an ACK naming the watched resources keeps the watch's set; one naming others replaces it and is answered", async (t) => {
  const generators = new GeneratorRegistry();
  generators.register(TypeUrl.Endpoint, {
    generate: (_proxy, watched) => ({ resources: [...watched.resourceNames].map((name) => resource(name)) }),
  });
  const { env, server, session } = await serve(t, generators);
  openStream(session).resume();
  const conn = await server.accepted();
  const request = (resourceNames: string[], nonce = "") =>
    handleSotwRequest(
      env,
      conn,
      create(discovery.DiscoveryRequestSchema, {
        typeUrl: TypeUrl.Endpoint,
        resourceNames,
        responseNonce: nonce,
        versionInfo: nonce && conn.watches.get(TypeUrl.Endpoint)?.sent?.version,
      }),
    );
  await request(["a", "b"]);
  const w = conn.watches.get(TypeUrl.Endpoint);
  assert.ok(w?.sent);
  const names = w.resourceNames;
  const sent = w.sent.nonce;

  await request(["b", "a"], sent);
  assert.equal(w.acked?.nonce, sent);
  assert.equal(w.resourceNames, names, "the same names in another order: the same set");
  await request(["a", "b", "a"], sent);
  assert.equal(w.resourceNames, names, "a name repeated: still the same set");
  assert.equal(w.sent?.nonce, sent, "nothing to answer");

  await request(["a", "c"], sent);
  assert.notEqual(w.resourceNames, names);
  assert.deepEqual([...w.resourceNames], ["a", "c"]);
  assert.deepEqual([...names], ["a", "b"], "the earlier set is left as it was");
  assert.notEqual(w.sent?.nonce, sent, "a new name is answered");
});
