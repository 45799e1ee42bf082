import assert from "node:assert/strict";
import { test } from "node:test";
import { KeyFormat } from "./keys.ts";
import { XdsCache } from "./xds-cache.ts";

interface Key {
  name: string;
  port: number;
  labels: Record<string, string> | undefined;
  view: string;
  service: object | undefined;
  endpoints: readonly object[];
}

const FORMAT = new KeyFormat<Key>({
  name: "value",
  port: "value",
  labels: "value",
  view: "text",
  service: "object",
  endpoints: "objects",
});

test("a key's values are written as JSON and its input objects by identity, in the schema's order", () => {
  const ids = new XdsCache();
  const service = {};
  const a = {};
  const b = {};
  const view = new KeyFormat<{ zone: string | undefined }>({ zone: "value" }).text({ zone: undefined });
  const key: Key = { name: "a|b", port: 80, labels: { app: "x" }, view, service, endpoints: [a, b, []] };
  const text = FORMAT.text(key, ids);
  const [s, x, y] = [service, a, b].map((o) => ids.objectId(o));
  assert.equal(text, `s3:a|b|n80|{"app":"x"}|(~)|${s}|[${x},${y},[]]`);
  // Self-delimiting parts: moving a `|` from one string to the next gives another key.
  const two = new KeyFormat<{ a: string; b: string }>({ a: "value", b: "value" });
  assert.notEqual(two.text({ a: "x|", b: "y" }), two.text({ a: "x", b: "|y" }));
  assert.equal(FORMAT.text({ ...key, endpoints: [a, b, []] }, ids), text);
  assert.notEqual(FORMAT.text({ ...key, service: {} }, ids), text);
  assert.notEqual(FORMAT.text({ ...key, labels: undefined }, ids), text);
  assert.deepEqual(FORMAT.objects(key), [service, a, b, []]);
  // Every field of the struct must be in the schema.
  // @ts-expect-error: `endpoints` is missing
  new KeyFormat<Key>({ name: "value", port: "value", labels: "value", view: "text", service: "object" });
  // A key with input objects needs their numbering.
  assert.throws(() => FORMAT.text(key));
});
