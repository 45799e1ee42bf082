import assert from "node:assert/strict";
import { test } from "node:test";
import { index } from "./indexes.ts";
import { StaticCollection } from "./static.ts";

interface Workload {
  name: string;
  services: string[];
}

const byName = { keyOf: (w: Workload) => w.name };

test("an index built over existing objects files each under every key it extracts", () => {
  const workloads = new StaticCollection(
    [
      { name: "w1", services: ["a", "b"] },
      { name: "w2", services: ["b"] },
      { name: "w3", services: [] },
    ],
    byName,
  );
  const byService = index(workloads, (w) => w.services, "by-service");
  assert.deepEqual(
    byService.lookup("b").map((w) => w.name),
    ["w1", "w2"],
  );
  assert.deepEqual(byService.lookup("missing"), []);
  assert.deepEqual(byService.keys().sort(), ["a", "b"]);
  assert.deepEqual(workloads.debug().indexes, ["by-service"]);
});

test("an index follows updates and deletes, keeping an object's place under keys it keeps", () => {
  const workloads = new StaticCollection(
    [
      { name: "w1", services: ["a"] },
      { name: "w2", services: ["a"] },
    ],
    byName,
  );
  const byService = index(workloads, (w) => w.services);
  workloads.upsert({ name: "w1", services: ["a", "c"] });
  assert.deepEqual(
    byService.lookup("a").map((w) => w.name),
    ["w1", "w2"],
  );
  assert.deepEqual(byService.lookup("c"), [{ name: "w1", services: ["a", "c"] }]);
  workloads.upsert({ name: "w2", services: ["c"] });
  workloads.delete("w1");
  assert.deepEqual(byService.lookup("a"), []);
  assert.deepEqual(byService.keys(), ["c"]);
});

test("a handler reacting to a change already sees it in the index", () => {
  const workloads = new StaticCollection<Workload>([], byName);
  const byService = index(workloads, (w) => w.services);
  const seen: number[] = [];
  workloads.register(() => seen.push(byService.lookup("a").length));
  workloads.upsert({ name: "w1", services: ["a"] });
  assert.deepEqual(seen, [1]);
});

test("the namespace index groups Kubernetes objects by metadata.namespace", () => {
  const configs = new StaticCollection([
    { metadata: { name: "x", namespace: "ns1" } },
    { metadata: { name: "y", namespace: "ns2" } },
    { metadata: { name: "cluster-wide" } },
  ]);
  const namespaces = configs.namespaceIndex();
  assert.equal(configs.namespaceIndex(), namespaces);
  assert.deepEqual(namespaces.lookup("ns2"), [{ metadata: { name: "y", namespace: "ns2" } }]);
  assert.deepEqual(namespaces.keys(), ["ns1", "ns2"]);
});
