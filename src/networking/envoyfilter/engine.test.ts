// The engine's pieces the goldens do not show: pilot_envoy_filter_status, error notifications,
// extension configs added by name, bootstrap merges, and list merge semantics.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create, fromJson } from "@bufbuild/protobuf";
import { Registry } from "prom-client";
import { bootstrap, cluster, core, registry } from "../../api/index.ts";
import type { EnvoyFilter } from "../../config/types/index.ts";
import { parseProxy } from "../../model/proxy.ts";
import { NO_MEMOS } from "../../util/memo.ts";
import {
  applyBootstrapPatches,
  envoyFilterStatus,
  insertedExtensionConfigs,
  type PatchError,
  patchGeneratedClusters,
  patchSetFor,
  registerEnvoyFilterMetrics,
} from "./index.ts";

const proxy = (() => {
  const parsed = parseProxy(create(core.NodeSchema, { id: "sidecar~10.0.0.7~app.shop~shop.svc.cluster.local" }));
  assert.ok(parsed.proxy);
  return parsed.proxy;
})();

function envoyFilter(name: string, configPatches: unknown[]): EnvoyFilter {
  return {
    apiVersion: "networking.istio.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name, namespace: "shop" },
    spec: { configPatches },
  } as EnvoyFilter;
}

const passthrough = fromJson(
  cluster.ClusterSchema,
  { name: "PassthroughCluster", type: "ORIGINAL_DST", lbPolicy: "CLUSTER_PROVIDED", connectTimeout: "10s" },
  { registry },
);

test("pilot_envoy_filter_status: applied 1, matched nothing 0, refused patches as errors; new errors notified once", async () => {
  envoyFilterStatus.clear();
  const metrics = new Registry();
  registerEnvoyFilterMetrics(metrics);
  registerEnvoyFilterMetrics(metrics);
  const notified: PatchError[] = [];
  const stop = envoyFilterStatus.onNewError((e) => notified.push(e));
  const set = patchSetFor(
    NO_MEMOS,
    [
      envoyFilter("applied", [
        {
          applyTo: "CLUSTER",
          match: { cluster: { name: "PassthroughCluster" } },
          patch: { operation: "MERGE", value: { perConnectionBufferLimitBytes: 1 } },
        },
      ]),
      envoyFilter("unmatched", [
        { applyTo: "CLUSTER", match: { cluster: { name: "nope" } }, patch: { operation: "REMOVE" } },
      ]),
      envoyFilter("refused", [{ applyTo: "CLUSTER", patch: { operation: "MERGE", value: { bogus: 1 } } }]),
    ],
    proxy,
  );
  patchGeneratedClusters(set, [passthrough], false);
  patchSetFor(
    NO_MEMOS,
    [envoyFilter("refused", [{ applyTo: "CLUSTER", patch: { operation: "MERGE", value: { bogus: 1 } } }])],
    proxy,
  );
  stop();
  const text = await metrics.metrics();
  assert.match(text, /^pilot_envoy_filter_status\{name="shop\/applied",patch="cluster",result="applied"\} 1$/m);
  assert.match(text, /^pilot_envoy_filter_status\{name="shop\/unmatched",patch="cluster",result="applied"\} 0$/m);
  assert.match(text, /^pilot_envoy_filter_status\{name="shop\/refused",patch="cluster",result="error"\} 1$/m);
  assert.deepEqual(
    notified.map((e) => `${e.filter} ${e.path}`),
    ["shop/refused patch.value.bogus"],
  );
});

test("EXTENSION_CONFIG ADD patches add only the configs asked for by name", () => {
  const set = patchSetFor(
    NO_MEMOS,
    [
      envoyFilter("ecds", [
        {
          applyTo: "EXTENSION_CONFIG",
          patch: {
            operation: "ADD",
            value: {
              name: "wanted",
              typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.grpc_web.v3.GrpcWeb" },
            },
          },
        },
        {
          applyTo: "EXTENSION_CONFIG",
          patch: {
            operation: "ADD",
            value: {
              name: "other",
              typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.grpc_web.v3.GrpcWeb" },
            },
          },
        },
      ]),
    ],
    proxy,
  );
  assert.deepEqual(
    insertedExtensionConfigs(set, ["wanted", "absent"]).map((c) => c.name),
    ["wanted"],
  );
});

test("BOOTSTRAP MERGE patches merge into a copy (lists appended, or replaced with MERGE_AND_REPLACE_LIST)", () => {
  const base = fromJson(
    bootstrap.BootstrapSchema,
    { node: { id: "n" }, staticResources: { clusters: [{ name: "a" }] } },
    { registry },
  );
  const set = patchSetFor(
    NO_MEMOS,
    [
      envoyFilter("boot", [
        {
          applyTo: "BOOTSTRAP",
          patch: { operation: "MERGE", value: { staticResources: { clusters: [{ name: "b" }] } } },
        },
        { applyTo: "BOOTSTRAP", patch: { operation: "MERGE", value: { node: { cluster: "c" } } } },
      ]),
    ],
    proxy,
  );
  const merged = applyBootstrapPatches(set, base);
  assert.deepEqual(
    merged.staticResources?.clusters.map((c) => c.name),
    ["a", "b"],
  );
  assert.equal(merged.node?.id, "n");
  assert.equal(merged.node?.cluster, "c");
  assert.deepEqual(
    base.staticResources?.clusters.map((c) => c.name),
    ["a"],
  );
  const replaced = applyBootstrapPatches(
    patchSetFor(
      NO_MEMOS,
      [
        envoyFilter("boot", [
          {
            applyTo: "BOOTSTRAP",
            patch: { operation: "MERGE_AND_REPLACE_LIST", value: { staticResources: { clusters: [{ name: "b" }] } } },
          },
        ]),
      ],
      proxy,
    ),
    base,
  );
  assert.deepEqual(
    replaced.staticResources?.clusters.map((c) => c.name),
    ["b"],
  );
});
