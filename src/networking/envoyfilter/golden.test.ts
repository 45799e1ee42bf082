// Golden tests of the patch engine: each `testdata/<case>.in.yaml` names a proxy and EnvoyFilters,
// which patch the small generated config of `testdata/base.yaml` (a sidecar's or a gateway's);
// `<case>.out.yaml` holds every resource the patches changed or added in full (the others by name)
// and the errors recorded. Every patched resource must pass Envoy's PGV constraints, and the
// generated config must not be mutated (the builders share it between proxies).
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { create, type DescMessage, fromJson, type JsonValue, type Message, toJson } from "@bufbuild/protobuf";
import { parse } from "yaml";
import { assertGolden, readGoldenInput, testdataDir } from "../../../test/support/golden.ts";
import { cluster, core, listener, registry, route } from "../../api/index.ts";
import { checkMessage } from "../../api/pgv/index.ts";
import type { EnvoyFilter } from "../../config/types/index.ts";
import { EnvoyFilterIndex } from "../../model/envoy-filter-index.ts";
import { parseProxy } from "../../model/proxy.ts";
import { NO_MEMOS } from "../../util/memo.ts";
import {
  envoyFilterStatus,
  patchGeneratedClusters,
  patchGeneratedListeners,
  patchGeneratedRouteConfiguration,
  patchSetFor,
} from "./index.ts";

const dir = testdataDir(import.meta.url);
const ROOT_NAMESPACE = "istio-system";

interface BaseConfig {
  listeners: JsonValue[];
  routes: JsonValue[];
  clusters: JsonValue[];
  inboundHosts?: Record<string, string[]>;
  portMap?: Record<string, number[]>;
}

interface CaseInput {
  proxy?: {
    type?: "sidecar" | "router";
    namespace?: string;
    labels?: Record<string, string>;
    metadata?: Record<string, string>;
  };
  envoyFilters: EnvoyFilter[];
}

const base = parse(readFileSync(join(dir, "base.yaml"), "utf8")) as Record<"sidecar" | "router", BaseConfig>;

function decodeAll<T extends Message>(schema: DescMessage, values: JsonValue[]): T[] {
  return values.map((v) => fromJson(schema, v, { registry }) as T);
}

const json = (schema: DescMessage, m: Message) => toJson(schema, m, { registry });

/** Changed or added resources in full, unchanged ones by name; every one PGV-checked. */
function summarize(schema: DescMessage, before: readonly Message[], after: readonly Message[]): JsonValue[] {
  const original = new Map(
    before.map((m) => [(m as Message & { name: string }).name, JSON.stringify(json(schema, m))]),
  );
  return after.map((m) => {
    const name = (m as Message & { name: string }).name;
    const violations = checkMessage(schema, m);
    assert.deepEqual(violations, [], `patched ${schema.typeName} ${name} breaks Envoy's constraints`);
    const out = json(schema, m);
    return original.get(name) === JSON.stringify(out) ? name : out;
  });
}

function runCase(name: string): JsonValue {
  const input = readGoldenInput(dir, name) as CaseInput;
  const type = input.proxy?.type ?? "sidecar";
  const namespace = input.proxy?.namespace ?? "shop";
  const parsed = parseProxy(
    create(core.NodeSchema, {
      id: `${type}~10.0.0.7~app.${namespace}~${namespace}.svc.cluster.local`,
      metadata: { NAMESPACE: namespace, LABELS: input.proxy?.labels ?? { app: "reviews" }, ...input.proxy?.metadata },
    }),
  );
  assert.ok(parsed.proxy, parsed.error);
  const proxy = parsed.proxy;
  const filters = new EnvoyFilterIndex(input.envoyFilters, ROOT_NAMESPACE).forProxy({
    namespace,
    labels: proxy.labels,
  });
  const config = base[type];
  const listeners = decodeAll<listener.Listener>(listener.ListenerSchema, config.listeners);
  const routes = decodeAll<route.RouteConfiguration>(route.RouteConfigurationSchema, config.routes);
  const clusters = decodeAll<cluster.Cluster>(cluster.ClusterSchema, config.clusters);
  const snapshot = JSON.stringify(
    [listeners, routes, clusters].map((l) => l.map((m) => json(registry.getMessage(m.$typeName)!, m))),
  );
  const portMap = new Map(Object.entries(config.portMap ?? {}).map(([k, v]) => [Number(k), new Set(v)]));

  envoyFilterStatus.clear();
  const set = patchSetFor(NO_MEMOS, filters, proxy);
  const router = type === "router";
  const patchedListeners = patchGeneratedListeners(set, listeners, router);
  const patchedRoutes = routes.map((rc) => patchGeneratedRouteConfiguration(set, rc, router, portMap));
  const patchedClusters = patchGeneratedClusters(set, clusters, router, (c) => config.inboundHosts?.[c.name] ?? []);
  const after = JSON.stringify(
    [listeners, routes, clusters].map((l) => l.map((m) => json(registry.getMessage(m.$typeName)!, m))),
  );
  assert.equal(after, snapshot, "the generated config was mutated");
  return {
    filters: filters.map((f) => `${f.metadata.namespace}/${f.metadata.name}`),
    listeners: summarize(listener.ListenerSchema, listeners, patchedListeners),
    routes: summarize(route.RouteConfigurationSchema, routes, patchedRoutes),
    clusters: summarize(cluster.ClusterSchema, clusters, patchedClusters),
    errors: envoyFilterStatus.recordedErrors() as unknown as JsonValue,
  };
}

const cases = readdirSync(dir)
  .filter((f) => f.endsWith(".in.yaml"))
  .map((f) => f.slice(0, -".in.yaml".length))
  .sort();

for (const name of cases) {
  test(`EnvoyFilter golden: ${name}`, () => {
    assertGolden(dir, name, runCase(name));
  });
}
