import assert from "node:assert/strict";
import { test } from "node:test";
import { goFixed, goFloat, goMultiError, goQuote } from "./format.ts";

test("Go %q escapes quotes, backslashes and control characters", () => {
  assert.equal(goQuote('a"b\\c\n\x01'), '"a\\"b\\\\c\\n\\x01"');
  assert.equal(goQuote("héllo"), '"héllo"');
});

test("Go float %v and %f", () => {
  assert.equal(goFloat(101), "101");
  assert.equal(goFloat(0.5), "0.5");
  assert.equal(goFloat(0.00001), "1e-05");
  assert.equal(goFloat(1e21), "1e+21");
  assert.equal(goFixed(101), "101.000000");
});

test("go-multierror text", () => {
  assert.equal(goMultiError(["a"]), "1 error occurred:\n\t* a\n\n");
  assert.equal(goMultiError(["a", "b"]), "2 errors occurred:\n\t* a\n\t* b\n\n");
});
