// The authz-rbac corpus, one subtest per case. Cases not in the committed baseline are `todo`
// (expected to fail until what they need lands); a baseline case that fails is a real failure.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { authzRbac } from "./authz-rbac.ts";
import { conformanceRoot, readBaseline, runCase } from "./corpus.ts";

const cases = authzRbac.cases(conformanceRoot());
const recorded = new Set(readBaseline()[authzRbac.name] ?? []);

describe(authzRbac.name, { skip: cases.length === 0 && "corpus files absent" }, () => {
  let passed = 0;
  for (const testCase of cases) {
    test(testCase.id, { todo: !recorded.has(testCase.id) }, () => {
      const result = runCase(testCase);
      if (result.pass) passed++;
      assert.ok(result.pass, result.detail);
    });
  }

  test("summary", (t) => {
    t.diagnostic(`${authzRbac.name}: ${passed}/${cases.length} passed (${recorded.size} in the baseline)`);
    assert.ok(cases.length > 0);
    assert.ok(passed >= [...recorded].filter((id) => cases.some((c) => c.id === id)).length);
  });
});
