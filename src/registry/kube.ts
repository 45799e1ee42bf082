// Kubernetes Services and their endpoints (EndpointSlices, or Endpoints when a service has no slice),
// as Istio's kube controller reads them (pilot/pkg/serviceregistry/kube: conversion.go, endpointslice.go).
import type {
  CoreV1EndpointPort,
  DiscoveryV1EndpointPort,
  V1Endpoint,
  V1EndpointAddress,
  V1EndpointSubset,
  V1ServicePort,
  V1ServiceSpec,
  V1ServiceStatus,
} from "@kubernetes/client-node";
import { type ConfigObject, parseProtocol } from "../config/index.ts";
import type { Collection, FetchContext, Index } from "../krt/index.ts";
import type {
  HealthStatus,
  RegistryEndpoints,
  Service,
  ServiceEndpoint,
  ServicePort,
  ServiceProtocol,
  WorkloadInstance,
} from "./model.ts";
import { registryKey, UNSPECIFIED_IP } from "./model.ts";
import type { EndpointTarget, WorkloadContext } from "./workloads.ts";
import { endpointOf, podRefKey, spiffeIdentity } from "./workloads.ts";

const ANNOTATION_EXPORT_TO = "networking.istio.io/exportTo";
const ANNOTATION_CANONICAL_SERVICE_ACCOUNTS = "alpha.istio.io/canonical-serviceaccounts";
const ANNOTATION_KUBERNETES_SERVICE_ACCOUNTS = "alpha.istio.io/kubernetes-serviceaccounts";
const LABEL_SERVICE_NAME = "kubernetes.io/service-name";
// Slices of multi-cluster ServiceImports; they belong to another registry.
const LABEL_MCS_SERVICE_NAME = "multicluster.kubernetes.io/service-name";

// Ports whose protocol is never sniffed: a server-first protocol breaks under detection.
const WELL_KNOWN_TCP_PORTS = new Set([25, 53, 3306, 27017]);

export interface KubeOptions extends WorkloadContext {
  domainSuffix: string;
}

/**
 * Istio's ConvertProtocol: UDP stays UDP; otherwise appProtocol (with Kubernetes' standard names) or
 * the port name's prefix before '-' ("grpc-web" as a whole) names it; an unnamed well-known port is TCP.
 */
export function kubePortProtocol(
  port: number,
  name: string,
  protocol: string | undefined,
  appProtocol: string | undefined,
): ServiceProtocol {
  if (protocol === "UDP") return "UDP";
  if (appProtocol === "kubernetes.io/h2c") return "HTTP2";
  if (appProtocol === "kubernetes.io/ws") return "HTTP";
  if (appProtocol === "kubernetes.io/wss") return "HTTPS";
  const declared = appProtocol ?? name;
  if (declared.toLowerCase().startsWith("grpc-web")) return "GRPC-Web";
  const dash = declared.indexOf("-");
  const parsed = parseProtocol(dash < 0 ? declared : declared.slice(0, dash));
  if (parsed) return parsed;
  return WELL_KNOWN_TCP_PORTS.has(port) ? "TCP" : "UnsupportedProtocol";
}

export function kubeHostname(name: string, namespace: string, domainSuffix: string): string {
  return `${name}.${namespace}.svc.${domainSuffix}`;
}

function splitList(value: string | undefined): string[] {
  return value ? value.split(",").map((s) => s.trim()) : [];
}

function convertPort(port: V1ServicePort): ServicePort {
  const name = port.name ?? "";
  return {
    name,
    port: port.port,
    protocol: kubePortProtocol(port.port, name, port.protocol, port.appProtocol),
    targetPort: port.targetPort ?? 0,
  };
}

