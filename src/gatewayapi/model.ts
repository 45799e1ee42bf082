// The plain data the conversion stages pass to each other: settings, the service view it needs from the
// registry, the cluster objects it reads, and the errors it reports in statuses.
import type { ConfigObject, gatewayapi, ServiceEntry } from "../config/index.ts";

export interface ConversionSettings {
  /** Cluster DNS suffix, e.g. "cluster.local". */
  domainSuffix: string;
  /** lastTransitionTime of conditions that change (RFC 3339); the current time when unset. */
  now?: string;
  /** Handle the experimental XBackend and XBackendTrafficPolicy kinds (Istio's PILOT_ENABLE_ALPHA_GATEWAY_API, off by default). */
  alphaGatewayApi?: boolean;
}

export const DEFAULT_SETTINGS: ConversionSettings = { domainSuffix: "cluster.local" };

/** The istiod flags deciding which Gateway API kinds the live conversion reads (KindInfo.feature). */
export interface GatewayApiFeatures extends Pick<ConversionSettings, "alphaGatewayApi"> {
  /** Read InferencePools (Istio's ENABLE_GATEWAY_API_INFERENCE_EXTENSION, off by default). */
  inferenceExtension?: boolean;
}

export interface ServicePort {
  name?: string;
  port: number;
  protocol?: string;
}

/** One endpoint as the registry knows it: which service port it serves and its workload port (0 = unset). */
export interface ServiceEndpoint {
  servicePort: number;
  endpointPort: number;
}

/** A service as the mesh registry sees it; the conversion needs hostnames, ports, labels, endpoints and addresses. */
export interface RegistryService {
  hostname: string;
  namespace: string;
  ports: readonly ServicePort[];
  labels?: Readonly<Record<string, string>>;
  /** External (load balancer) addresses, from every cluster. */
  externalAddresses?: readonly string[];
  /** Its virtual IPs (a Kubernetes Service's cluster IPs), else its default address (0.0.0.0 when headless). */
  addresses?: readonly string[];
  /** Kubernetes spec.type ("" or absent for a ServiceEntry): a LoadBalancer without addresses is pending. */
  kubernetesType?: string;
  endpoints: readonly ServiceEndpoint[];
}

/** What the conversion asks of the service registry: every service with a hostname, in any namespace. */
export interface ServiceLookup {
  servicesByHostname(hostname: string): readonly RegistryService[];
}

/** A ServiceLookup over a fixed list (file mode and tests). */
export function staticServiceLookup(services: readonly RegistryService[]): ServiceLookup {
  const byHost = new Map<string, RegistryService[]>();
  for (const service of services) {
    const list = byHost.get(service.hostname) ?? [];
    list.push(service);
    byHost.set(service.hostname, list);
  }
  return { servicesByHostname: (hostname) => byHost.get(hostname) ?? [] };
}

export function lookupService(
  services: ServiceLookup,
  hostname: string,
  namespace: string,
): RegistryService | undefined {
  return services.servicesByHostname(hostname).find((s) => s.namespace === namespace);
}

/** A reason and message for a condition that went wrong (Istio's ConfigError). */
export interface ConfigError {
  reason: string;
  message: string;
}

/** Joins two errors the way Istio does: the first keeps its reason, messages are joined by "; ". */
export function joinErrors(a: ConfigError | undefined, b: ConfigError | undefined): ConfigError | undefined {
  if (!b) return a;
  if (!a) return b;
  return { reason: a.reason, message: `${a.message}; ${b.message}` };
}

/** Objects of the cluster the conversion looks up, keyed "ns/name" (namespaces and classes by name). */
export interface ClusterObjects {
  services: ReadonlyMap<string, ConfigObject>;
  secrets: ReadonlyMap<string, ConfigObject>;
  configMaps: ReadonlyMap<string, ConfigObject>;
  namespaces: ReadonlyMap<string, ConfigObject>;
  serviceEntries: ReadonlyMap<string, ServiceEntry>;
  gateways: ReadonlyMap<string, gatewayapi.Gateway>;
  gatewayClasses: ReadonlyMap<string, gatewayapi.GatewayClass>;
  inferencePools: ReadonlyMap<string, ConfigObject>;
  backends: ReadonlyMap<string, ConfigObject>;
}

export function objectKey(obj: ConfigObject): string {
  return `${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}`;
}

export function nameOf(obj: ConfigObject): string {
  return obj.metadata.name ?? "";
}

export function namespaceOf(obj: ConfigObject): string {
  return obj.metadata.namespace ?? "";
}

/** The objects of `kind` by key, as the kind's type: what reaches the conversion was admitted against its schema. */
function keyed<T extends ConfigObject = ConfigObject>(
  objects: readonly ConfigObject[],
  kind: string,
  key: (o: ConfigObject) => string = objectKey,
): Map<string, T> {
  return new Map(objects.filter((o) => o.kind === kind).map((o) => [key(o), o as T]));
}

/** The objects conversion looks up by key, by kind (cluster-scoped kinds by name alone). */
export function clusterObjects(objects: readonly ConfigObject[]): ClusterObjects {
  return {
    services: keyed(objects, "Service"),
    secrets: keyed(objects, "Secret"),
    configMaps: keyed(objects, "ConfigMap"),
    namespaces: keyed(objects, "Namespace", nameOf),
    serviceEntries: keyed<ServiceEntry>(objects, "ServiceEntry"),
    gateways: keyed<gatewayapi.Gateway>(objects, "Gateway"),
    gatewayClasses: keyed<gatewayapi.GatewayClass>(objects, "GatewayClass", nameOf),
    inferencePools: keyed(objects, "InferencePool"),
    backends: keyed(objects, "XBackend"),
  };
}

export const GATEWAY_GROUP = "gateway.networking.k8s.io";
/** The Gateway API's experimental group (XBackend, XBackendTrafficPolicy). */
export const GATEWAY_X_GROUP = "gateway.networking.x-k8s.io";

/** Something a route can attach to: one listener of a Gateway or ListenerSet (or the mesh). */
export interface ParentInfo {
  /** "<ns>/<istio gateway name>", or "mesh". */
  internalName: string;
  /** Kind/namespace/name of the object routes reference ("Gateway" or "ListenerSet"). */
  parentKind: string;
  parentNamespace: string;
  parentName: string;
  allowedKinds: readonly { group: string; kind: string }[];
  /** The Istio server hosts ("ns/host"). */
  hostnames: readonly string[];
  /** The listener hostname as written ("" when unset). */
  originalHostname: string;
  sectionName: string;
  port: number;
  protocol: string;
}

/** Items grouped by key, groups and items in first-seen order. */
export function groupBy<T>(items: Iterable<T>, key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
