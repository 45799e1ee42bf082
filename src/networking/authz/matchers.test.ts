import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toJson } from "@bufbuild/protobuf";
import { matcher, route } from "../../api/index.ts";
import {
  headerMatcher,
  hostMatcher,
  jwtClaimListMatcher,
  quoteMeta,
  stringMatcher,
  stringOrMatcher,
} from "./matchers.ts";

const json = (m: matcher.StringMatcher) => toJson(matcher.StringMatcherSchema, m);

describe("authz matchers", () => {
  it("reads a value as exact, prefix*, *suffix, or * for any non-empty string", () => {
    assert.deepEqual(json(stringMatcher("a")), { exact: "a" });
    assert.deepEqual(json(stringMatcher("a*")), { prefix: "a" });
    assert.deepEqual(json(stringMatcher("*a")), { suffix: "a" });
    assert.deepEqual(json(stringMatcher("*")), { safeRegex: { regex: ".+" } });
  });

  it("puts a prefix before the value, as a regex for a suffix value", () => {
    assert.deepEqual(json(stringMatcher("td/ns/a", "spiffe://")), { exact: "spiffe://td/ns/a" });
    assert.deepEqual(json(stringMatcher("td/*", "spiffe://")), { prefix: "spiffe://td/" });
    assert.deepEqual(json(stringMatcher("*.sa", "spiffe://")), { safeRegex: { regex: "spiffe://.*\\.sa" } });
    assert.deepEqual(json(stringMatcher("*", "spiffe://")), { safeRegex: { regex: ".+" } });
  });

  it("escapes RE2 metacharacters as Go's regexp.QuoteMeta", () => {
    assert.equal(quoteMeta("a.b*c+(d)|[e]{f}^$?\\"), "a\\.b\\*c\\+\\(d\\)\\|\\[e\\]\\{f\\}\\^\\$\\?\\\\");
  });

  it("matches hosts without case and other headers with case; * is a presence match", () => {
    const host = toJson(route.HeaderMatcherSchema, hostMatcher(":authority", "*.example.com"));
    assert.deepEqual(host, { name: ":authority", stringMatch: { suffix: ".example.com", ignoreCase: true } });
    const method = toJson(route.HeaderMatcherSchema, headerMatcher(":method", "GET"));
    assert.deepEqual(method, { name: ":method", stringMatch: { exact: "GET" } });
    assert.deepEqual(toJson(route.HeaderMatcherSchema, headerMatcher("x", "*")), { name: "x", presentMatch: true });
  });

  it("or-s several values and keeps a single one bare", () => {
    assert.deepEqual(toJson(matcher.ValueMatcherSchema, stringOrMatcher(["a"])), { stringMatch: { exact: "a" } });
    assert.deepEqual(toJson(matcher.ValueMatcherSchema, stringOrMatcher(["a", "b*"])), {
      orMatch: { valueMatchers: [{ stringMatch: { exact: "a" } }, { stringMatch: { prefix: "b" } }] },
    });
  });

  it("matches a JWT claim that is a list holding the value or the value itself", () => {
    const m = jwtClaimListMatcher(["groups"], stringOrMatcher(["admin"]));
    assert.deepEqual(toJson(matcher.MetadataMatcherSchema, m), {
      filter: "envoy.filters.http.jwt_authn",
      path: [{ key: "payload" }, { key: "groups" }],
      value: {
        orMatch: {
          valueMatchers: [
            { listMatch: { oneOf: { stringMatch: { exact: "admin" } } } },
            { stringMatch: { exact: "admin" } },
          ],
        },
      },
    });
  });
});
