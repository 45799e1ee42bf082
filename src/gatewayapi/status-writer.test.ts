import assert from "node:assert/strict";
import { test } from "node:test";
import { type ConfigObject, objectKeyOf } from "../config/index.ts";
import { staticSingleton } from "../krt/index.ts";
import type { StoredConfig } from "../sources/index.ts";
import type { ConversionResult } from "./index.ts";
import { GatewayStatusWriter } from "./status-writer.ts";

const route = (resourceVersion: string): ConfigObject => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name: "shop", namespace: "apps", resourceVersion },
  spec: {},
});
const wanted = { parents: [{ conditions: [{ type: "Accepted", status: "True", lastTransitionTime: "" }] }] };

/** The store as the Kubernetes source fills it: whatever object `current` returns now. */
function storeHolding(current: () => ConfigObject) {
  return {
    get: (): StoredConfig => {
      const object = current();
      return { key: objectKeyOf(object), object, source: "kubernetes", scope: "", resourceVersion: 1 };
    },
  };
}

test("a write refused because the object changed is made again against the object the store holds then", async () => {
  let stored = route("1");
  const store = storeHolding(() => stored);
  const calls: { version: string | undefined; status: unknown }[] = [];
  const target = {
    source: "kubernetes",
    async writeStatus(obj: ConfigObject, status: unknown) {
      calls.push({ version: obj.metadata.resourceVersion, status });
      if (calls.length === 1) {
        stored = route("2");
        throw Object.assign(new Error("Conflict"), { code: 409 });
      }
      return { ...obj, status };
    },
  };
  const doc: ConfigObject = { ...route(""), spec: null, status: wanted };
  const conversion = staticSingleton<ConversionResult>({ config: [], statuses: [doc] });
  const writer = new GatewayStatusWriter({ conversion, store, target, retryMs: 1, now: () => "T" });
  writer.start();
  for (let i = 0; i < 200 && calls.length < 2; i++) await new Promise((r) => setTimeout(r, 5));
  await writer.idle();
  writer.stop();
  assert.deepEqual(
    calls.map((c) => c.version),
    ["1", "2"],
  );
  assert.deepEqual(calls[1].status, {
    parents: [{ conditions: [{ type: "Accepted", status: "True", lastTransitionTime: "T" }] }],
  });
});

test("a status the API server keeps in another form is not written again and again", async () => {
  let stored = route("1");
  const store = storeHolding(() => stored);
  let writes = 0;
  const target = {
    source: "kubernetes",
    async writeStatus(obj: ConfigObject) {
      writes += 1;
      // The server prunes the whole status away.
      stored = {
        ...obj,
        metadata: { ...obj.metadata, resourceVersion: String(Number(obj.metadata.resourceVersion) + 1) },
      };
      return stored;
    },
  };
  const doc: ConfigObject = { ...route(""), spec: null, status: wanted };
  const conversion = staticSingleton<ConversionResult>({ config: [], statuses: [doc] });
  const writer = new GatewayStatusWriter({ conversion, store, target, retryMs: 1 });
  writer.start();
  await writer.idle();
  // The watch brings the pruned object back; the conversion lists the same status again.
  conversion.set({ config: [], statuses: [{ ...doc, metadata: { ...doc.metadata, labels: { again: "1" } } }] });
  await writer.idle();
  writer.stop();
  assert.equal(writes, 1);
});
