// For the builders' tests: messages written as plain objects instead of through protobuf-es create().
import assert from "node:assert/strict";
import { type DescMessage, equals, type MessageShape } from "@bufbuild/protobuf";

/**
 * Asserts that `made` has the fields, values and key order `created` (create()'s) has, plus, last, any
 * message fields left undefined (unset) so that every message of its type has one hidden class.
 */
export function assertCreateShape<Desc extends DescMessage>(
  schema: Desc,
  made: MessageShape<Desc>,
  created: MessageShape<Desc>,
): void {
  assert.ok(equals(schema, made, created), `${schema.typeName}: the values create() gives`);
  const keys = Object.keys(made);
  const unset = keys.filter((k) => !Object.hasOwn(created, k));
  assert.deepEqual(keys.slice(0, keys.length - unset.length), Object.keys(created));
  for (const k of unset) {
    assert.equal((made as Record<string, unknown>)[k], undefined, k);
    assert.equal(schema.fields.find((f) => f.localName === k)?.fieldKind, "message", k);
  }
}
