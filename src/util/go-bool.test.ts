import assert from "node:assert/strict";
import { test } from "node:test";
import { envBool, parseGoBool } from "./go-bool.ts";

test("parseGoBool reads exactly what Go's strconv.ParseBool reads", () => {
  for (const value of ["1", "t", "T", "TRUE", "true", "True"]) assert.equal(parseGoBool(value), true, value);
  for (const value of ["0", "f", "F", "FALSE", "false", "False"]) assert.equal(parseGoBool(value), false, value);
  for (const value of ["", "yes", "no", "on", "tRUE", "fAlse", " true", "true ", "2", "y"]) {
    assert.equal(parseGoBool(value), undefined, JSON.stringify(value));
  }
});

test("envBool keeps the default when the setting is unset or unparsable, as istiod's env.Register", () => {
  const env = { ON: "True", OFF: "0", BAD: "yes", EMPTY: "" };
  assert.equal(envBool(env, "ON", false), true);
  assert.equal(envBool(env, "OFF", true), false);
  assert.equal(envBool(env, "BAD", true), true);
  assert.equal(envBool(env, "EMPTY", false), false);
  assert.equal(envBool(env, "UNSET", true), true);
});
