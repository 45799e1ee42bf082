// The surface comparison's logic without a cluster: JSON shapes (and that a changed one is reported at
// its path), metric families from Prometheus text (names, types, label names; values ignored), the
// form of /version and the verdict on what an xDS type URL got.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import {
  answerForm,
  compareAnswers,
  compareMetrics,
  compareTypeAnswers,
  jsonShape,
  parsePrometheus,
  shapeDiff,
  surfaceReport,
  versionShape,
} from "./surfaces.ts";

const syncz = (ack: string | number): JsonObject[] => [
  { cluster_id: "Kubernetes", proxy: "a.ns", istio_version: "1.31.0", cluster_acked: ack, listener_acked: "x" },
  { cluster_id: "Kubernetes", proxy: "b.ns", istio_version: "1.31.0", cluster_acked: ack },
];

test("equal shapes: values never count, arrays are their elements' merged shape", () => {
  const a = jsonShape({ n: 1, s: "x", list: [{ a: 1 }, { b: true }] });
  const b = jsonShape({ n: 2, s: "y", list: [{ a: 7, b: false }] });
  assert.deepEqual(shapeDiff(a, b), []);
  assert.deepEqual(shapeDiff(jsonShape(syncz("v1")), jsonShape(syncz("v2"))), []);
});

test("a deliberately changed shape is reported at its path, both ways", () => {
  // A field of another type, a field missing, a field added.
  assert.deepEqual(shapeDiff(jsonShape(syncz("v1")), jsonShape(syncz(1))), [
    "[].cluster_acked: istiod string | sluice number",
  ]);
  const without = syncz("v1").map(({ listener_acked: _, ...rest }) => rest);
  assert.deepEqual(shapeDiff(jsonShape(syncz("v1")), jsonShape(without)), [
    "[].listener_acked: istiod string | sluice (absent)",
  ]);
  assert.deepEqual(shapeDiff(jsonShape({ a: { b: 1 } }), jsonShape({ a: { b: 1, c: [] } })), [
    ".a.c: istiod (absent) | sluice array",
  ]);
  assert.deepEqual(shapeDiff(jsonShape([{ a: 1 }]), jsonShape({ a: 1 })), [".: istiod array | sluice object{a}"]);
});

test("null and empty arrays are no evidence; fields named in PascalCase and camelCase differ", () => {
  assert.deepEqual(shapeDiff(jsonShape({ a: null, b: [] }), jsonShape({ a: { x: 1 }, b: [{ y: "z" }] })), []);
  assert.deepEqual(shapeDiff(jsonShape({ RootNamespace: "x" }), jsonShape({ root_namespace: "x" })), [
    ".RootNamespace: istiod string | sluice (absent)",
    ".root_namespace: istiod (absent) | sluice string",
  ]);
});

test("entries under names (hosts, type URLs) are one map entry; a map empty on one side is no difference", () => {
  const istiod = jsonShape({ "a.ns.svc.cluster.local": { ns: { Shards: {} } }, "b.ns.svc.cluster.local": { ns: {} } });
  const sluice = jsonShape({ "c.other.svc.cluster.local": { ns: { Shards: {} } } });
  assert.deepEqual(shapeDiff(istiod, sluice), []);
  assert.deepEqual(shapeDiff(jsonShape({}), sluice), []);
  assert.deepEqual(
    shapeDiff(jsonShape({ total: "0B" }), jsonShape({ total: "1kB", "type.googleapis.com/x": "1kB" })),
    [],
  );
  assert.deepEqual(shapeDiff(istiod, jsonShape({ "c.svc": { ns: { Shards: [] } } })), [
    ".*.ns.Shards: istiod object{} | sluice array",
  ]);
});

test("HTTP answers: status and body kind first, then the JSON shape", () => {
  const json = answerForm(200, "application/json", '{"a":1}');
  assert.deepEqual(compareAnswers(json, answerForm(200, "text/plain", '{"a":2}')), []);
  assert.deepEqual(compareAnswers(json, answerForm(404, "text/plain", "404 page not found")), [
    "status: istiod 200 | sluice 404",
    "body: istiod json | sluice text",
  ]);
  assert.deepEqual(compareAnswers(json, answerForm(200, "", "")), ["body: istiod json | sluice empty"]);
});

const ISTIOD_METRICS = `# HELP pilot_xds_pushes Pilot build and send errors for lds, rds, cds and eds.
# TYPE pilot_xds_pushes counter
pilot_xds_pushes{type="cds"} 3
pilot_xds_pushes{type="lds"} 3
# TYPE pilot_xds_send_time histogram
pilot_xds_send_time_bucket{le="0.01"} 14
pilot_xds_send_time_bucket{le="+Inf"} 14
pilot_xds_send_time_sum 0.002
pilot_xds_send_time_count 14
# TYPE pilot_k8s_cfg_events counter
pilot_k8s_cfg_events{event="add",type="VirtualService"} 2
# TYPE pilot_xds_cds_reject gauge
pilot_xds_cds_reject{err="InvalidArgument",node="sleep.default"} 1
# TYPE go_goroutines gauge
go_goroutines 300
`;

