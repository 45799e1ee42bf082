import assert from "node:assert/strict";
import { test } from "node:test";
import { KeyFormat } from "./keys.ts";
import { XdsCache } from "./xds-cache.ts";

interface Key {
  name: string;
  port: number;
  labels: Record<string, string> | undefined;
  service: object | undefined;
  endpoints: readonly object[];
}

const FORMAT = new KeyFormat<Key>({
  name: "value",
  port: "value",
  labels: "value",
  service: "object",
  endpoints: "objects",
});

test("a key's values are written as JSON and its input objects by identity, in the schema's order", () => {
  const ids = new XdsCache();
  const service = {};
  const a = {};
  const b = {};
  const key: Key = { name: "a|b", port: 80, labels: { app: "x" }, service, endpoints: [a, b, []] };
  const text = FORMAT.text(key, ids);
  assert.equal(text, `"a|b"|80|{"app":"x"}|${ids.objectId(service)}|[${ids.objectId(a)},${ids.objectId(b)},[]]`);
  assert.equal(FORMAT.text({ ...key, endpoints: [a, b, []] }, ids), text);
  assert.notEqual(FORMAT.text({ ...key, service: {} }, ids), text);
  assert.notEqual(FORMAT.text({ ...key, labels: undefined }, ids), text);
  assert.deepEqual(FORMAT.objects(key), [service, a, b, []]);
  // Every field of the struct must be in the schema.
  // @ts-expect-error: `endpoints` is missing
  new KeyFormat<Key>({ name: "value", port: "value", labels: "value", service: "object" });
});
