// Locality-aware routing for proxyless gRPC: the client's bootstrap locality (r1/z1) and the
// endpoints' localities give EDS priorities once the DestinationRule has outlierDetection (Istio's
// condition for failover), and grpc-js-xds's priority policy fails over when the near backend goes.
//
// outlierDetection itself is not sent to gRPC clients (Istio's grpcgen leaves it out): gRPC's outlier
// detection (A50) ejects on success rate or failure percentage, which DestinationRule cannot express,
// and ignores the consecutive-error counts DestinationRule has. Its effect on proxyless clients is
// the locality failover tested here.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Client } from "@grpc/grpc-js";
import { waitFor } from "../support/xds-fixtures.ts";
import { type Backend, outcome, startBackend, tally } from "./echo.ts";
import { ControlPlane, destinationRule, echoService, useControlPlane, xdsClient } from "./mesh.ts";

let near: Backend;
let far: Backend;
let cp: ControlPlane;
let client: Client;

before(async () => {
  near = await startBackend("near");
  far = await startBackend("far");
  cp = await ControlPlane.start([
    echoService([
      { backend: near, locality: "r1/z1" },
      { backend: far, locality: "r1/z2" },
    ]),
  ]);
  useControlPlane(cp, { locality: { region: "r1", zone: "z1" } });
  client = xdsClient();
});

after(async () => {
  client?.close();
  await cp?.stop();
  near?.stop();
  far?.stop();
});

test("without outlierDetection both localities share the traffic", async () => {
  const counts = await tally(client, 200);
  assert.ok((counts.get("near") ?? 0) > 0 && (counts.get("far") ?? 0) > 0, JSON.stringify([...counts]));
});

test("with outlierDetection the client's own zone takes every call, and the next zone takes over when it fails", async () => {
  await cp.applyAndSettle(
    destinationRule({
      trafficPolicy: { outlierDetection: { consecutive5xxErrors: 5, interval: "1s", baseEjectionTime: "30s" } },
    }),
  );
  await waitFor(async () => (await outcome(client)) === "near", "the near zone first");
  assert.deepEqual([...(await tally(client, 200))], [["near", 200]]);

  near.stop();
  await waitFor(async () => (await outcome(client)) === "far", "failover to the next zone");
  assert.deepEqual([...(await tally(client, 100))], [["far", 100]]);
});
