// VirtualService routing for proxyless gRPC, end to end: real grpc-js-xds clients resolve
// `xds:///echo.default.svc.cluster.local:7070` through Sluice's `grpc` generator and their RPCs land
// where the VirtualService says: weighted subsets, header/method/path matches, timeouts, retries and
// fault injection (grpc-js-xds 1.14 enables fault injection and retries by default).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Client, Metadata } from "@grpc/grpc-js";
import { type Backend, call, OTHER_METHOD, outcome, startBackend, tally } from "./echo.ts";
import {
  CLIENT_ID,
  ControlPlane,
  ECHO_HOST,
  ECHO_PORT,
  echoCluster,
  TypeUrl,
  useControlPlane,
  versionedEcho,
  virtualService,
  xdsClient,
} from "./mesh.ts";

let v1: Backend;
let v2: Backend;
let cp: ControlPlane;
let client: Client;

const to = (subset: string, weight?: number) => ({
  destination: { host: ECHO_HOST, subset },
  ...(weight === undefined ? {} : { weight }),
});

before(async () => {
  v1 = await startBackend("v1");
  v2 = await startBackend("v2");
  cp = await ControlPlane.start(versionedEcho(v1, v2));
  useControlPlane(cp);
  client = xdsClient();
});

after(async () => {
  client?.close();
  await cp?.stop();
  v1?.stop();
  v2?.stop();
});

test("without a VirtualService the client reaches both versions; it asked only for what it uses", async () => {
  const counts = await tally(client, 100);
  assert.deepEqual([...counts.keys()].sort(), ["v1", "v2"]);
  assert.deepEqual(cp.typeStatus(CLIENT_ID, TypeUrl.Listener)?.resourceNames, [`${ECHO_HOST}:${ECHO_PORT}`]);
  assert.deepEqual(cp.typeStatus(CLIENT_ID, TypeUrl.Route)?.resourceNames, [echoCluster()]);
  assert.deepEqual(cp.typeStatus(CLIENT_ID, TypeUrl.Cluster)?.resourceNames, [echoCluster()]);
  for (const type of [TypeUrl.Listener, TypeUrl.Route, TypeUrl.Cluster, TypeUrl.Endpoint]) {
    assert.equal(cp.typeStatus(CLIENT_ID, type)?.state, "SYNCED", type);
  }
});

test("short names work as targets: xds:///echo:7070 and xds:///echo.default:7070 get their own listeners", async () => {
  const short = ["echo:7070", "echo.default:7070"].map((target) => xdsClient(target));
  try {
    for (const c of short) assert.match(await call(c), /^v[12]$/);
    assert.deepEqual(cp.typeStatus(CLIENT_ID, TypeUrl.Listener)?.resourceNames.sort(), [
      "echo.default.svc.cluster.local:7070",
      "echo.default:7070",
      "echo:7070",
    ]);
    assert.equal(cp.typeStatus(CLIENT_ID, TypeUrl.Listener)?.lastNack, undefined);
  } finally {
    for (const c of short) c.close();
  }
});

test("weighted subsets: a 70/30 split holds within ±5% over 1,000 calls", async () => {
  await cp.applyAndSettle(virtualService([{ route: [to("v1", 70), to("v2", 30)] }]));
  await tally(client, 50); // the subset clusters are resolved
  const counts = await tally(client, 1000);
  assert.equal((counts.get("v1") ?? 0) + (counts.get("v2") ?? 0), 1000, JSON.stringify([...counts]));
  const share = (counts.get("v2") ?? 0) / 1000;
  assert.ok(Math.abs(share - 0.3) <= 0.05, `v2 got ${share * 100}%`);
  assert.equal(cp.typeStatus(CLIENT_ID, TypeUrl.Cluster)?.lastNack, undefined);
});

