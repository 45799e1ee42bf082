import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ConfigObject } from "../config/index.ts";
import { MemorySource } from "./memory.ts";
import { ConfigStore } from "./store.ts";

const VS = "networking.istio.io/VirtualService";

function virtualService(name: string, hosts: unknown, namespace?: string): ConfigObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: namespace === undefined ? { name } : { name, namespace },
    spec: { hosts, http: [{ route: [{ destination: { host: "backend" } }] }] },
  };
}

function hostsOf(obj: ConfigObject | undefined): unknown {
  return (obj?.spec as { hosts?: unknown } | undefined)?.hosts;
}

describe("MemorySource", () => {
  test("adds, updates and deletes valid objects", () => {
    const store = new ConfigStore();
    const memory = new MemorySource(store);
    assert.deepEqual(memory.apply(virtualService("a", ["a"], "prod")).errors, []);
    assert.deepEqual(hostsOf(store.collection(VS).get("prod/a")), ["a"]);
    memory.apply(virtualService("a", ["b"], "prod"));
    assert.deepEqual(hostsOf(store.collection(VS).get("prod/a")), ["b"]);
    assert.equal(store.get({ kind: VS, namespace: "prod", name: "a" })?.source, "memory");
    memory.delete({ kind: VS, namespace: "prod", name: "a" });
    assert.equal(store.collection(VS).size, 0);
  });

  test("an object without a namespace lands in the default namespace", () => {
    const store = new ConfigStore();
    new MemorySource(store).apply(virtualService("a", ["a"]));
    assert.equal(store.collection(VS).get("default/a")?.metadata.namespace, "default");
  });

  test("an invalid object is reported and its last good version stays until it is fixed or deleted", () => {
    const store = new ConfigStore();
    const memory = new MemorySource(store, "test");
    memory.apply(virtualService("a", ["good"], "prod"));
    const admission = memory.apply(virtualService("a", "not-a-list", "prod"));
    assert.ok(admission.errors.length > 0);
    assert.deepEqual(hostsOf(store.collection(VS).get("prod/a")), ["good"]);
    const problems = store.problems();
    assert.equal(problems.length, admission.errors.length);
    assert.equal(problems[0].source, "test");
    assert.equal(problems[0].where, `${VS} prod/a`);

    memory.apply(virtualService("a", ["fixed"], "prod"));
    assert.deepEqual(store.problems(), []);
    assert.deepEqual(hostsOf(store.collection(VS).get("prod/a")), ["fixed"]);

    memory.apply(virtualService("a", 7, "prod"));
    memory.delete({ kind: VS, namespace: "prod", name: "a" });
    assert.deepEqual(store.problems(), []);
    assert.equal(store.collection(VS).size, 0);
  });
});
