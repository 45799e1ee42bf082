// Config changes and control-plane restarts, as a proxyless gRPC workload lives them: sluiced's file
// source watches a directory, an edited VirtualService file reaches a running client without any
// restart, and while the control plane is down the client keeps serving with its last config, then
// resyncs when it is back (grpc-js-xds reconnects with backoff).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Client } from "@grpc/grpc-js";
import { stringify } from "yaml";
import { FileSource } from "../../src/sources/index.ts";
import { waitFor } from "../support/xds-fixtures.ts";
import { type Backend, outcome, startBackend, tally } from "./echo.ts";
import { ControlPlane, ECHO_HOST, useControlPlane, versionedEcho, virtualService, xdsClient } from "./mesh.ts";

let v1: Backend;
let v2: Backend;
let dir: string;
let files: FileSource;
let cp: ControlPlane;
let client: Client;

const allTo = (subset: string) => virtualService([{ route: [{ destination: { host: ECHO_HOST, subset } }] }]);
const writeRoute = (subset: string) => writeFileSync(join(dir, "virtualservice.yaml"), stringify(allTo(subset)));

before(async () => {
  v1 = await startBackend("v1");
  v2 = await startBackend("v2");
  dir = mkdtempSync(join(tmpdir(), "sluice-proxyless-"));
  for (const obj of versionedEcho(v1, v2)) writeFileSync(join(dir, `${obj.kind}.yaml`), stringify(obj));
  writeRoute("v1");
  cp = await ControlPlane.start([]);
  files = new FileSource({ dir, store: cp.store, debounceMs: 20 });
  await files.start();
  useControlPlane(cp);
  client = xdsClient();
});

after(async () => {
  client?.close();
  await files?.stop();
  await cp?.stop();
  v1?.stop();
  v2?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("an edited VirtualService file reaches the running client", async () => {
  await waitFor(async () => (await outcome(client)) === "v1", "calls on v1");
  assert.deepEqual([...(await tally(client, 50))], [["v1", 50]]);
  writeRoute("v2");
  await waitFor(async () => (await outcome(client)) === "v2", "calls on v2 after the edit");
  assert.deepEqual([...(await tally(client, 50))], [["v2", 50]]);
});

test("while the control plane is down the client keeps its config; it resyncs when it returns", async () => {
  await cp.stop();
  assert.deepEqual([...(await tally(client, 50))], [["v2", 50]], "still routed by the last config");
  // A change made while the control plane is down reaches the client once it is back.
  writeRoute("v1");
  await waitFor(() => cp.store.list().some((s) => JSON.stringify(s.object).includes('"subset":"v1"')), "the edit read");
  assert.deepEqual([...(await tally(client, 20))], [["v2", 20]]);
  await cp.resume();
  await waitFor(async () => (await outcome(client)) === "v1", "calls on v1 after the resync");
  assert.deepEqual([...(await tally(client, 50))], [["v1", 50]]);
});