/** Istio's ConvertService. */
export function kubeService(svc: ConfigObject, options: KubeOptions): Service {
  const spec = (svc.spec ?? {}) as V1ServiceSpec;
  const status = svc.status as V1ServiceStatus | undefined;
  const name = svc.metadata.name ?? "";
  const namespace = svc.metadata.namespace ?? "";
  const annotations = svc.metadata.annotations ?? {};
  const externalName = spec.type === "ExternalName" ? (spec.externalName ?? "") : "";
  const headless = spec.clusterIP === "None";
  let resolution: Service["resolution"] = externalName !== "" ? "Alias" : "ClientSideLB";
  if (headless) resolution = "Passthrough";
  let addresses: string[] = [];
  if (!headless && spec.clusterIP)
    addresses = (spec.clusterIPs?.length ?? 0) > 1 ? [...(spec.clusterIPs ?? [])] : [spec.clusterIP];
  const serviceAccounts = [
    ...splitList(annotations[ANNOTATION_CANONICAL_SERVICE_ACCOUNTS]),
    ...splitList(annotations[ANNOTATION_KUBERNETES_SERVICE_ACCOUNTS]).map((sa) =>
      spiffeIdentity(options.trustDomain, namespace, sa),
    ),
  ];
  const loadBalancer =
    spec.type === "LoadBalancer"
      ? (status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || "").filter((a) => a !== "")
      : [];
  return {
    hostname: kubeHostname(name, namespace, options.domainSuffix),
    namespace,
    name,
    objectName: name,
    registry: "Kubernetes",
    ports: (spec.ports ?? []).map(convertPort),
    addresses,
    defaultAddress: addresses[0] ?? UNSPECIFIED_IP,
    resolution,
    meshExternal: externalName !== "",
    exportTo: splitList(annotations[ANNOTATION_EXPORT_TO]),
    labels: svc.metadata.labels ?? {},
    selector: spec.selector ?? null,
    serviceAccounts,
    creationTime: svc.metadata.creationTimestamp ?? "",
    kubernetesType: spec.type ?? "ClusterIP",
    clusterId: options.clusterId,
    externalName,
    externalAddresses: [...loadBalancer, ...(spec.externalIPs ?? [])],
    nodeLocal: spec.internalTrafficPolicy === "Local",
    publishNotReadyAddresses: spec.publishNotReadyAddresses ?? false,
  };
}

/** The `ns/service` an EndpointSlice belongs to; none for slices of other registries or of no service. */
export function sliceServiceKey(slice: ConfigObject): string[] {
  const labels = slice.metadata.labels ?? {};
  const service = labels[LABEL_SERVICE_NAME];
  if (!service || labels[LABEL_MCS_SERVICE_NAME] !== undefined) return [];
  return [`${slice.metadata.namespace ?? ""}/${service}`];
}

/**
 * Istio's endpointHealthStatus: ready (or unknown) is Healthy; otherwise a terminating endpoint is
 * Terminating and the rest UnHealthy. (Draining needs persistent sessions, which Sluice has not got.)
 */
function sliceHealth(endpoint: V1Endpoint): HealthStatus {
  const { ready, terminating } = endpoint.conditions ?? {};
  if (ready === undefined || ready) return "Healthy";
  return terminating === undefined || terminating ? "Terminating" : "UnHealthy";
}

/** What the endpoint transform reads besides the Service itself. */
export interface KubeEndpointInputs {
  slicesByService: Index<ConfigObject>;
  endpointsByName: Index<ConfigObject>;
  podWorkloads: Collection<WorkloadInstance>;
  /** Ready pods by `ns/ip`, for addresses that do not name their pod. */
  readyPodsByIp: Index<WorkloadInstance>;
  /** WorkloadEntries, which a Service's selector picks as well as Pods. */
  entryWorkloads: Collection<WorkloadInstance>;
}

/** One address of a slice or an Endpoints subset, before ports are applied. */
interface KubeAddress {
  ip: string;
  health: HealthStatus;
  podKey: string | undefined;
}

/**
 * The endpoints of one Service: from its EndpointSlices, or from its Endpoints object when it has no
 * slice. Each address takes its pod's metadata (by targetRef, else a ready pod with that IP in the
 * namespace); an address whose named pod is not known yet is left out, as Istio does, rather than
 * sent without identity.
 */
export function kubeEndpoints(
  ctx: FetchContext,
  service: Service,
  inputs: KubeEndpointInputs,
  options: KubeOptions,
): RegistryEndpoints {
  const serviceKey = `${service.namespace}/${service.name}`;
  const key = registryKey(service);
  if (service.resolution === "Alias")
    return { key, hostname: service.hostname, namespace: service.namespace, endpoints: [] };
  const slices = ctx
    .fetchIndex(inputs.slicesByService, serviceKey)
    .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""));
  const groups =
    slices.length > 0
      ? slices.flatMap(sliceGroups)
      : ctx.fetchIndex(inputs.endpointsByName, serviceKey).flatMap((e) => endpointsGroups(e, service.namespace));
  const seen = new Set<string>();
  const endpoints: ServiceEndpoint[] = [];
  for (const group of groups) {
    for (const address of group.addresses) {
      const workload = podFor(ctx, address, service.namespace, inputs);
      if (address.podKey !== undefined && workload === undefined) continue;
      for (const port of group.ports) {
        const servicePort = service.ports.find((p) => p.name === (port.name ?? ""));
        if (!servicePort || port.port === undefined) continue;
        // The same address can sit in two slices while it moves between them; the first one wins.
        const dedupe = `${address.ip}|${servicePort.name}`;
        if (seen.has(dedupe)) continue;
        seen.add(dedupe);
        const target: EndpointTarget = {
          hostname: service.hostname,
          namespace: service.namespace,
          servicePort: servicePort.port,
          servicePortName: servicePort.name,
          address: address.ip,
          port: port.port,
          health: address.health,
        };
        endpoints.push(endpointOf(ctx, target, workload, options));
      }
    }
  }
  endpoints.push(...selectedEntryEndpoints(ctx, service, inputs.entryWorkloads, options));
  return { key, hostname: service.hostname, namespace: service.namespace, endpoints };
}

