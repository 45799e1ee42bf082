import assert from "node:assert/strict";
import { test } from "node:test";
import { parseGoBool } from "./go-bool.ts";

test("parseGoBool reads exactly what Go's strconv.ParseBool reads", () => {
  for (const value of ["1", "t", "T", "TRUE", "true", "True"]) assert.equal(parseGoBool(value), true, value);
  for (const value of ["0", "f", "F", "FALSE", "false", "False"]) assert.equal(parseGoBool(value), false, value);
  for (const value of ["", "yes", "no", "on", "tRUE", "fAlse", " true", "true ", "2", "y"]) {
    assert.equal(parseGoBool(value), undefined, JSON.stringify(value));
  }
});
