// A waypoint proxy's CDS, EDS and LDS through configgen, over a config store read by the service
// registry and the ambient index as sluiced wires them: the waypoint serves the Services of the
// namespace that uses it, and reaches their ambient workloads over HBONE.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AMBIENT_OPTIONS } from "../../test/support/ambient-options.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../config/index.ts";
import type { ProxyNode } from "../model/index.ts";
import { storeAmbientIndex, storePush, storeRegistry } from "../model/store-push.ts";
import { ConfigStore } from "../sources/index.ts";
import { XdsCache } from "./cache/xds-cache.ts";
import { buildClusters } from "./clusters.ts";
import { buildLoadAssignment } from "./endpoints.ts";
import { buildListeners } from "./listeners.ts";

const objects: ConfigObject[] = [
  {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "shop", labels: { "istio.io/use-waypoint": "waypoint" } },
  },
  {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "waypoint", namespace: "shop" },
    spec: { gatewayClassName: "istio-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
    status: { addresses: [{ type: "Hostname", value: "waypoint.shop.svc.cluster.local" }] },
  },
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: "waypoint",
      namespace: "shop",
      labels: { "gateway.istio.io/managed": "istio.io-mesh-controller" },
    },
    spec: {
      selector: { "gateway.networking.k8s.io/gateway-name": "waypoint" },
      clusterIP: "10.96.0.2",
      ports: [{ name: "mesh", port: 15008 }],
    },
  },
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "shop" },
    spec: { selector: { app: "web" }, clusterIP: "10.96.0.3", ports: [{ name: "http", port: 80, targetPort: 8080 }] },
  },
  {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web-0", namespace: "shop", labels: { app: "web" }, annotations: {} },
    spec: { serviceAccountName: "web", nodeName: "node-0", containers: [{ name: "app" }] },
    status: { phase: "Running", podIP: "10.244.4.10", conditions: [{ type: "Ready", status: "True" }] },
  },
  {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "web-1", namespace: "shop", labels: { "kubernetes.io/service-name": "web" } },
    addressType: "IPv4",
    endpoints: [
      {
        addresses: ["10.244.4.10"],
        conditions: { ready: true },
        targetRef: { kind: "Pod", name: "web-0", namespace: "shop" },
      },
    ],
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
  },
];

const waypoint: ProxyNode = {
  type: "waypoint",
  id: "waypoint-0.shop",
  nodeId: "waypoint~10.244.4.2~waypoint-0.shop~shop.svc.cluster.local",
  dnsDomain: "shop.svc.cluster.local",
  ipAddresses: ["10.244.4.2"],
  configNamespace: "shop",
  labels: { "gateway.networking.k8s.io/gateway-name": "waypoint" },
  clusterId: "Kubernetes",
  locality: { region: "", zone: "", subZone: "" },
  metadata: { raw: {} },
  serviceCluster: "",
  userAgent: "",
};

function setup() {
  const store = new ConfigStore();
  const mesh = DEFAULT_MESH_CONFIG;
  const registry = storeRegistry(store, mesh, "cluster.local");
  const ambient = storeAmbientIndex(store, AMBIENT_OPTIONS);
  for (const object of objects) store.upsert("test", object);
  const push = () => storePush(store, registry, mesh, "cluster.local", undefined, {}, ambient);
  return { store, registry, push };
}

test("a waypoint gets its own clusters and listeners, and inbound VIP clusters for the services it serves", () => {
  const { registry, push } = setup();
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
  const { store, registry, push } = setup();
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
  const pod = objects.find((o) => o.kind === "Pod") as ConfigObject;
  store.upsert("test", {
    ...pod,
    metadata: { ...pod.metadata, annotations: { "ambient.istio.io/redirection": "enabled" } },
  });
  assert.equal(address(), "connect_originate 10.244.4.10:8080");
});
