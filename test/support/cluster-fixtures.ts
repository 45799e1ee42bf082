// Test inputs written briefly: a partial service, endpoint or proxy filled with the registry's and the
// node parser's defaults. Used by the cluster and endpoint tests only.

import { DEFAULT_MESH_CONFIG, type MeshConfig } from "../../src/config/index.ts";
import type { ProxyNode } from "../../src/model/proxy.ts";
import type { Service, ServiceEndpoint, ServicePort } from "../../src/registry/index.ts";
import { testService } from "./registry-inputs.ts";

export type ServiceInput = Partial<Omit<Service, "ports">> & { ports?: Partial<ServicePort>[] };

export function makeService(input: ServiceInput): Service {
  const hostname = input.hostname ?? "reviews.default.svc.cluster.local";
  const registry = input.registry ?? "Kubernetes";
  return testService({
    hostname,
    namespace: input.namespace ?? "default",
    name: input.name ?? (registry === "Kubernetes" ? hostname.split(".")[0] : hostname),
    objectName: input.objectName ?? hostname.split(".")[0],
    registry,
    ports: (input.ports ?? [{}]).map((p) => ({
      name: p.name ?? "http",
      port: p.port ?? 9080,
      protocol: p.protocol ?? "HTTP",
      targetPort: p.targetPort ?? p.port ?? 9080,
    })),
    addresses: input.addresses ?? ["10.96.0.10"],
    defaultAddress: input.defaultAddress ?? input.addresses?.[0] ?? "10.96.0.10",
    resolution: input.resolution ?? "ClientSideLB",
    meshExternal: input.meshExternal ?? false,
    exportTo: input.exportTo ?? [],
    labels: input.labels ?? {},
    selector: input.selector ?? null,
    serviceAccounts: input.serviceAccounts ?? [],
    kubernetesType: registry === "Kubernetes" ? "ClusterIP" : "",
    clusterId: registry === "Kubernetes" ? "Kubernetes" : "",
  });
}

export function makeEndpoint(service: Service, input: Partial<ServiceEndpoint>): ServiceEndpoint {
  const port = service.ports.find((p) => p.port === input.servicePort) ?? service.ports[0];
  return {
    hostname: service.hostname,
    namespace: service.namespace,
    servicePort: port.port,
    servicePortName: port.name,
    address: input.address ?? "10.0.0.1",
    port: input.port ?? (typeof port.targetPort === "number" ? port.targetPort : port.port),
    health: input.health ?? "Healthy",
    labels: input.labels ?? {},
    serviceAccount: input.serviceAccount ?? "",
    identity: input.identity ?? "",
    locality: input.locality ?? "",
    clusterId: input.clusterId ?? "Kubernetes",
    network: input.network ?? "",
    tlsMode: input.tlsMode ?? "istio",
    workloadName: input.workloadName ?? "",
    workloadNamespace: input.workloadNamespace ?? service.namespace,
    workloadKind: input.workloadKind ?? "Pod",
    weight: input.weight ?? 1,
  };
}

export type ProxyInput = Partial<Omit<ProxyNode, "metadata">> & { network?: string; networkView?: string[] };

export function makeProxy(input: ProxyInput = {}): ProxyNode {
  const type = input.type ?? "sidecar";
  const ip = input.ipAddresses?.[0] ?? "10.0.0.100";
  return {
    type,
    id: input.id ?? "app-1.default",
    nodeId: `${type}~${ip}~app-1.default~default.svc.cluster.local`,
    dnsDomain: "default.svc.cluster.local",
    ipAddresses: input.ipAddresses ?? [ip],
    configNamespace: input.configNamespace ?? "default",
    labels: input.labels ?? {},
    clusterId: input.clusterId ?? "Kubernetes",
    locality: input.locality ?? { region: "", zone: "", subZone: "" },
    metadata: {
      raw: {},
      ...(input.network ? { NETWORK: input.network } : {}),
      ...(input.networkView ? { REQUESTED_NETWORK_VIEW: input.networkView } : {}),
    },
    serviceCluster: "",
    userAgent: "",
  };
}

export function makeMesh(overrides: Partial<MeshConfig> = {}): MeshConfig {
  return { ...structuredClone(DEFAULT_MESH_CONFIG as MeshConfig), ...overrides };
}
