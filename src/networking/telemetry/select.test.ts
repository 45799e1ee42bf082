// Which Telemetries apply to a proxy (Istio's applicableTelemetries): one mesh-wide, one
// namespace-wide and one workload Telemetry, each the oldest of its kind.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Telemetry } from "../../config/types/index.ts";
import { applicableTelemetries } from "./select.ts";

function telemetry(namespace: string, name: string, spec: Telemetry["spec"] = {}): Telemetry {
  return { apiVersion: "telemetry.istio.io/v1", kind: "Telemetry", metadata: { namespace, name }, spec };
}
const names = (chain: Telemetry[]) => chain.map((t) => `${t.metadata.namespace}/${t.metadata.name}`);
const selector = { selector: { matchLabels: { app: "reviews" } } };

test("root, then namespace, then workload; the oldest of each wins", () => {
  const attached = [
    telemetry("istio-system", "mesh"),
    telemetry("istio-system", "mesh-newer"),
    telemetry("bookinfo", "ns"),
    telemetry("bookinfo", "ns-newer"),
    telemetry("bookinfo", "reviews", selector),
    telemetry("bookinfo", "reviews-newer", selector),
  ];
  assert.deepEqual(names(applicableTelemetries(attached, "istio-system", "bookinfo")), [
    "istio-system/mesh",
    "bookinfo/ns",
    "bookinfo/reviews",
  ]);
});

test("a selecting Telemetry of the root namespace selects only proxies in the root namespace", () => {
  const attached = [telemetry("istio-system", "gateway", selector), telemetry("istio-system", "mesh")];
  assert.deepEqual(names(applicableTelemetries(attached, "istio-system", "bookinfo")), ["istio-system/mesh"]);
  assert.deepEqual(names(applicableTelemetries(attached, "istio-system", "istio-system")), [
    "istio-system/mesh",
    "istio-system/gateway",
  ]);
});

test("targetRefs make a workload Telemetry; an empty selector is namespace-wide", () => {
  const attached = [
    telemetry("bookinfo", "empty-selector", { selector: { matchLabels: {} } }),
    telemetry("bookinfo", "gateway", {
      targetRefs: [{ kind: "Gateway", group: "gateway.networking.k8s.io", name: "gw" }],
    }),
  ];
  assert.deepEqual(names(applicableTelemetries(attached, "istio-system", "bookinfo")), [
    "bookinfo/empty-selector",
    "bookinfo/gateway",
  ]);
});
