import assert from "node:assert/strict";
import { test } from "node:test";
import { workloadapi } from "../api/index.ts";
import type { ConfigObject } from "../config/index.ts";
import type { gatewayapi } from "../config/types/index.ts";
import { allowsAttachment, gatewayWaypoint, isManagedGateway, useWaypoint } from "./waypoints.ts";

function gateway(extra: {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  listeners?: unknown[];
  addresses?: unknown[];
}): gatewayapi.Gateway {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "waypoint", namespace: "ns", labels: extra.labels, annotations: extra.annotations },
    spec: {
      gatewayClassName: "istio-waypoint",
      listeners: (extra.listeners ?? [{ name: "mesh", port: 15008, protocol: "HBONE" }]) as never,
    },
    status: { addresses: extra.addresses ?? [{ type: "IPAddress", value: "10.96.0.20" }] },
  } as gatewayapi.Gateway;
}
const waypointClass = (labels: Record<string, string> = {}): ConfigObject => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "GatewayClass",
  metadata: { name: "istio-waypoint", labels },
});

test("a Gateway with an address is a waypoint: its first hostname, else its first IP, on the HBONE port", () => {
  const byIp = gatewayWaypoint(gateway({}), waypointClass(), ["b", "a"], "net1");
  assert.ok(byIp);
  assert.equal(byIp.address.destination.case, "address");
  assert.equal(byIp.address.hboneMtlsPort, 15008);
  assert.deepEqual(byIp.serviceAccounts, ["a", "b"]);
  assert.equal(byIp.trafficType, "service");
  assert.deepEqual(byIp.allowedRoutes, { from: "Same" });
  const byName = gatewayWaypoint(
    gateway({
      addresses: [
        { type: "IPAddress", value: "10.96.0.20" },
        { type: "Hostname", value: "waypoint.ns.svc.cluster.local" },
      ],
    }),
    undefined,
    [],
    "",
  );
  assert.deepEqual(byName?.address.destination, {
    case: "hostname",
    value: {
      $typeName: "istio.workload.NamespacedHostname",
      namespace: "ns",
      hostname: "waypoint.ns.svc.cluster.local",
    },
  });
  assert.equal(gatewayWaypoint(gateway({ addresses: [] }), undefined, [], ""), undefined);
});

test("the traffic it takes: the Gateway's waypoint-for, else its class's, else service", () => {
  assert.equal(
    gatewayWaypoint(gateway({}), waypointClass({ "istio.io/waypoint-for": "all" }), [], "")?.trafficType,
    "all",
  );
  assert.equal(
    gatewayWaypoint(
      gateway({ labels: { "istio.io/waypoint-for": "workload" } }),
      waypointClass({ "istio.io/waypoint-for": "all" }),
      [],
      "",
    )?.trafficType,
    "workload",
  );
});

test("its inbound binding and the namespaces its listener allows", () => {
  const w = gatewayWaypoint(
    gateway({
      annotations: { "ambient.istio.io/waypoint-inbound-binding": "PROXY/15088" },
      listeners: [
        { name: "mesh", port: 15008, protocol: "HBONE", allowedRoutes: { namespaces: { from: "All" } } },
        {
          name: "proxy",
          port: 15088,
          protocol: "istio.io/PROXY",
          allowedRoutes: { namespaces: { from: "Selector", selector: { matchLabels: { team: "a" } } } },
        },
      ],
    }),
    undefined,
    [],
    "",
  );
  assert.deepEqual(w?.defaultBinding, { protocol: workloadapi.ApplicationTunnel_Protocol.PROXY, port: 15088 });
  assert.equal(w?.allowedRoutes.from, "Selector");
  assert.ok(w && allowsAttachment(w, "other", { team: "a" }));
  assert.ok(w && !allowsAttachment(w, "other", { team: "b" }));
  const same = gatewayWaypoint(
    gateway({ annotations: { "ambient.istio.io/waypoint-inbound-binding": "TCP" } }),
    undefined,
    [],
    "",
  );
  assert.equal(same?.defaultBinding, undefined, "an unknown protocol is no binding");
  assert.ok(same && allowsAttachment(same, "ns", {}) && !allowsAttachment(same, "other", {}));
});

test("use-waypoint labels: a name in the object's namespace or the one named, none to opt out", () => {
  assert.deepEqual(useWaypoint({ "istio.io/use-waypoint": "wp" }, "ns"), { name: "wp", namespace: "ns" });
  assert.deepEqual(useWaypoint({ "istio.io/use-waypoint": "wp", "istio.io/use-waypoint-namespace": "infra" }, "ns"), {
    name: "wp",
    namespace: "infra",
  });
  assert.equal(useWaypoint({ "istio.io/use-waypoint": "none" }, "ns"), "none");
  assert.equal(useWaypoint({}, "ns"), undefined);
  assert.ok(isManagedGateway({ "gateway.istio.io/managed": "istio.io-mesh-controller" }));
  assert.ok(!isManagedGateway({ "gateway.istio.io/managed": "istio.io-gateway-controller" }));
});
