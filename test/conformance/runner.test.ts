import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Corpus, growBaseline } from "./corpus.ts";
import { runConformance } from "./runner.ts";

// Cases "a" and "c" pass, "b" fails, "boom" throws.
const sample: Corpus = {
  name: "sample",
  cases: () => [
    { id: "a", run: () => ({ pass: true, detail: "ok" }) },
    { id: "b", run: () => ({ pass: false, detail: "wrong\nanswer" }) },
    { id: "c", run: () => ({ pass: true, detail: "ok" }) },
    {
      id: "boom",
      run: () => {
        throw new Error("kaput");
      },
    },
  ],
};
const absent: Corpus = { name: "absent", cases: () => [] };

describe("runConformance", () => {
  test("strict: every failing case counts and is listed on one line", () => {
    const report = runConformance([sample, absent], "/root", {}, false);
    assert.equal(report.failed, 2);
    assert.deepEqual(report.lines.slice(0, 2), ["sample: 2/4 passed", "  FAIL b: wrong answer"]);
    // A case that throws fails with the exception and its stack (on the same line).
    assert.match(report.lines[2], /^ {2}FAIL boom: threw: Error: kaput +at /);
    assert.equal(report.lines.at(-1), "absent: skipped (no files under /root)");
    assert.deepEqual(report.passing, { sample: ["a", "c"] });
  });

  test("ratchet: only a failing case recorded in the baseline counts", () => {
    const clean = runConformance([sample], "/root", { sample: ["a", "c"] }, true);
    assert.equal(clean.failed, 0);
    assert.deepEqual(clean.lines, ["sample: 2/4 passed (0 regressed, 2 failing but not in the baseline)"]);

    const regressed = runConformance([sample], "/root", { sample: ["a", "b"] }, true);
    assert.equal(regressed.failed, 1);
    assert.deepEqual(regressed.lines, [
      "sample: 2/4 passed (1 regressed, 1 failing but not in the baseline)",
      "  FAIL b: wrong answer",
    ]);
  });
});

test("growBaseline only adds, and sorts corpora and ids", () => {
  assert.deepEqual(growBaseline({ z: ["b", "x"], a: ["k"] }, { z: ["a", "b"], m: ["q"] }), {
    a: ["k"],
    m: ["q"],
    z: ["a", "b", "x"],
  });
});
