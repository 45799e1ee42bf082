// The xDS server's metrics under Istio's names, read from the registry as Prometheus shows them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Registry } from "prom-client";
import { DeltaClient, SotwClient, sidecarNode } from "../../../test/support/ads-client.ts";
import {
  assertNoDeltaResponse,
  assertNoResponse,
  edsCluster,
  startServer,
} from "../../../test/support/xds-fixtures.ts";
import { TypeUrl } from "../types.ts";
import type { HealthReport } from "./env.ts";
import { grpcCodeName, XdsMetrics } from "./metrics.ts";
import type { ConnectionHooks } from "./server.ts";

const snapshot = { [TypeUrl.Cluster]: [edsCluster("a"), edsCluster("b")] };

/** The samples of one metric family as `name{labels} value` lines. */
async function samples(registry: Registry, name: string): Promise<string[]> {
  const text = await registry.metrics();
  return text.split("\n").filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

test("gRPC code names are Go's codes.Code.String()", () => {
  assert.equal(grpcCodeName(0), "OK");
  assert.equal(grpcCodeName(3), "InvalidArgument");
  assert.equal(grpcCodeName(16), "Unauthenticated");
  assert.equal(grpcCodeName(42), "Code(42)");
});

test("a NACK counts in pilot_total_xds_rejects and, for CDS, pilot_xds_cds_reject by node and error code", async (t) => {
  const registry = new Registry();
  const h = await startServer(snapshot, { metrics: new XdsMetrics(registry) });
  const sotw = SotwClient.connect(h.address);
  t.after(async () => {
    sotw.close();
    await h.close();
  });
  sotw.request({ node: sidecarNode("app-1", "ns"), typeUrl: TypeUrl.Cluster });
  sotw.nack(await sotw.next(), "bad cluster");
  await assertNoResponse(sotw);
  assert.deepEqual(await samples(registry, "pilot_total_xds_rejects"), ['pilot_total_xds_rejects{type="cds"} 1']);
  assert.deepEqual(await samples(registry, "pilot_xds_cds_reject"), [
    'pilot_xds_cds_reject{node="app-1.ns",err="InvalidArgument"} 1',
  ]);
  assert.match(await registry.metrics(), /^# TYPE pilot_xds_cds_reject gauge$/m);
  assert.deepEqual(await samples(registry, "pilot_xds_lds_reject"), []);
});

test("every response sent is timed in pilot_xds_send_time; pilot_xds_recv_max is the largest request", async (t) => {
  const registry = new Registry();
  const h = await startServer(snapshot, { metrics: new XdsMetrics(registry) });
  const sotw = SotwClient.connect(h.address);
  t.after(async () => {
    sotw.close();
    await h.close();
  });
  const before = await samples(registry, "pilot_xds_recv_max");
  assert.deepEqual(before, ["pilot_xds_recv_max 0"]);
  await sotw.requestAndAck({
    node: sidecarNode("app-1", "ns", { LABELS: { app: "a".repeat(1000) } }),
    typeUrl: TypeUrl.Cluster,
  });
  await sotw.requestAndAck({ typeUrl: TypeUrl.Endpoint, resourceNames: ["a"] });
  assert.ok((await samples(registry, "pilot_xds_send_time_count")).includes("pilot_xds_send_time_count 2"));
  const [max] = await samples(registry, "pilot_xds_recv_max");
  const bytes = Number(max?.split(" ")[1]);
  assert.ok(bytes > 1000 && bytes < 1200, `the first request (node and its 1000-byte label): ${max}`);
  assert.deepEqual(await samples(registry, "pilot_xds_write_timeout"), ["pilot_xds_write_timeout 0"]);
});

test("HealthInformation is taken without an answer, on SotW and delta, is no NACK and goes to the connection hooks", async (t) => {
  const registry = new Registry();
  const reports: [string, HealthReport][] = [];
  const connectionHooks: ConnectionHooks = {
    connected: async () => {},
    disconnected: () => {},
    healthReported: (conn, report) => reports.push([conn.proxy.id, report]),
  };
  const h = await startServer(snapshot, { metrics: new XdsMetrics(registry), connectionHooks });
  const sotw = SotwClient.connect(h.address);
  const delta = DeltaClient.connect(h.address);
  t.after(async () => {
    sotw.close();
    delta.close();
    await h.close();
  });
  sotw.request({ node: sidecarNode("sotw"), typeUrl: TypeUrl.HealthInfo });
  sotw.request({ typeUrl: TypeUrl.HealthInfo, errorDetail: { code: 13, message: "app not ready" } });
  await assertNoResponse(sotw);
  delta.request({ node: sidecarNode("delta"), typeUrl: TypeUrl.HealthInfo });
  delta.request({ typeUrl: TypeUrl.HealthInfo, errorDetail: { code: 13, message: "app not ready" } });
  await assertNoDeltaResponse(delta);
  assert.deepEqual(await samples(registry, "pilot_total_xds_rejects"), []);
  const unhealthy = { healthy: false, message: "app not ready" };
  assert.deepEqual(reports, [
    ["sotw.default", { healthy: true }],
    ["sotw.default", unhealthy],
    ["delta.default", { healthy: true }],
    ["delta.default", unhealthy],
  ]);
  // The streams go on.
  assert.equal((await sotw.requestAndAck({ typeUrl: TypeUrl.Cluster })).resources.length, 2);
});
