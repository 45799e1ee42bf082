// The load test's mesh: S Kubernetes Services in 10 namespaces, each with E endpoints (one
// EndpointSlice and E Pods, labelled as sidecar injection labels them), a VirtualService on svc-0,
// and in the scoped mesh a Sidecar per namespace limiting egress to the namespace itself and
// istio-system (Istio's sizing setup). Written as YAML into a config directory that sluiced's file
// source watches, where changes rewrite one file, as an operator or a controller would; or, as
// objects, loaded into a cluster (against-istiod.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import type { ConfigObject } from "../../src/config/index.ts";
import { podLabels } from "../../test/compare/proxies.ts";

export type MeshKind = "scoped" | "unscoped";

export interface MeshShape {
  kind: MeshKind;
  services: number;
  endpoints: number;
}

export const NAMESPACES = 10;
const PORT = 80;
const TARGET_PORT = 8080;

export const namespaceOf = (service: number) => `ns-${service % NAMESPACES}`;
export const hostnameOf = (service: number) => `svc-${service}.${namespaceOf(service)}.svc.cluster.local`;
/** The EDS cluster of a service's port, the name proxies subscribe to. */
export const clusterOf = (service: number) => `outbound|${PORT}||${hostnameOf(service)}`;
/** Endpoint `slot` of a service (slots from 0; at most 250 per service). */
const endpointIp = (service: number, slot: number) => `10.${(service >> 8) & 255}.${service & 255}.${slot + 1}`;
/** The endpoint the n-th endpoint change adds to svc-0: an address no other endpoint has. */
export const addedEndpointIp = (change: number) => `10.200.${(change >> 8) & 255}.${change & 255}`;
/** The path prefix the n-th VirtualService change routes: a string no other config holds. */
export const changedRoutePrefix = (change: number) => `/bench-change-${change}`;

/** What a load-test proxy announces: the sidecar of one Pod of the mesh. */
export interface ProxyIdentity {
  id: string;
  /** The Pod's name. */
  name: string;
  ip: string;
  namespace: string;
  labels: Record<string, string>;
}

/** Proxy i is the sidecar of endpoint ⌊i / S⌋ of service i mod S. */
export function proxyIdentity(shape: MeshShape, i: number): ProxyIdentity {
  const service = i % shape.services;
  const slot = Math.floor(i / shape.services) % shape.endpoints;
  const namespace = namespaceOf(service);
  const name = `svc-${service}-${slot}`;
  return {
    id: `sidecar~${endpointIp(service, slot)}~${name}.${namespace}~${namespace}.svc.cluster.local`,
    name,
    ip: endpointIp(service, slot),
    namespace,
    labels: { app: `svc-${service}` },
  };
}

/** The Service's cluster IP: in 172.16.0.0/16, past 172.16.0.x (the cluster's own `kubernetes` Service). */
const clusterIpOf = (service: number) => `172.16.${1 + ((service >> 8) & 255)}.${service & 255}`;

const object = (apiVersion: string, kind: string, namespace: string, name: string, rest: object): ConfigObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace },
  ...rest,
});

/** A Service with its EndpointSlice and Pods; `extraIps` adds endpoints after the regular ones. */
export function serviceObjects(shape: MeshShape, service: number, extraIps: readonly string[] = []): ConfigObject[] {
  const namespace = namespaceOf(service);
  const name = `svc-${service}`;
  const ips = [...Array.from({ length: shape.endpoints }, (_, slot) => endpointIp(service, slot)), ...extraIps];
  const pods = ips.map((ip, slot) => {
    const pod = `${name}-${slot}`;
    const labels = podLabels({ name: pod, kind: "sidecar", namespace, ip, labels: { app: name }, serviceAccount: "" });
    return object("v1", "Pod", namespace, pod, {
      metadata: { name: pod, namespace, labels },
      spec: { nodeName: "node-0", containers: [{ name: "app", image: "app" }] },
      status: { phase: "Running", podIP: ip, podIPs: [{ ip }], conditions: [{ type: "Ready", status: "True" }] },
    });
  });
  return [
    object("v1", "Service", namespace, name, {
      spec: {
        clusterIP: clusterIpOf(service),
        selector: { app: name },
        ports: [{ name: "http", port: PORT, targetPort: TARGET_PORT }],
      },
    }),
    object("discovery.k8s.io/v1", "EndpointSlice", namespace, `${name}-0`, {
      metadata: { name: `${name}-0`, namespace, labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      endpoints: ips.map((ip, slot) => ({
        addresses: [ip],
        conditions: { ready: true },
        targetRef: { kind: "Pod", name: `${name}-${slot}`, namespace },
      })),
      ports: [{ name: "http", port: TARGET_PORT, protocol: "TCP" }],
    }),
    ...pods,
  ];
}

/** The path prefix of svc-0's first route in the mesh as written. */
export const INITIAL_ROUTE_PREFIX = "/v0";

/** The VirtualService of svc-0, its first route matching `prefix`. */
export function virtualService(prefix: string): ConfigObject {
  const host = hostnameOf(0);
  return object("networking.istio.io/v1", "VirtualService", namespaceOf(0), "svc-0", {
    spec: {
      hosts: [host],
      http: [
        { match: [{ uri: { prefix } }], route: [{ destination: { host } }], timeout: "5s" },
        { route: [{ destination: { host } }] },
      ],
    },
  });
}

export const sidecar = (namespace: string) =>
  object("networking.istio.io/v1", "Sidecar", namespace, "default", {
    spec: { egress: [{ hosts: ["./*", "istio-system/*"] }] },
  });

export const node = object("v1", "Node", "", "node-0", { metadata: { name: "node-0" } });

function write(path: string, objects: readonly ConfigObject[]): void {
  writeFileSync(path, objects.map((o) => stringify(o)).join("---\n"));
}

/** Where each service lives in the directory. */
const serviceFile = (dir: string, service: number) => join(dir, namespaceOf(service), `svc-${service}.yaml`);
const virtualServiceFile = (dir: string) => join(dir, namespaceOf(0), "virtualservice.yaml");

export function writeMesh(dir: string, shape: MeshShape): void {
  for (let n = 0; n < NAMESPACES; n++) {
    const namespace = `ns-${n}`;
    mkdirSync(join(dir, namespace), { recursive: true });
    if (shape.kind === "scoped") write(join(dir, namespace, "sidecar.yaml"), [sidecar(namespace)]);
  }
  write(join(dir, "node.yaml"), [node]);
  for (let s = 0; s < shape.services; s++) write(serviceFile(dir, s), serviceObjects(shape, s));
  write(virtualServiceFile(dir), [virtualService(INITIAL_ROUTE_PREFIX)]);
}

/** The n-th endpoint change: svc-0 gains one endpoint (and its Pod). */
export function writeEndpointChange(dir: string, shape: MeshShape, change: number): void {
  write(serviceFile(dir, 0), serviceObjects(shape, 0, [addedEndpointIp(change)]));
}

/** The n-th VirtualService change: svc-0's first route matches a new prefix. */
export function writeVirtualServiceChange(dir: string, change: number): void {
  write(virtualServiceFile(dir), [virtualService(changedRoutePrefix(change))]);
}
