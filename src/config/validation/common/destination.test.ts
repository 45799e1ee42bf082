import assert from "node:assert/strict";
import { test } from "node:test";
import { collect } from "../../../../test/support/validation.ts";
import { validateDestination } from "./destination.ts";

test("destination: host * is invalid, short names and wildcards pass, IPs fail", () => {
  assert.deepEqual(collect((out) => validateDestination({ host: "*" }, out)).errors, [
    { path: "spec.host", message: "invalid destination host *" },
  ]);
  assert.deepEqual(collect((out) => validateDestination({ host: "reviews" }, out)).errors, []);
  assert.deepEqual(collect((out) => validateDestination({ host: "*.foo.com" }, out)).errors, []);
  assert.deepEqual(collect((out) => validateDestination({ host: "1.2.3.4" }, out)).errors, [
    { path: "spec.host", message: 'domain name "2.3.4" invalid (top level domain "4" cannot be all-numeric)' },
  ]);
});

test("destination: subset name and port number", () => {
  assert.deepEqual(collect((out) => validateDestination({ host: "a", subset: "v_1", port: {} }, out)).errors, [
    { path: "spec.subset", message: "subset name is invalid: v_1" },
    { path: "spec.port", message: "port number 0 must be in the range 1..65535" },
  ]);
});