test("header, method and path matches pick their subset; other calls take the default route", async () => {
  await cp.applyAndSettle(
    virtualService([
      { match: [{ headers: { "x-user": { exact: "jason" } } }], route: [to("v2")] },
      { match: [{ uri: { exact: OTHER_METHOD.path } }], route: [to("v2")] },
      { match: [{ uri: { prefix: "/sluice.test.Canary/" } }], route: [to("v2")] },
      { route: [to("v1")] },
    ]),
  );
  const jason = new Metadata();
  jason.set("x-user", "jason");
  const other = new Metadata();
  other.set("x-user", "other");
  for (let i = 0; i < 20; i++) {
    assert.equal(await call(client, { metadata: jason }), "v2");
    assert.equal(await call(client, { metadata: other }), "v1");
    assert.equal(await call(client, { method: OTHER_METHOD }), "v2");
    assert.equal(await call(client), "v1");
  }
});

test("a route timeout ends slow calls with DEADLINE_EXCEEDED; without it they complete", async () => {
  v1.holdMs = 1000;
  try {
    await cp.applyAndSettle(virtualService([{ route: [to("v1")], timeout: "0.1s" }]));
    assert.equal(await outcome(client), "error:DEADLINE_EXCEEDED");
    await cp.applyAndSettle(virtualService([{ route: [to("v1")] }]));
    assert.equal(await outcome(client), "v1");
  } finally {
    v1.holdMs = 0;
  }
});

test("retries (retryOn unavailable, 3 attempts) recover an injected failure; attempts 0 does not", async () => {
  await cp.applyAndSettle(virtualService([{ route: [to("v1")], retries: { attempts: 3, retryOn: "unavailable" } }]));
  v1.calls = 0;
  v1.failNext = 2;
  assert.equal(await outcome(client), "v1");
  assert.equal(v1.calls, 3, "two failed attempts, then the answer");

  await cp.applyAndSettle(virtualService([{ route: [to("v1")], retries: { attempts: 0 } }]));
  v1.calls = 0;
  v1.failNext = 1;
  assert.equal(await outcome(client), "error:UNAVAILABLE");
  assert.equal(v1.calls, 1);
});

test("fault abort at 50% aborts half the calls (±5% over 1,000) with the configured status", async () => {
  await cp.applyAndSettle(
    virtualService([
      {
        route: [to("v1")],
        fault: { abort: { percentage: { value: 50 }, grpcStatus: "PERMISSION_DENIED" } },
      },
    ]),
  );
  v1.calls = 0;
  const counts = await tally(client, 1000);
  const aborted = counts.get("error:PERMISSION_DENIED") ?? 0;
  assert.equal(aborted + (counts.get("v1") ?? 0), 1000, JSON.stringify([...counts]));
  assert.ok(Math.abs(aborted / 1000 - 0.5) <= 0.05, `${aborted / 10}% aborted`);
  assert.equal(v1.calls, 1000 - aborted, "aborted calls never reach the backend");
});

// A delay longer than the deadline ends the call with DEADLINE_EXCEEDED before it is sent (an
// undelayed call answers in milliseconds), so outcomes tell the delayed calls apart.
test("fault delay at 100% holds every call; at 50% half of them (±7.5% over 400); at 0% none", async () => {
  const delayed = async (percent: number, calls: number) => {
    await cp.applyAndSettle(
      virtualService([{ route: [to("v1")], fault: { delay: { percentage: { value: percent }, fixedDelay: "3s" } } }]),
    );
    const counts = await tally(client, calls, { deadlineMs: 1000 }, 100);
    const held = counts.get("error:DEADLINE_EXCEEDED") ?? 0;
    assert.equal((counts.get("v1") ?? 0) + held, calls, JSON.stringify([...counts]));
    return held / calls;
  };
  v1.calls = 0;
  assert.equal(await delayed(100, 20), 1);
  assert.equal(v1.calls, 0, "delayed calls had not been sent when their deadline passed");
  const half = await delayed(50, 400);
  assert.ok(Math.abs(half - 0.5) <= 0.075, `${half * 100}% delayed`);
  assert.equal(await delayed(0, 20), 0);
  assert.equal(cp.typeStatus(CLIENT_ID, TypeUrl.Route)?.lastNack, undefined, "every route was accepted");
});
