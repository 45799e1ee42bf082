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

test("EnvoyFilter patches reach a waypoint as Istio applies them: its listeners and default routes in SIDECAR_INBOUND, added clusters", () => {
  const { store, registry, push } = waypointMesh();
  const patch = (applyTo: string, match: Record<string, unknown>, operation: string, value: unknown) => ({
    applyTo,
    match: { context: "SIDECAR_INBOUND", ...match },
    patch: { operation, value },
  });
  store.upsert("test", {
    apiVersion: "networking.istio.io/v1alpha3",
    kind: "EnvoyFilter",
    metadata: { name: "tune", namespace: "shop" },
    spec: {
      // A waypoint takes EnvoyFilters by targetRefs only, as Istio's policy matcher.
      targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "waypoint" }],
      configPatches: [
        patch("LISTENER", { listener: { name: "main_internal" } }, "MERGE", {
          per_connection_buffer_limit_bytes: 4096,
        }),
        patch("ROUTE_CONFIGURATION", {}, "MERGE", {
          request_headers_to_add: [{ header: { key: "x-wp", value: "1" } }],
        }),
        patch("CLUSTER", {}, "ADD", { name: "extra", type: "STATIC", connect_timeout: "1s" }),
      ],
    },
  } as ConfigObject);
  const current = push();
  const cache = new XdsCache();
  const listeners = buildListeners(current, waypoint, registry, cache);
  const mainInternal = listeners.find((l) => l.name === "main_internal");
  assert.equal(mainInternal?.perConnectionBufferLimitBytes, 4096);
  // connect_terminate is patched too when the match names no listener; here only main_internal is.
  assert.equal(listeners.find((l) => l.name === "connect_terminate")?.perConnectionBufferLimitBytes, undefined);
  const chain = mainInternal?.filterChains.find((c) => c.name === "inbound-vip|80|http|web.shop.svc.cluster.local");
  const config = chain?.filters.at(-1)?.configType;
  assert.equal(config?.case, "typedConfig");
  const manager = unpackAny(config.value, hcm.HttpConnectionManagerSchema);
  assert.equal(manager?.routeSpecifier.case, "routeConfig");
  assert.deepEqual(
    manager.routeSpecifier.value.requestHeadersToAdd.map((h) => h.header?.key),
    ["x-wp"],
    "web has no VirtualService: its default route configuration is patched",
  );
  assert.equal(buildClusters(current, waypoint, registry, cache).at(-1)?.name, "extra");
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
