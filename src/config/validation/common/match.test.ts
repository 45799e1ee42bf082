import assert from "node:assert/strict";
import { test } from "node:test";
import { collect, messages } from "../../../../test/support/validation.ts";
import { re2SyntaxError, regexError, validateStringMatch } from "./match.ts";

const HINT = "Istio uses RE2 style regex-based match (https://github.com/google/re2/wiki/Syntax)";

test("regex: RE2 syntax JavaScript lacks still compiles", () => {
  for (const ok of ["(?i)abc", "(?P<name>a+)", "\\Qa.b\\E", "[[:alpha:]]+", "\\Afoo\\z", "(?s:.)", "^/api/v[0-9]+$"]) {
    assert.equal(re2SyntaxError(ok), undefined, ok);
  }
});

test("regex: Perl features RE2 rejects are errors", () => {
  assert.equal(re2SyntaxError("a(?=b)"), "error parsing regexp: invalid or unsupported Perl syntax: `(?=`");
  assert.equal(re2SyntaxError("(a)\\1"), "error parsing regexp: invalid escape sequence: `\\1`");
  assert.ok(re2SyntaxError("[a"));
  assert.ok(re2SyntaxError("a)"));
  assert.ok(re2SyntaxError("*a"));
});

test("regex: longer than 1024 bytes is refused", () => {
  assert.equal(regexError("a".repeat(1025), "uri"), '"uri": regex is too large, max length allowed is 1024');
  assert.match(
    regexError("[a", "headers") ?? "",
    new RegExp(`^"headers": error parsing regexp: .*; ${HINT.replace(/[().?]/g, "\\$&")}$`),
  );
});

test("string match: empty prefix and empty regex are errors; exact is unchecked", () => {
  assert.deepEqual(messages(collect((out) => validateStringMatch({ prefix: "" }, "scheme", out)).errors), [
    '"scheme": prefix string match should not be empty',
  ]);
  assert.deepEqual(messages(collect((out) => validateStringMatch({ regex: "" }, "method", out)).errors), [
    '"method": regex string match should not be empty',
  ]);
  assert.deepEqual(collect((out) => validateStringMatch({ exact: "" }, "authority", out)).errors, []);
});

test("regex: RE2 caps counted repetition at 1000", () => {
  assert.equal(re2SyntaxError("a{1000}"), undefined);
  assert.equal(re2SyntaxError("a{2,1001}"), "error parsing regexp: invalid repeat count: `{2,1001}`");
});
