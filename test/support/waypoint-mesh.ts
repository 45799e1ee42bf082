// A mesh with a waypoint, over a config store read by the service registry and the ambient index as
// sluiced wires them: namespace `shop` uses the waypoint `waypoint` (its Service given, as its
// deployment controller would make it, its Gateway's address set), which serves the Service `web`.
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import type { ProxyNode } from "../../src/model/index.ts";
import { storeAmbientIndex, storePush, storeRegistry } from "../../src/model/store-push.ts";
import { ConfigStore } from "../../src/sources/index.ts";
import { AMBIENT_OPTIONS } from "./ambient-options.ts";

/** The namespace, the waypoint's Gateway and Service, and `web` with its Pod and EndpointSlice. */
export const WAYPOINT_MESH: ConfigObject[] = [
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

/** The waypoint's proxy, as its Pod connects. */
export const WAYPOINT_PROXY: ProxyNode = {
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

/** The store holding `objects`, its registry and ambient index, and the push of what it holds now. */
export function waypointMesh(objects: readonly ConfigObject[] = WAYPOINT_MESH) {
  const store = new ConfigStore();
  const mesh = DEFAULT_MESH_CONFIG;
  const registry = storeRegistry(store, mesh, "cluster.local");
  const ambient = storeAmbientIndex(store, AMBIENT_OPTIONS);
  for (const object of objects) store.upsert("test", object);
  const push = () => storePush(store, registry, mesh, "cluster.local", undefined, {}, ambient);
  return { store, registry, ambient, push };
}
