// A waypoint proxy's CDS, EDS and LDS through configgen (test/support/waypoint-mesh.ts): the waypoint
// serves the Services of the namespace that uses it, and reaches their ambient workloads over HBONE.
import assert from "node:assert/strict";
import { test } from "node:test";
import { WAYPOINT_MESH, WAYPOINT_PROXY as waypoint, waypointMesh } from "../../test/support/waypoint-mesh.ts";
import type { ConfigObject } from "../config/index.ts";
import { XdsCache } from "./cache/xds-cache.ts";
import { buildClusters } from "./clusters.ts";
import { buildLoadAssignment } from "./endpoints.ts";
import { buildListeners } from "./listeners.ts";

test("a waypoint gets its own clusters and listeners, and inbound VIP clusters for the services it serves", () => {
  const { registry, push } = waypointMesh();
  const cache = new XdsCache();
  const current = push();
  assert.deepEqual(
    buildClusters(current, waypoint, registry, cache).map((c) => c.name),
    [
      "main_internal",
      "encap",
      "inbound-vip|80|http|web.shop.svc.cluster.local",
      "connect_originate",
      "inner_connect_originate",
      "outer_connect_originate",
    ],
  );
  assert.deepEqual(
    buildListeners(current, waypoint, registry, cache).map((l) => l.name),
    ["connect_terminate", "connect_originate", "inner_connect_originate", "outer_connect_originate"],
  );
});

test("a waypoint reaches a service's endpoints over HBONE once they are in the ambient mesh", () => {
  const { store, registry, push } = waypointMesh();
  const cache = new XdsCache();
  const address = () => {
    const cla = buildLoadAssignment(
      push(),
      waypoint,
      registry,
      "inbound-vip|80|http|web.shop.svc.cluster.local",
      cache,
    );
    const host = cla.endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
    assert.equal(host?.case, "endpoint");
    const value = host.value.address?.address;
    return value?.case === "envoyInternalAddress"
      ? `${value.value.addressNameSpecifier.value} ${value.value.endpointId}`
      : value?.case === "socketAddress"
        ? `${value.value.address}:${value.value.portSpecifier.value}`
        : "";
  };
  assert.equal(address(), "10.244.4.10:8080");
  const pod = WAYPOINT_MESH.find((o) => o.kind === "Pod") as ConfigObject;
  store.upsert("test", {
    ...pod,
    metadata: { ...pod.metadata, annotations: { "ambient.istio.io/redirection": "enabled" } },
  });
  assert.equal(address(), "connect_originate 10.244.4.10:8080");
});
