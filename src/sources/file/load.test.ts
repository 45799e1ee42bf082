import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { nameHosts, vs } from "../../../test/support/file-source.ts";
import { loadFile } from "./load.ts";

/** The same VirtualService with a field validation rejects. */
function invalidVs(name: string): string {
  return vs(name).replace("  hosts: [", "  hosts: 7\n  gateways: [");
}

describe("loadFile", () => {
  test("every valid document defines its object; a namespace-less one lands in default", () => {
    const load = loadFile("file", "f.yaml", `${vs("a")}---\n${vs("b").replace("  namespace: prod\n", "")}`, []);
    assert.deepEqual(nameHosts(load.objects), ["a=a", "b=b"]);
    assert.deepEqual(
      load.objects.map((o) => o.metadata.namespace),
      ["prod", "default"],
    );
    assert.deepEqual(load.problems, []);
  });

  test("a document that fails validation keeps its last good version, and its neighbours update", () => {
    const first = loadFile("file", "f.yaml", [vs("a"), vs("b"), vs("c")].join("---\n"), []);
    const next = loadFile(
      "file",
      "f.yaml",
      [vs("a", "a2"), invalidVs("b"), vs("c", "c2")].join("---\n"),
      first.objects,
    );
    assert.deepEqual(nameHosts(next.objects), ["a=a2", "b=b", "c=c2"]);
    assert.ok(next.problems.length > 0);
    for (const problem of next.problems) {
      assert.equal(problem.where, "f.yaml:13");
      assert.match(problem.message, /^networking\.istio\.io\/VirtualService prod\/b: /);
    }
  });

  test("a new document that fails validation adds nothing", () => {
    const load = loadFile("file", "f.yaml", invalidVs("b"), []);
    assert.deepEqual(load.objects, []);
    assert.ok(load.problems.length > 0);
  });

  test("while a document does not decode, the file keeps its last good version whole", () => {
    const first = loadFile("file", "f.yaml", [vs("a"), vs("b"), vs("c")].join("---\n"), []);
    // A half-written file: a is complete and changed, b's document is cut inside a flow sequence, c is
    // not there yet. Applying a's change alone would serve a state that is neither file.
    const half = `${vs("a", "a2")}---\n${vs("b").slice(0, vs("b").indexOf("[") + 2)}`;
    const next = loadFile("file", "f.yaml", half, first.objects);
    assert.deepEqual(nameHosts(next.objects), ["a=a", "b=b", "c=c"]);
    assert.equal(next.problems.length, 1);
    assert.match(next.problems[0].message, /^syntax error/);
    assert.match(next.problems[0].where, /^f\.yaml:\d+$/);

    // Once the whole file decodes, it is applied: objects it no longer defines go.
    const whole = loadFile("file", "f.yaml", vs("a", "a3"), next.objects);
    assert.deepEqual(nameHosts(whole.objects), ["a=a3"]);
    assert.deepEqual(whole.problems, []);
  });

  test("a new file that does not decode adds nothing, not even its good documents", () => {
    const half = `${vs("a")}---\n${vs("b").slice(0, vs("b").indexOf("[") + 2)}`;
    const load = loadFile("file", "f.yaml", half, []);
    assert.deepEqual(load.objects, []);
    assert.equal(load.problems.length, 1);
  });

  test("a misspelled kind keeps the object's last good version, with an error naming it", () => {
    const first = loadFile("file", "f.yaml", [vs("a"), vs("b")].join("---\n"), []);
    const typo = vs("b", "b2").replace("kind: VirtualService", "kind: VirtualServce");
    const next = loadFile("file", "f.yaml", [vs("a", "a2"), typo].join("---\n"), first.objects);
    assert.deepEqual(nameHosts(next.objects), ["a=a2", "b=b"]);
    assert.deepEqual(
      next.problems.map((p) => `${p.where} ${p.message}`),
      [
        "f.yaml:13 networking.istio.io/VirtualServce prod/b: apiVersion: unrecognized type networking.istio.io/v1, Kind=VirtualServce; until this document is fixed, no object leaves f.yaml",
      ],
    );

    // Fixed: the object takes its new version.
    const fixed = loadFile("file", "f.yaml", [vs("a", "a2"), vs("b", "b2")].join("---\n"), next.objects);
    assert.deepEqual(nameHosts(fixed.objects), ["a=a2", "b=b2"]);
    assert.deepEqual(fixed.problems, []);
  });

  test("an unknown version of a known kind keeps the object's last good version too, namespace or not", () => {
    const first = loadFile("file", "f.yaml", [vs("a"), vs("b").replace("  namespace: prod\n", "")].join("---\n"), []);
    const future = vs("b", "b2")
      .replace("networking.istio.io/v1", "networking.istio.io/v9")
      .replace("  namespace: prod\n", "");
    const next = loadFile("file", "f.yaml", [vs("a", "a2"), future].join("---\n"), first.objects);
    assert.deepEqual(nameHosts(next.objects), ["a=a2", "b=b"]);
    assert.equal(next.problems.length, 1);
    assert.match(next.problems[0].message, /^networking\.istio\.io\/VirtualService default\/b: .*unrecognized type/);
  });

  test("kinds outside the mesh's groups are skipped with a warning; unknown mesh kinds are problems", () => {
    const deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: prod}\n";
    const typo = "apiVersion: networking.istio.io/v1\nkind: VirtualSevice\nmetadata: {name: t, namespace: prod}\n";
    const load = loadFile("file", "f.yaml", [vs("a"), deployment, typo].join("---\n"), []);
    assert.deepEqual(nameHosts(load.objects), ["a=a"]);
    assert.deepEqual(
      load.warnings.map((w) => `${w.where} ${w.message}`),
      ["f.yaml:13 apps/v1 Deployment is not a kind Sluice reads; skipped"],
    );
    assert.deepEqual(
      load.problems.map((p) => p.where),
      ["f.yaml:17"],
    );
    assert.match(load.problems[0].message, /unrecognized type networking\.istio\.io\/v1, Kind=VirtualSevice/);
  });

  test("an object defined twice in one file: the first counts, the second is reported with its line", () => {
    const load = loadFile("file", "f.yaml", [vs("a", "first"), vs("a", "second")].join("---\n"), []);
    assert.deepEqual(nameHosts(load.objects), ["a=first"]);
    assert.equal(load.problems.length, 1);
    assert.equal(load.problems[0].where, "f.yaml:13");
    assert.match(load.problems[0].message, /already defined at line 1/);
  });
});