test("metrics: names, types and label names compared, values and runtime families not", () => {
  const istiod = parsePrometheus(ISTIOD_METRICS);
  assert.deepEqual([...(istiod.get("pilot_xds_send_time")?.labels ?? [])], []);
  assert.equal(istiod.get("pilot_xds_send_time")?.type, "histogram");
  const sluice = parsePrometheus(`# TYPE pilot_xds_pushes counter
pilot_xds_pushes{type="eds"} 9
# TYPE pilot_xds_send_time histogram
pilot_xds_send_time_bucket{le="+Inf"} 0
pilot_xds_send_time_sum 0
pilot_xds_send_time_count 0
# TYPE pilot_k8s_cfg_events counter
pilot_k8s_cfg_events{event="add",kind="VirtualService"} 2
# TYPE pilot_xds_cds_reject counter
pilot_xds_cds_reject{err="InvalidArgument",node="sleep.default"} 1
# TYPE nodejs_heap_size_used_bytes gauge
nodejs_heap_size_used_bytes 1e6
# TYPE sluiced_array_buffers_bytes gauge
sluiced_array_buffers_bytes 10
`);
  const byId = new Map(compareMetrics(istiod, sluice).map((c) => [c.id, c]));
  assert.deepEqual(
    [...byId.keys()],
    [
      "metrics pilot_k8s_cfg_events",
      "metrics pilot_xds_cds_reject",
      "metrics pilot_xds_pushes",
      "metrics pilot_xds_send_time",
      "metrics sluiced_array_buffers_bytes",
    ],
  );
  assert.equal(byId.get("metrics pilot_xds_pushes")?.outcome, "identical");
  assert.deepEqual(byId.get("metrics pilot_k8s_cfg_events")?.paths, ["labels: istiod event,type | sluice event,kind"]);
  assert.deepEqual(byId.get("metrics pilot_xds_cds_reject")?.paths, ["type: istiod gauge | sluice counter"]);
  // An unlabelled histogram at zero is a declaration only (prom-client shows one, OpenTelemetry does not).
  assert.deepEqual(byId.get("metrics pilot_xds_send_time"), {
    id: "metrics pilot_xds_send_time",
    outcome: "only-istiod",
    paths: ["sluice declares it but recorded nothing"],
  });
  assert.equal(byId.get("metrics sluiced_array_buffers_bytes")?.outcome, "only-sluice");
});

test("/version: istiod's <version>-<revision>-<status>, by the form of each part", () => {
  const istiod = versionShape("1.31-dev-eed52ebb66ad-Clean");
  assert.deepEqual(istiod, {
    version: "release or unknown",
    revision: "commit or unknown",
    status: "Clean|Modified|unknown",
  });
  assert.deepEqual(versionShape("0.1.0-0123456789abcdef0123456789abcdef01234567-unknown"), istiod);
  assert.deepEqual(versionShape("0.1.0"), { format: "not <version>-<revision>-<status> (1 part(s))" });
  assert.notDeepEqual(versionShape("0.1.0-abc-dirty"), istiod);
});

test("xDS types: answering, failing the same way, or not", () => {
  const pcds = "type.googleapis.com/istio.mesh.v1alpha1.ProxyConfig";
  const error = {
    kind: "error",
    code: 16,
    message: "the api generator requires an authenticated control-plane identity",
  } as const;
  assert.deepEqual(compareTypeAnswers(pcds, { kind: "silent" }, { kind: "silent" }).outcome, "identical");
  assert.deepEqual(compareTypeAnswers(pcds, { kind: "silent" }, error), {
    id: `xds-type ${pcds}`,
    outcome: "only-istiod",
    paths: [`.: istiod stays silent | sluice fails the stream (16: ${error.message})`],
  });
  assert.equal(compareTypeAnswers(pcds, error, { kind: "answers", typeUrl: "", resources: 0 }).outcome, "only-sluice");
  assert.deepEqual(compareTypeAnswers(pcds, error, { ...error, message: "authentication required" }).paths, [
    `message: istiod ${error.message} | sluice authentication required`,
  ]);
  const cds = (n: number) =>
    ({ kind: "answers", typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster", resources: n }) as const;
  assert.equal(compareTypeAnswers("cds", cds(3), cds(5)).outcome, "identical");
  assert.deepEqual(compareTypeAnswers("cds", cds(3), { kind: "answers", typeUrl: "", resources: 0 }).paths, [
    "resources: istiod 3 | sluice 0",
  ]);
});

test("the report: N/M identical, then each other comparison with its first paths", () => {
  const lines = surfaceReport(
    [
      { id: "version", outcome: "identical", paths: [] },
      { id: "debug /debug/syncz", outcome: "differs", paths: ["a", "b", "c", "d"] },
    ],
    2,
  );
  assert.deepEqual(lines, [
    "surfaces: 1/2 identical",
    "  differs debug /debug/syncz",
    "      a",
    "      b",
    "      … 2 more",
  ]);
});
