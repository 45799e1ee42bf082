// Which services select a workload: the registry's answer that push classification reads.
import assert from "node:assert/strict";
import { test } from "node:test";
import { istio, k8s, staticInputs } from "../../test/support/registry-inputs.ts";
import { ServiceRegistry } from "./service-registry.ts";

test("servicesSelecting: Services and ServiceEntries of the namespace whose non-empty selector the labels hold", () => {
  const inputs = staticInputs([
    k8s("Service", "shop", "reviews", { spec: { selector: { app: "reviews" }, ports: [{ port: 80 }] } }),
    k8s("Service", "shop", "manual", { spec: { selector: {}, ports: [{ port: 80 }] } }),
    k8s("Service", "other", "reviews", { spec: { selector: { app: "reviews" }, ports: [{ port: 80 }] } }),
    istio("ServiceEntry", "shop", "legacy", {
      hosts: ["legacy.example.com"],
      ports: [{ number: 80, name: "http", protocol: "HTTP" }],
      resolution: "STATIC",
      workloadSelector: { labels: { app: "reviews", tier: "old" } },
    }),
  ]);
  const registry = new ServiceRegistry(inputs, { domainSuffix: "cluster.local" });
  const hosts = (labels: Record<string, string>) =>
    registry
      .servicesSelecting("shop", labels)
      .map((s) => s.hostname)
      .sort();
  assert.deepEqual(hosts({ app: "reviews" }), ["reviews.shop.svc.cluster.local"]);
  assert.deepEqual(hosts({ app: "reviews", tier: "old" }), ["legacy.example.com", "reviews.shop.svc.cluster.local"]);
  assert.deepEqual(hosts({}), [], "an empty selector selects nothing");
  // The answer follows the store: a selector change is seen at once (krt keeps the index).
  inputs.services.update({
    upsert: [k8s("Service", "shop", "reviews", { spec: { selector: { app: "other" }, ports: [{ port: 80 }] } })],
  });
  assert.deepEqual(hosts({ app: "reviews" }), []);
});
