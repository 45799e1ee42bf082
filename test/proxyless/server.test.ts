// xDS-enabled gRPC servers (grpc-js-xds XdsServer) fed by Sluice: a server asks for
// `xds.istio.io/grpc/lds/inbound/127.0.0.1:<port>` (the bootstrap's template) and serves only once
// it has that listener, which Sluice builds for a port that one of the workload's services targets.
// Clients then reach it through the mesh. (XdsServer needs its port before binding: no port 0.)
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Client } from "@grpc/grpc-js";
import * as grpcXds from "@grpc/grpc-js-xds";
import { freePort } from "../support/free-port.ts";
import { waitFor } from "../support/xds-fixtures.ts";
import { Backend, call } from "./echo.ts";
import { CLIENT_ID, ControlPlane, echoService, TypeUrl, useControlPlane, xdsClient } from "./mesh.ts";

let cp: ControlPlane;
let client: Client;
const servers: Backend[] = [];

before(async () => {
  cp = await ControlPlane.start([]);
  useControlPlane(cp);
});

after(async () => {
  client?.close();
  for (const s of servers) s.stop();
  await cp?.stop();
});

/** An XdsServer on a fixed free port; `listening` settles once Sluice's listener lets it serve. */
async function xdsServer(name: string): Promise<{ backend: Backend; listening: Promise<number> }> {
  const backend = new Backend(name, new grpcXds.XdsServer());
  servers.push(backend);
  const port = await freePort();
  backend.port = port;
  return { backend, listening: backend.listen(`127.0.0.1:${port}`) };
}

test("a server serves once its port is a service target, and a mesh client reaches it", async () => {
  const { backend, listening } = await xdsServer("xds-echo");
  const listenerName = `xds.istio.io/grpc/lds/inbound/127.0.0.1:${backend.port}`;
  // No service targets the port yet: the server has asked for its listener and got none.
  await waitForWatch(listenerName);
  cp.apply(echoService([{ backend }]));
  assert.equal(await listening, backend.port);
  assert.equal(cp.typeStatus(CLIENT_ID, TypeUrl.Listener)?.lastNack, undefined);

  client = xdsClient();
  assert.equal(await call(client), "xds-echo");
  assert.equal(backend.calls, 1);
});

async function waitForWatch(name: string): Promise<void> {
  await waitFor(
    () => cp.typeStatus(CLIENT_ID, TypeUrl.Listener)?.resourceNames.includes(name) === true,
    `the server's request for ${name}`,
  );
}
