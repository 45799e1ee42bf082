// DestinationRule traffic policies for proxyless gRPC, end to end through grpc-js-xds 1.14:
// ROUND_ROBIN, consistent hash on a header (ring hash, enabled by default in 1.14), and
// http2MaxRequests as circuit breaking. LEAST_REQUEST is sent as Istio sends it (lb_policy
// LEAST_REQUEST), which grpc-js-xds 1.14 does not implement: it NACKs the cluster and keeps serving
// with the one it had.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Client, Metadata } from "@grpc/grpc-js";
import { waitFor } from "../support/xds-fixtures.ts";
import { type Backend, call, outcome, startBackend, tally } from "./echo.ts";
import { CLIENT_ID, ControlPlane, destinationRule, echoService, TypeUrl, useControlPlane, xdsClient } from "./mesh.ts";

let backends: Backend[];
let cp: ControlPlane;
let client: Client;

before(async () => {
  backends = [await startBackend("a"), await startBackend("b"), await startBackend("c")];
  cp = await ControlPlane.start([echoService(backends.map((backend) => ({ backend })))]);
  useControlPlane(cp);
  client = xdsClient();
});

after(async () => {
  client?.close();
  await cp?.stop();
  for (const b of backends ?? []) b.stop();
});

const loadBalancer = (loadBalancer: Record<string, unknown>) => destinationRule({ trafficPolicy: { loadBalancer } });

test("ROUND_ROBIN: sequential calls take the backends in turn", async () => {
  await cp.applyAndSettle(loadBalancer({ simple: "ROUND_ROBIN" }));
  // Every backend connected: round robin only rotates over ready ones.
  await waitFor(async () => (await tally(client, 30)).size === 3, "all three backends answering");
  const counts = await tally(client, 300, {}, 1);
  for (const name of ["a", "b", "c"]) {
    const n = counts.get(name) ?? 0;
    assert.ok(n >= 95 && n <= 105, `${name} answered ${n} of 300`);
  }
});

test("LEAST_REQUEST is NACKed by grpc-js-xds 1.14 (unsupported lb_policy); the client keeps its last cluster", async () => {
  await cp.applyAndSettle(loadBalancer({ simple: "LEAST_REQUEST" }));
  const cds = cp.typeStatus(CLIENT_ID, TypeUrl.Cluster);
  assert.equal(cds?.state, "NACKED");
  assert.match(cds?.lastNack?.message ?? "", /unsupported lb_policy: LEAST_REQUEST/);
  assert.equal((await tally(client, 30)).size, 3, "still balancing over the three backends");
});

test("consistentHash on a header: each user sticks to one backend, users spread over several", async () => {
  await cp.applyAndSettle(loadBalancer({ consistentHash: { httpHeaderName: "x-user" } }));
  assert.equal(cp.typeStatus(CLIENT_ID, TypeUrl.Cluster)?.state, "SYNCED");
  const used = new Set<string>();
  for (let user = 0; user < 20; user++) {
    const metadata = new Metadata();
    metadata.set("x-user", `user-${user}`);
    const answers = new Set<string>();
    for (let i = 0; i < 5; i++) answers.add(await call(client, { metadata }));
    assert.equal(answers.size, 1, `user-${user} went to ${[...answers]}`);
    used.add([...answers][0]);
  }
  assert.ok(used.size >= 2, `20 users all hashed to ${[...used]}`);
});

// grpc-js counts a call against the limit only once it is started on a connection (after an async
// step), so calls picked in the same tick all pass: the test waits until the first call has reached
// its backend before sending the others.
test("connectionPool.http.http2MaxRequests: calls over the limit fail fast with UNAVAILABLE; a higher limit lets them through", async () => {
  const received = () => backends.reduce((n, b) => n + b.calls, 0);
  const hold = () => {
    for (const b of backends) b.holding = true;
  };
  const release = () => {
    for (const b of backends) b.release();
  };
  try {
    await cp.applyAndSettle(destinationRule({ trafficPolicy: { connectionPool: { http: { http2MaxRequests: 1 } } } }));
    hold();
    const first = outcome(client);
    const start = received();
    await waitFor(() => received() === start + 1, "the first call at its backend");
    assert.deepEqual([...(await tally(client, 5, {}, 5))], [["error:UNAVAILABLE", 5]]);
    release();
    assert.notEqual(await first, "error:UNAVAILABLE");

    await cp.applyAndSettle(
      destinationRule({ trafficPolicy: { connectionPool: { http: { http2MaxRequests: 100 } } } }),
    );
    hold();
    const before = received();
    const all = tally(client, 6, {}, 6);
    await waitFor(() => received() === before + 6, "all six calls at their backends");
    release();
    assert.equal((await all).get("error:UNAVAILABLE"), undefined);
  } finally {
    release();
  }
});
