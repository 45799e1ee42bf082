// Golden tests of the Telemetry API for one proxy: each testdata case gives the mesh, the proxy, the
// Telemetries attached to it and the registry's services; the output is, per listener class, the access
// logs, the HCM tracing and the istio.stats config. Every Envoy message passes the constraint checker.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { test } from "node:test";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { assertGolden, protoJson, readGoldenInput, testdataDir } from "../../../test/support/golden.ts";
import { meshFrom, proxyFrom } from "../../../test/support/listeners.ts";
import { accesslog, hcm } from "../../api/index.ts";
import type { Telemetry } from "../../config/types/index.ts";
import type { ListenerClass } from "../httpfilter/index.ts";
import { envoyViolations } from "../httpfilter/index.ts";
import { buildProxyTelemetry } from "./index.ts";

interface Case {
  mesh?: JsonObject;
  /** Node metadata of the proxy (NAMESPACE, LABELS, ...). */
  proxy?: JsonObject;
  /** The node's cluster (tracers name spans after it); by default `<app label>.<namespace>`, as istio-agent sets it. */
  cluster?: string;
  telemetries?: Telemetry[];
  services?: { hostname: string; namespace: string }[];
}

const dir = testdataDir(import.meta.url);
const CLASSES: readonly ListenerClass[] = ["sidecarOutbound", "sidecarInbound", "gateway"];

for (const file of readdirSync(dir).filter((f) => f.endsWith(".in.yaml"))) {
  const name = file.slice(0, -".in.yaml".length);
  test(`telemetry golden: ${name}`, () => {
    const input = readGoldenInput(dir, name) as Case;
    const problems: string[] = [];
    const parsed = proxyFrom({ metadata: input.proxy ?? {} });
    const serviceCluster = input.cluster ?? `${parsed.labels.app || "istio-proxy"}.${parsed.configNamespace}`;
    const proxy = { ...parsed, serviceCluster };
    const telemetry = buildProxyTelemetry({
      mesh: meshFrom(input.mesh ?? {}),
      proxy,
      rootNamespace: "istio-system",
      telemetries: input.telemetries ?? [],
      services: input.services ?? [],
      report: (p) => problems.push(p),
    });
    const out: Record<string, JsonValue> = {};
    for (const listenerClass of CLASSES) {
      const logs = telemetry.accessLogs(listenerClass);
      for (const log of logs ?? []) assert.deepEqual(envoyViolations(accesslog.AccessLogSchema, log), [], log.name);
      const { tracing, useRequestIdForTraceSampling } = telemetry.tracing(listenerClass);
      if (tracing) {
        assert.deepEqual(envoyViolations(hcm.HttpConnectionManager_TracingSchema, tracing), [], listenerClass);
      }
      out[listenerClass] = {
        accessLogs:
          logs === undefined ? "mesh accessLogFile" : logs.map((l) => protoJson(accesslog.AccessLogSchema, l)),
        tracing: tracing ? protoJson(hcm.HttpConnectionManager_TracingSchema, tracing) : null,
        useRequestIdForTraceSampling,
        stats: telemetry.stats(listenerClass) ?? null,
      };
    }
    out.problems = [...new Set(problems)];
    assertGolden(dir, name, out);
  });
}

test("a waypoint's spans are tagged with its peers' metadata fields, a sidecar's are not", () => {
  const tagsOf = (type: "waypoint" | "sidecar") => {
    const proxy = { ...proxyFrom({ metadata: {} }), type };
    const telemetry = buildProxyTelemetry({
      mesh: meshFrom({ enableTracing: true }),
      proxy,
      rootNamespace: "istio-system",
      telemetries: [],
      services: [],
    });
    const tracing = telemetry.tracing("sidecarInbound").tracing;
    assert.ok(tracing);
    assert.deepEqual(envoyViolations(hcm.HttpConnectionManager_TracingSchema, tracing), []);
    return new Map(tracing.customTags.map((t) => [t.tag, t.type.case === "value" ? t.type.value : t.type.case]));
  };
  const waypoint = tagsOf("waypoint");
  assert.equal(waypoint.get("istio.source_workload"), "%FILTER_STATE(downstream_peer_obj:FIELD:workload)%");
  assert.equal(waypoint.get("istio.destination_cluster_id"), "%FILTER_STATE(upstream_peer_obj:FIELD:cluster)%");
  assert.equal(waypoint.get("istio.mesh_id"), "literal");
  assert.equal(tagsOf("sidecar").has("istio.source_workload"), false);
});
