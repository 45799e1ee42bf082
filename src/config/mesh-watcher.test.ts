import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MeshWatcher } from "./mesh-watcher.ts";

describe("MeshWatcher", () => {
  test("puts changed text in force and tells listeners; the same text changes nothing", () => {
    const watcher = new MeshWatcher("trustDomain: one.example\n");
    const seen: (string | undefined)[] = [];
    watcher.onChange((mesh) => seen.push(mesh.trustDomain));
    assert.deepEqual(watcher.update("trustDomain: one.example\n"), { changed: false });
    assert.deepEqual(watcher.update("trustDomain: two.example\n"), { changed: true, warnings: [] });
    assert.equal(watcher.mesh.trustDomain, "two.example");
    assert.deepEqual(seen, ["two.example"]);
  });

  test("text that does not load is returned as an error and the last good config stays", () => {
    const watcher = new MeshWatcher("trustDomain: one.example\n");
    let told = 0;
    watcher.onChange(() => told++);
    const update = watcher.update("connectTimeout: 1x\n");
    assert.ok("error" in update, JSON.stringify(update));
    assert.match(update.error.message, /invalid mesh config/);
    assert.equal(watcher.mesh.trustDomain, "one.example");
    assert.equal(told, 0);
  });

  test("no text is Istio's defaults", () => {
    const watcher = new MeshWatcher("trustDomain: one.example\n");
    assert.deepEqual(watcher.update(undefined), { changed: true, warnings: [] });
    assert.equal(watcher.mesh.trustDomain, "cluster.local");
  });

  test("text that does not load at start is refused", () => {
    assert.throws(() => new MeshWatcher("connectTimeout: 1x\n"), /invalid mesh config/);
  });
});
