// Each analyzer declares exactly the kinds Istio's declares (analysis/ANALYZERS.md, "Inputs"), since
// only those are visible to it; and every message type it lists has Istio's code.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { K } from "../../src/analysis/kinds.ts";
import { MESSAGES } from "../../src/analysis/messages.ts";
import { findAnalyzer } from "../../src/analysis/registry.ts";
import { conformanceRoot } from "./corpus.ts";

const TABLE = join(conformanceRoot(), "analysis", "ANALYZERS.md");

// ANALYZERS.md names kinds by Kind; the Gateway API Gateway is marked.
const KIND_BY_NAME: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(K).map(([name, key]) => [name, key])),
  "Gateway (Gateway API)": K.K8sGateway,
};

interface Row {
  name: string;
  messages: string;
  inputs: string[];
}

function rows(): Row[] {
  return readFileSync(TABLE, "utf8")
    .split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| Analyzer") && !line.startsWith("| Code"))
    .map((line) => line.split("|").map((cell) => cell.trim()))
    .filter((cells) => cells.length >= 7 && !cells[1].startsWith("`"))
    .map((cells) => ({ name: cells[1], messages: cells[4], inputs: cells[5].split(",").map((s) => s.trim()) }));
}

test("analyzers read exactly Istio's inputs and report Istio's codes", {
  skip: !existsSync(TABLE) && "corpus absent",
}, () => {
  const table = rows();
  assert.ok(table.length >= 37);
  for (const row of table) {
    const analyzer = findAnalyzer(row.name);
    assert.ok(analyzer, `${row.name} is registered`);
    const expected = row.inputs.map((input) => KIND_BY_NAME[input] ?? `unknown kind ${input}`).sort();
    assert.deepEqual([...analyzer.inputs].sort(), expected, row.name);
    for (const [, code, name] of row.messages.matchAll(/(IST\d{4}) (\w+)/g)) {
      assert.equal(MESSAGES[name as keyof typeof MESSAGES]?.code, code, `${row.name}: ${name}`);
    }
  }
});
