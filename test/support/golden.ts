// Golden files for the networking builders' tests: `testdata/<name>.in.yaml` holds a case's input,
// `testdata/<name>.out.yaml` the expected Envoy resources as proto3 JSON written as YAML. Run the
// tests with UPDATE_GOLDEN=1 to rewrite the outputs, then review them as diffs.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type DescMessage, type JsonValue, type MessageShape, toJson } from "@bufbuild/protobuf";
import { parse, stringify } from "yaml";
import { registry } from "../../src/api/index.ts";

/** The `testdata/` folder beside a test file, from its `import.meta.url`. */
export function testdataDir(testFileUrl: string): string {
  return join(dirname(new URL(testFileUrl).pathname), "testdata");
}

/** A case's input, parsed from `<dir>/<name>.in.yaml`. */
export function readGoldenInput(dir: string, name: string): unknown {
  return parse(readFileSync(join(dir, `${name}.in.yaml`), "utf8"));
}

/** Proto3 JSON of a message, with `@type` on every Any. */
export function protoJson<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): JsonValue {
  return toJson(schema, message, { registry });
}

/** Asserts `actual` equals `<dir>/<name>.out.yaml`; with UPDATE_GOLDEN=1, writes it there instead. */
export function assertGolden(dir: string, name: string, actual: JsonValue): void {
  const file = join(dir, `${name}.out.yaml`);
  const text = stringify(actual, { lineWidth: 0 });
  if (process.env.UPDATE_GOLDEN === "1") {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, text);
    return;
  }
  assert.ok(existsSync(file), `missing golden file ${file}: run the test with UPDATE_GOLDEN=1`);
  assert.deepEqual(actual, parse(readFileSync(file, "utf8")), `differs from ${file} (UPDATE_GOLDEN=1 rewrites it)`);
}
