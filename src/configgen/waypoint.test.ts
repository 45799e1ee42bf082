// A waypoint proxy's CDS, EDS and LDS through configgen (test/support/waypoint-mesh.ts): the waypoint
// serves the Services of the namespace that uses it, and reaches their ambient workloads over HBONE.
import assert from "node:assert/strict";
import { test } from "node:test";
import { WAYPOINT_MESH, WAYPOINT_PROXY as waypoint, waypointMesh } from "../../test/support/waypoint-mesh.ts";
import { hcm, listener, unpackAny } from "../api/index.ts";
import type { ConfigObject } from "../config/index.ts";
import { envoyViolations } from "../networking/httpfilter/index.ts";
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
    ["connect_terminate", "main_internal", "connect_originate", "inner_connect_originate", "outer_connect_originate"],
  );
});

test("main_internal serves the waypoint's services and enforces the policies targeting it, never those selecting workloads", () => {
  const { store, registry, push } = waypointMesh();
  const mainInternal = () => {
    const l = buildListeners(push(), waypoint, registry, new XdsCache()).find((x) => x.name === "main_internal");
    assert.ok(l);
    assert.deepEqual(envoyViolations(listener.ListenerSchema, l), []);
    return l;
  };
  const httpFilterNames = (l: listener.Listener) => {
    const chain = l.filterChains.find((c) => c.name === "inbound-vip|80|http|web.shop.svc.cluster.local");
    const config = chain?.filters.at(-1)?.configType;
    assert.equal(config?.case, "typedConfig");
    const manager = unpackAny(config.value, hcm.HttpConnectionManagerSchema);
    return manager?.httpFilters.map((f) => f.name) ?? [];
  };
  assert.deepEqual(
    mainInternal().filterChains.map((c) => c.name),
    ["inbound-vip|80|http|web.shop.svc.cluster.local", "direct-tcp", "direct-http"],
  );
  const policy = (name: string, spec: Record<string, unknown>): ConfigObject => ({
    apiVersion: "security.istio.io/v1",
    kind: "AuthorizationPolicy",
    metadata: { name, namespace: "shop" },
    spec: { ...spec, rules: [{ to: [{ operation: { methods: ["GET"] } }] }] },
  });
  store.upsert("test", policy("selecting", { selector: { matchLabels: { app: "web" } } }));
  assert.equal(httpFilterNames(mainInternal()).includes("envoy.filters.http.rbac"), false);
  store.upsert(
    "test",
    policy("targeting", { targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "waypoint" }] }),
  );
  assert.equal(httpFilterNames(mainInternal())[0], "envoy.filters.http.rbac");
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
