// The process_* families Go's process collector adds, read from /proc files; istio_build and
// istiod_managed_clusters; /version's text in Istio's form.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Registry } from "prom-client";
import { buildInfoString, SLUICE_VERSION } from "../util/version.ts";
import {
  readNetworkBytes,
  readVirtualMemoryMax,
  registerManagedClusters,
  registerMonitoringMetrics,
  registerRemoteSyncTimeouts,
} from "./monitoring.ts";

const NETSTAT = `TcpExt: SyncookiesSent SyncookiesRecv
TcpExt: 0 0
IpExt: InNoRoutes InTruncatedPkts InMcastPkts OutMcastPkts InBcastPkts OutBcastPkts InOctets OutOctets
IpExt: 0 0 0 0 0 0 23045372853 20216982220
`;

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max open files            1048576              1048576              files
Max address space         unlimited            unlimited            bytes
`;

test("network bytes and the address-space limit are read as Go's procfs reads them", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-proc-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "netstat"), NETSTAT);
  writeFileSync(join(dir, "limits"), LIMITS);
  writeFileSync(
    join(dir, "limited"),
    LIMITS.replace("unlimited            unlimited", "1073741824           unlimited"),
  );
  assert.deepEqual(readNetworkBytes(join(dir, "netstat")), { received: 23045372853, sent: 20216982220 });
  assert.equal(readVirtualMemoryMax(join(dir, "limits")), 2 ** 64);
  assert.equal(readVirtualMemoryMax(join(dir, "limited")), 1073741824);
  assert.equal(readNetworkBytes(join(dir, "absent")), undefined);
  assert.equal(readVirtualMemoryMax(join(dir, "absent")), undefined);
});

test("/metrics has istio_build, and Go's process_* families where /proc has them", async () => {
  const registry = new Registry();
  registerMonitoringMetrics(registry, "0.1.0-abc-unknown");
  const text = await registry.metrics();
  assert.match(
    text,
    new RegExp(`^istio_build\\{component="pilot",tag="${SLUICE_VERSION.replaceAll(".", "\\.")}"\\} 1$`, "m"),
  );
  assert.match(text, /^pilot_info\{version="0\.1\.0-abc-unknown"\} 1$/m);
  if (readNetworkBytes()) {
    assert.match(text, /^# TYPE process_network_receive_bytes_total counter$/m);
    assert.match(text, /^process_network_transmit_bytes_total \d/m);
  }
  if (readVirtualMemoryMax() !== undefined) assert.match(text, /^process_virtual_memory_max_bytes \d/m);
  assert.doesNotMatch(text, /istiod_managed_clusters/, "only once a cluster is read");
  const setRemote = registerManagedClusters(registry);
  const clusters = async () =>
    (await registry.metrics()).split("\n").filter((l) => l.startsWith("istiod_managed_clusters{"));
  assert.deepEqual(await clusters(), [
    'istiod_managed_clusters{cluster_type="local"} 1',
    'istiod_managed_clusters{cluster_type="remote"} 0',
  ]);
  setRemote(2);
  assert.deepEqual(await clusters(), [
    'istiod_managed_clusters{cluster_type="local"} 1',
    'istiod_managed_clusters{cluster_type="remote"} 2',
  ]);
});

test("the build info reads as Istio's version.Info.String(): version, revision, build status", () => {
  assert.equal(buildInfoString("0.1.0", "0123abc"), "0.1.0-0123abc-unknown");
  assert.match(buildInfoString(), /^\d+\.\d+\.\d+\S*-([0-9a-f]{40}|unknown)-unknown$/);
});

test("remote_cluster_sync_timeouts_total counts each remote cluster's timeouts, once registered per registry", async () => {
  const registry = new Registry();
  const timedOut = registerRemoteSyncTimeouts(registry);
  timedOut("west");
  timedOut("west");
  registerRemoteSyncTimeouts(registry)("north");
  const lines = (await registry.metrics())
    .split("\n")
    .filter((l) => l.startsWith("remote_cluster_sync_timeouts_total{"));
  assert.deepEqual(lines, [
    'remote_cluster_sync_timeouts_total{cluster="west"} 2',
    'remote_cluster_sync_timeouts_total{cluster="north"} 1',
  ]);
});
