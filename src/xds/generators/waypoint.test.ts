// A waypoint proxy on ambient address pushes (Istio's waypointNeedsPush, scoped): a change to an address
// bound to the waypoint, before or after, rebuilds its clusters, listeners and load assignments; one
// bound elsewhere leaves them alone.
import assert from "node:assert/strict";
import { test } from "node:test";
import { WAYPOINT_MESH, WAYPOINT_PROXY, waypointMesh } from "../../../test/support/waypoint-mesh.ts";
import { XdsCache } from "../../configgen/index.ts";
import { ADDRESS_KIND, pushRequest } from "../../model/index.ts";
import { TypeUrl } from "../types.ts";
import { cdsGenerator } from "./cds.ts";
import { edsGenerator } from "./eds.ts";
import { ldsGenerator } from "./lds.ts";

const VIP_CLUSTER = "inbound-vip|80|http|web.shop.svc.cluster.local";

test("an address push reaches a waypoint's CDS, LDS and EDS only when a changed address is bound to it", () => {
  // The namespace uses no waypoint yet.
  const unbound = WAYPOINT_MESH.map((o) => (o.kind === "Namespace" ? { ...o, metadata: { name: "shop" } } : o));
  const { store, registry, ambient, push } = waypointMesh(unbound);
  const pushes: { names: ReadonlySet<string>; waypoints: ReadonlySet<string> }[] = [];
  ambient.onAddressesChanged((names, waypoints) => pushes.push({ names, waypoints }));
  const cache = new XdsCache();
  const current = push();
  const cds = cdsGenerator(registry, cache);
  const lds = ldsGenerator(registry, cache);
  const eds = edsGenerator(registry, cache);
  const all = { resourceNames: new Set<string>(), wildcard: true };
  const vip = { resourceNames: new Set([VIP_CLUSTER]), wildcard: false };
  const addressPush = (waypoints: ReadonlySet<string>, names: ReadonlySet<string>) =>
    pushRequest({
      full: false,
      push: current,
      configsUpdated: [...names].map((name) => ({ kind: ADDRESS_KIND, namespace: "", name })),
      reasons: ["ambient"],
      addressesUpdated: names,
      waypointsUpdated: waypoints,
    });

  // A pod elsewhere: bound to no waypoint.
  store.upsert("test", {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "other-0", namespace: "other", labels: {} },
    spec: { nodeName: "node-0", containers: [{ name: "app" }] },
    status: { phase: "Running", podIP: "10.244.5.1", conditions: [{ type: "Ready", status: "True" }] },
  });
  const unrelated = pushes.at(-1);
  assert.ok(unrelated);
  assert.deepEqual([...unrelated.waypoints], []);
  const unrelatedPush = addressPush(unrelated.waypoints, unrelated.names);
  assert.equal(cds.generate(WAYPOINT_PROXY, { typeUrl: TypeUrl.Cluster, ...all }, unrelatedPush), undefined);
  assert.equal(lds.generate(WAYPOINT_PROXY, { typeUrl: TypeUrl.Listener, ...all }, unrelatedPush), undefined);
  assert.equal(eds.generate(WAYPOINT_PROXY, { typeUrl: TypeUrl.Endpoint, ...vip }, unrelatedPush), undefined);

  // The namespace starts using the waypoint: its Services' addresses now name it.
  store.upsert("test", WAYPOINT_MESH.find((o) => o.kind === "Namespace") ?? assert.fail("no namespace"));
  const bound = pushes.at(-1);
  assert.ok(bound && bound !== unrelated);
  assert.ok(bound.names.has("shop/web.shop.svc.cluster.local"));
  assert.deepEqual([...bound.waypoints], ["hostname:shop/waypoint.shop.svc.cluster.local"]);
  const boundPush = addressPush(bound.waypoints, bound.names);
  const clusters = cds.generate(WAYPOINT_PROXY, { typeUrl: TypeUrl.Cluster, ...all }, boundPush);
  assert.ok(clusters?.resources.some((r) => r.name === VIP_CLUSTER));
  assert.ok(lds.generate(WAYPOINT_PROXY, { typeUrl: TypeUrl.Listener, ...all }, boundPush));
  assert.deepEqual(
    eds.generate(WAYPOINT_PROXY, { typeUrl: TypeUrl.Endpoint, ...vip }, boundPush)?.resources.map((r) => r.name),
    [VIP_CLUSTER],
  );
});
