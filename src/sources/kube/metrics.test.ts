// pilot_k8s_cfg_events and pilot_k8s_reg_events from what a kind's mirror writes to the store: adds,
// updates and deletes from the watch and from a relist; objects hidden by the filters, invalid updates
// (the last good version stays) and relisted objects at the same resourceVersion count nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Registry } from "prom-client";
import { type ConfigObject, type KindInfo, lookupKind } from "../../config/index.ts";
import type { ConfigWriter } from "../types.ts";
import { KubeEventMetrics } from "./metrics.ts";
import { KindMirror, type MirrorEvent } from "./mirror.ts";

const kind = (apiVersion: string, name: string) => lookupKind(apiVersion, name) as KindInfo;
const VIRTUAL_SERVICE = kind("networking.istio.io/v1", "VirtualService");
const HTTP_ROUTE = kind("gateway.networking.k8s.io/v1", "HTTPRoute");
const SERVICE = kind("v1", "Service");
const NAMESPACE = kind("v1", "Namespace");
const SLICE = kind("discovery.k8s.io/v1", "EndpointSlice");
const CONFIG_MAP = kind("v1", "ConfigMap");

const writer: ConfigWriter = { upsert() {}, delete() {}, replace() {}, reportProblems() {} };

function vs(name: string, resourceVersion: string, hosts: unknown = ["a"], namespace = "ns"): ConfigObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name, namespace, resourceVersion },
    spec: { hosts, http: [{ route: [{ destination: { host: "a" } }] }] },
  };
}

test("a mirror reports each add, update and delete it writes, from the watch and from relists", () => {
  const events: MirrorEvent[] = [];
  const mirror = new KindMirror(VIRTUAL_SERVICE, {
    writer,
    source: "kubernetes",
    visible: (_kind, obj) => obj.metadata.namespace !== "hidden",
    onEvent: (k, e) => {
      assert.equal(k, VIRTUAL_SERVICE);
      events.push(e);
    },
  });
  mirror.replaceAll([vs("a", "1"), vs("b", "1"), vs("h", "1", ["a"], "hidden")]);
  assert.deepEqual(events.splice(0), ["add", "add"], "the first list: the visible objects");
  mirror.apply("MODIFIED", vs("a", "2"));
  mirror.apply("MODIFIED", vs("a", "3", "not a list"));
  mirror.apply("ADDED", vs("c", "1"));
  mirror.apply("DELETED", vs("b", "1"));
  mirror.apply("MODIFIED", vs("h", "2", ["x"], "hidden"));
  assert.deepEqual(
    events.splice(0),
    ["update", "add", "delete"],
    "an invalid update and a hidden object count nothing",
  );
  // A relist: a kept at its version, c changed, d new, the deleted b stays gone.
  mirror.replaceAll([vs("a", "3", "not a list"), vs("c", "2"), vs("d", "1")]);
  assert.deepEqual(events.splice(0), ["update", "add"]);
  mirror.replaceAll([]);
  assert.deepEqual(events.splice(0), ["delete", "delete", "delete"]);
});

async function samples(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split("\n").filter((l) => /^pilot_k8s_(cfg|reg)_events\{/.test(l));
}

test("Istio and Gateway API kinds count as config events by kind; the registry's kinds by Istio's handler names", async () => {
  const registry = new Registry();
  const metrics = new KubeEventMetrics(registry);
  metrics.record(VIRTUAL_SERVICE, "add");
  metrics.record(VIRTUAL_SERVICE, "add");
  metrics.record(HTTP_ROUTE, "delete");
  metrics.record(SERVICE, "update");
  metrics.record(SLICE, "add");
  metrics.record(NAMESPACE, "add");
  metrics.record(CONFIG_MAP, "add");
  assert.deepEqual(await samples(registry), [
    'pilot_k8s_cfg_events{type="VirtualService",event="add"} 2',
    'pilot_k8s_cfg_events{type="HTTPRoute",event="delete"} 1',
    'pilot_k8s_reg_events{type="Services",event="update"} 1',
    'pilot_k8s_reg_events{type="EndpointSlice",event="add"} 1',
    'pilot_k8s_reg_events{type="Namespaces",event="add"} 1',
    'pilot_k8s_reg_events{type="Namespaces-TrafficDistribution",event="add"} 1',
  ]);
});
