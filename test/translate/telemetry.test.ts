// The Telemetry API through LDS for one sidecar (v0.default, labelled istio.io/benchmark): a mesh-wide
// Telemetry (Prometheus with a reporting interval and a metric override, the envoy-json log) and a
// namespace Telemetry turning access logs off for servers. Every listener passes Envoy's constraints.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { benchProxy, templateState } from "../../bench/templates.ts";
import { hcm, istioStats, listener, unpackAny } from "../../src/api/index.ts";
import type { ConfigObject } from "../../src/config/index.ts";
import { XdsCache } from "../../src/configgen/index.ts";
import { buildConfigDump, storeSecrets } from "../../src/xds/index.ts";
import { anyViolations } from "../support/pgv.ts";

const telemetry = (namespace: string, name: string, spec: JsonObject): ConfigObject => ({
  apiVersion: "telemetry.istio.io/v1",
  kind: "Telemetry",
  metadata: { name, namespace },
  spec,
});

const objects: ConfigObject[] = [
  telemetry("istio-system", "mesh-default", {
    metrics: [
      {
        providers: [{ name: "prometheus" }],
        reportingInterval: "30s",
        overrides: [{ match: { metric: "TCP_SENT_BYTES" }, disabled: true }],
      },
    ],
    accessLogging: [{ providers: [{ name: "envoy-json" }] }],
  }),
  telemetry("default", "namespace-default", {
    accessLogging: [{ match: { mode: "SERVER" }, disabled: true }],
  }),
  {
    apiVersion: "networking.istio.io/v1",
    kind: "ServiceEntry",
    metadata: { name: "db", namespace: "default" },
    spec: {
      hosts: ["db.example.com"],
      addresses: ["240.0.0.10"],
      ports: [
        { number: 5432, name: "tcp", protocol: "TCP" },
        { number: 80, name: "http", protocol: "HTTP" },
      ],
      resolution: "STATIC",
      endpoints: [{ address: "10.0.0.10" }],
    },
  },
  {
    apiVersion: "networking.istio.io/v1",
    kind: "ServiceEntry",
    metadata: { name: "self", namespace: "default" },
    spec: {
      hosts: ["self.default.svc.cluster.local"],
      ports: [{ number: 9080, name: "http", protocol: "HTTP" }],
      location: "MESH_INTERNAL",
      resolution: "STATIC",
      workloadSelector: { labels: { "istio.io/benchmark": "true" } },
    },
  },
];

function listeners(): listener.Listener[] {
  const state = templateState(objects);
  const dump = buildConfigDump(
    state.push,
    benchProxy("sidecar"),
    { endpoints: state.registry, secrets: storeSecrets(state.store), cache: new XdsCache() },
    { types: ["LDS"], raw: true },
  );
  for (const any of dump.configs) assert.deepEqual(anyViolations(any), [], any.typeUrl);
  return dump.configs.flatMap((any) => unpackAny(any, listener.ListenerSchema) ?? []);
}

const filtersOf = (l: listener.Listener | undefined) => (l?.filterChains ?? []).flatMap((c) => c.filters);
const typed = (f: listener.Filter) => (f.configType.case === "typedConfig" ? f.configType.value : undefined);

test("TCP istio.stats carries the mesh-wide reporting interval and overrides", () => {
  const tcp = listeners().find((l) => l.name === "240.0.0.10_5432");
  const stats = filtersOf(tcp).find((f) => f.name === "istio.stats");
  const any = stats && typed(stats);
  const config = any && unpackAny(any, istioStats.PluginConfigSchema);
  assert.equal(config?.tcpReportingDuration?.seconds, 30n);
  assert.ok(
    config?.metrics.some((m) => m.name === "tcp_sent_bytes_total" && m.drop),
    JSON.stringify(config?.metrics),
  );
});

test("client connection managers log to envoy-json; servers log nothing (disabled for SERVER)", () => {
  const all = listeners();
  const managers = (l: listener.Listener | undefined) =>
    filtersOf(l).flatMap((f) => {
      const any = typed(f);
      return f.name === "envoy.filters.network.http_connection_manager" && any
        ? [unpackAny(any, hcm.HttpConnectionManagerSchema)]
        : [];
    });
  const outbound = managers(all.find((l) => l.name === "0.0.0.0_80"));
  assert.ok(outbound.length > 0);
  for (const m of outbound)
    assert.deepEqual(
      m?.accessLog.map((a) => a.name),
      ["envoy.access_loggers.file"],
    );
  const inbound = managers(all.find((l) => l.name === "virtualInbound"));
  assert.ok(inbound.length > 0);
  for (const m of inbound) assert.deepEqual(m?.accessLog, []);
  // The listener log of unmatched connections follows the classes too.
  const virtualOutbound = all.find((l) => l.name === "virtualOutbound");
  assert.deepEqual(
    virtualOutbound?.accessLog.map((a) => a.name),
    ["envoy.access_loggers.file"],
  );
  assert.deepEqual(all.find((l) => l.name === "virtualInbound")?.accessLog, []);
});
