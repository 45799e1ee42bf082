import assert from "node:assert/strict";
import { test } from "node:test";
import { routeAction, runGoldenCase, vhostNamed } from "../../../test/support/route-cases.ts";
import { core } from "../../api/index.ts";
import { NO_MEMOS } from "../../util/memo.ts";
import { translateHeaderOperations } from "./headers.ts";

test("headers golden: set (overwrite) before add (append), each sorted; pseudo-headers and host never emitted", () => {
  const r = vhostNamed(runGoldenCase("headers").get("9080"), "reviews.default.svc.cluster.local:9080").routes[0];
  assert.deepEqual(
    r.requestHeadersToAdd.map((h) => [h.header?.key, h.appendAction]),
    [
      ["x-a", core.HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD],
      ["x-b", core.HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD],
      ["x-c", core.HeaderValueOption_HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD],
    ],
  );
  assert.deepEqual(r.requestHeadersToRemove, ["x-remove"]);
  assert.deepEqual(
    r.responseHeadersToAdd.map((h) => h.header?.key),
    ["cache-control", "x-served"],
  );
  assert.deepEqual(r.responseHeadersToRemove, ["server"]);
});

test(":authority in set wins over host in add and becomes host_rewrite_literal", () => {
  const r = vhostNamed(runGoldenCase("headers").get("9080"), "reviews.default.svc.cluster.local:9080").routes[0];
  assert.deepEqual(routeAction(r).hostRewriteSpecifier, { case: "hostRewriteLiteral", value: "set.example.com" });
  assert.equal(translateHeaderOperations(NO_MEMOS, { request: { add: { Host: "h" } } }).authority, "h");
});
