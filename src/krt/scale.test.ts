import assert from "node:assert/strict";
import { test } from "node:test";
import { derive } from "./derived.ts";
import { index } from "./indexes.ts";
import { singleton } from "./singleton.ts";
import { StaticCollection } from "./static.ts";

interface Service {
  metadata: { name: string; namespace: string };
}
interface Slice {
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  endpoints: { ip: string; ready: boolean }[];
}

const SERVICE_LABEL = "kubernetes.io/service-name";

function slice(service: number, part: number, ready = true): Slice {
  return {
    metadata: {
      name: `svc-${service}-${part}`,
      namespace: `ns-${service % 10}`,
      labels: { [SERVICE_LABEL]: `svc-${service}` },
    },
    endpoints: Array.from({ length: 5 }, (_, i) => ({
      ip: `10.${service >> 8}.${service & 255}.${part * 5 + i}`,
      ready,
    })),
  };
}

test("1,000 services with 10,000 endpoints: one endpoint change recomputes one service and the push view once", () => {
  const services = new StaticCollection<Service>(
    Array.from({ length: 1000 }, (_, i) => ({ metadata: { name: `svc-${i}`, namespace: `ns-${i % 10}` } })),
  );
  const slices = new StaticCollection(Array.from({ length: 2000 }, (_, i) => slice(i >> 1, i & 1)));
  const byService = index(slices, (s) => [`${s.metadata.namespace}/${s.metadata.labels[SERVICE_LABEL]}`]);
  const endpoints = derive(
    services,
    (ctx, svc) => {
      const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
      const ready = ctx.fetchIndex(byService, key).flatMap((s) => s.endpoints.filter((e) => e.ready).map((e) => e.ip));
      return { key, ready };
    },
    { keyOf: (e) => e.key },
  );
  const push = singleton((ctx) => ({ readyEndpoints: ctx.fetch(endpoints).reduce((n, e) => n + e.ready.length, 0) }));
  assert.deepEqual(push.get(), { readyEndpoints: 10000 });
  const updates: string[] = [];
  endpoints.registerBatch((events) => updates.push(...events.map((e) => `${e.type}:${e.new?.key}`)), false);

  slices.upsert(slice(421, 1, false));
  assert.equal(endpoints.debug().recomputes, 1001);
  assert.deepEqual(updates, ["update:ns-1/svc-421"]);
  assert.equal(endpoints.get("ns-1/svc-421")?.ready.length, 5);
  assert.deepEqual(push.get(), { readyEndpoints: 9995 });
  assert.equal(push.asCollection().debug().recomputes, 2);
});
