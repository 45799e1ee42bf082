// The per-corpus test files share this: one subtest per case, cases not in the committed baseline
// are `todo` (expected to fail until what they need lands), a baseline case that fails is a real
// failure, and a summary counts the passes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Corpus, conformanceRoot, readBaseline, runCase } from "./corpus.ts";

/** Names the parts a corpus's summary counts separately (e.g. `config`, `status`), in print order. */
export interface SummaryParts {
  names: readonly string[];
  of(id: string): string;
}

export function testCorpus(corpus: Corpus, parts?: SummaryParts): void {
  const cases = corpus.cases(conformanceRoot());
  const recorded = new Set(readBaseline()[corpus.name] ?? []);

  describe(corpus.name, { skip: cases.length === 0 && "corpus files absent" }, () => {
    const passed = new Map<string, number>();
    const total = new Map<string, number>();
    for (const testCase of cases) {
      const part = parts?.of(testCase.id) ?? "";
      total.set(part, (total.get(part) ?? 0) + 1);
      test(testCase.id, { todo: !recorded.has(testCase.id) }, () => {
        const result = runCase(testCase);
        if (result.pass) passed.set(part, (passed.get(part) ?? 0) + 1);
        assert.ok(result.pass, result.detail);
      });
    }

    test("summary", (t) => {
      const count = (part: string) => `${passed.get(part) ?? 0}/${total.get(part) ?? 0}`;
      const counts = parts ? parts.names.map((part) => `${part} ${count(part)}`).join(", ") : count("");
      t.diagnostic(`${corpus.name}: ${counts} passed (${recorded.size} in the baseline)`);
      assert.ok(cases.length > 0);
      const passes = [...passed.values()].reduce((sum, n) => sum + n, 0);
      assert.ok(passes >= [...recorded].filter((id) => cases.some((c) => c.id === id)).length);
    });
  });
}