/**
 * A ClientSideLB Service with a selector also serves the healthy WorkloadEntries of its namespace it
 * selects (Istio's serviceInstancesFromWorkloadInstances). A numeric targetPort is overridden by the
 * entry's port of the service port's name; a named one must be among the entry's ports.
 */
function selectedEntryEndpoints(
  ctx: FetchContext,
  service: Service,
  entryWorkloads: Collection<WorkloadInstance>,
  options: KubeOptions,
): ServiceEndpoint[] {
  if (service.selector === null || service.meshExternal || service.resolution !== "ClientSideLB") return [];
  const selected = ctx
    .fetch(entryWorkloads, { namespace: service.namespace, labels: service.selector, where: (w) => w.ready })
    .sort((a, b) => a.name.localeCompare(b.name));
  const endpoints: ServiceEndpoint[] = [];
  for (const servicePort of service.ports) {
    for (const workload of selected) {
      const { targetPort } = servicePort;
      let port = servicePort.port;
      if (typeof targetPort === "string") {
        const named = workload.portMap[targetPort];
        if (!named) continue;
        port = named;
      } else if (targetPort > 0) {
        port = workload.portMap[servicePort.name] || targetPort;
      }
      const target: EndpointTarget = {
        hostname: service.hostname,
        namespace: service.namespace,
        servicePort: servicePort.port,
        servicePortName: servicePort.name,
        address: workload.address,
        port,
        // A WorkloadEntry's endpoint carries no health (Istio's serviceentry controller sets none).
        health: "Unknown",
      };
      endpoints.push(endpointOf(ctx, target, workload, options));
    }
  }
  return endpoints;
}

interface AddressGroup {
  addresses: KubeAddress[];
  ports: (DiscoveryV1EndpointPort | CoreV1EndpointPort)[];
}

function sliceGroups(slice: ConfigObject): AddressGroup[] {
  // FQDN slices are not supported by Istio either.
  if (slice.addressType === "FQDN") return [];
  const namespace = slice.metadata.namespace ?? "";
  const endpoints = (slice.endpoints ?? []) as V1Endpoint[];
  const addresses = endpoints.flatMap((e) =>
    e.addresses.map((ip) => ({ ip, health: sliceHealth(e), podKey: podRefKey(e.targetRef, namespace) })),
  );
  return [{ addresses, ports: (slice.ports ?? []) as DiscoveryV1EndpointPort[] }];
}

function endpointsGroups(object: ConfigObject, namespace: string): AddressGroup[] {
  const subsets = (object.subsets ?? []) as V1EndpointSubset[];
  const toAddress = (health: HealthStatus) => (a: V1EndpointAddress) => ({
    ip: a.ip,
    health,
    podKey: podRefKey(a.targetRef, namespace),
  });
  return subsets.map((subset) => ({
    addresses: [
      ...(subset.addresses ?? []).map(toAddress("Healthy")),
      ...(subset.notReadyAddresses ?? []).map(toAddress("UnHealthy")),
    ],
    ports: subset.ports ?? [],
  }));
}

function podFor(
  ctx: FetchContext,
  address: KubeAddress,
  namespace: string,
  inputs: KubeEndpointInputs,
): WorkloadInstance | undefined {
  if (address.podKey !== undefined) return ctx.fetch(inputs.podWorkloads, { key: address.podKey })[0];
  // A manually managed address: the best guess is a ready pod with that IP in the same namespace.
  return ctx.fetchIndex(inputs.readyPodsByIp, `${namespace}/${address.ip}`)[0];
}
