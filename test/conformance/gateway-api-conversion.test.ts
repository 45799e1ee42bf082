// The gateway-api-conversion corpus, one subtest per case (`<case>/config`, `<case>/status`). Cases not
// in the committed baseline are `todo`; a baseline case that fails is a real failure.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { conformanceRoot, readBaseline, runCase } from "./corpus.ts";
import { gatewayApiConversion } from "./gateway-api-conversion.ts";

const cases = gatewayApiConversion.cases(conformanceRoot());
const recorded = new Set(readBaseline()[gatewayApiConversion.name] ?? []);

describe(gatewayApiConversion.name, { skip: cases.length === 0 && "corpus files absent" }, () => {
  // Golden cases end in /config or /status; the Go file's code-asserted tests are "extra".
  const passed = { config: 0, status: 0, extra: 0 };
  const total = { config: 0, status: 0, extra: 0 };
  for (const testCase of cases) {
    const part = testCase.id.endsWith("/config") ? "config" : testCase.id.endsWith("/status") ? "status" : "extra";
    total[part]++;
    test(testCase.id, { todo: !recorded.has(testCase.id) }, () => {
      const result = runCase(testCase);
      if (result.pass) passed[part]++;
      assert.ok(result.pass, result.detail);
    });
  }

  test("summary", (t) => {
    t.diagnostic(
      `${gatewayApiConversion.name}: config ${passed.config}/${total.config}, status ${passed.status}/${total.status}, extra ${passed.extra}/${total.extra} passed (${recorded.size} in the baseline)`,
    );
    assert.ok(cases.length > 0);
    assert.ok(passed.config + passed.status >= [...recorded].filter((id) => cases.some((c) => c.id === id)).length);
  });
});
