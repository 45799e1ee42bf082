// A sidecar's listeners as LDS sends them: kept packed by the cache, shared by a workload's pods, and
// decoded only when an EnvoyFilter patches them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { waypointMesh } from "../../test/support/waypoint-mesh.ts";
import { encodeAny, listener, PackedMessage, TypeUrl } from "../api/index.ts";
import type { ProxyNode } from "../model/index.ts";
import { XdsCache } from "./cache/xds-cache.ts";
import { buildListeners, listenerResources } from "./listeners.ts";

/** A sidecar of `web` in `shop`, the waypoint mesh's workload. */
function webSidecar(ip: string): ProxyNode {
  return {
    type: "sidecar",
    id: `web-${ip}.shop`,
    nodeId: `sidecar~${ip}~web-${ip}.shop~shop.svc.cluster.local`,
    dnsDomain: "shop.svc.cluster.local",
    ipAddresses: [ip],
    configNamespace: "shop",
    labels: { app: "web" },
    clusterId: "Kubernetes",
    locality: { region: "", zone: "", subZone: "" },
    metadata: { raw: {} },
    serviceCluster: "",
    userAgent: "",
  };
}

test("a sidecar's listeners are kept packed, shared by the pods of its workload, and encode as built", () => {
  const { registry, push } = waypointMesh();
  const current = push();
  const cache = new XdsCache();
  const first = listenerResources(current, webSidecar("10.244.4.10"), registry, cache);
  const second = listenerResources(current, webSidecar("10.244.4.11"), registry, cache);
  assert.ok(first.length > 0);
  assert.ok(first.every((l) => l instanceof PackedMessage));
  assert.ok(first.some((l) => l.name === "virtualInbound"));
  // The second pod is given the very objects the first was: nothing built or encoded again.
  const kept = new Set<unknown>(first);
  assert.deepEqual(
    second.map((l) => kept.has(l)),
    first.map(() => true),
  );
  // What is sent is what the listeners as messages encode to.
  const built = buildListeners(current, webSidecar("10.244.4.10"), registry, new XdsCache());
  assert.deepEqual(
    first.map((l) => (l as PackedMessage).any),
    built.map((l) => encodeAny(listener.ListenerSchema, l, TypeUrl.Listener)),
  );
});

test("an EnvoyFilter patches the packed listeners as messages; its pods' own builds stay unpacked", () => {
  const { store, registry, push } = waypointMesh();
  const cache = new XdsCache();
  // Packed by a pod before the filter came.
  listenerResources(push(), webSidecar("10.244.4.10"), registry, cache);
  store.upsert("test", {
    apiVersion: "networking.istio.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name: "drain", namespace: "shop" },
    spec: {
      workloadSelector: { labels: { app: "web" } },
      configPatches: [
        {
          applyTo: "LISTENER",
          match: { context: "SIDECAR_INBOUND", listener: { name: "virtualInbound" } },
          patch: { operation: "MERGE", value: { per_connection_buffer_limit_bytes: 4096 } },
        },
      ],
    },
  });
  for (const resources of [
    listenerResources(push(), webSidecar("10.244.4.11"), registry, cache),
    listenerResources(push(), webSidecar("10.244.4.12"), registry, new XdsCache()),
  ]) {
    assert.ok(resources.every((l) => !(l instanceof PackedMessage)));
    const inbound = resources.find((l) => l.name === "virtualInbound") as listener.Listener | undefined;
    assert.equal(inbound?.perConnectionBufferLimitBytes, 4096);
  }
});
