// The service registry's model: services, the workloads behind them and their endpoints, as plain
// immutable data (Istio's model.Service, model.WorkloadInstance and model.IstioEndpoint). Every field
// is always present (empty string, empty list) so two equal objects compare equal in krt.
import type { parseProtocol } from "../config/index.ts";
import type { Labels } from "../krt/index.ts";

/** Istio's protocol names, plus UnsupportedProtocol: "not declared, sniff it". */
export type ServiceProtocol = NonNullable<ReturnType<typeof parseProtocol>> | "UnsupportedProtocol";

/** How proxies reach the service's endpoints (Istio's model.Resolution). */
export type Resolution =
  /** The proxy balances over the endpoints it is sent (EDS). Kubernetes ClusterIP, ServiceEntry STATIC. */
  | "ClientSideLB"
  /** The proxy resolves the endpoint addresses through DNS (ServiceEntry DNS). */
  | "DNSLB"
  /** The proxy resolves one endpoint through DNS and uses its first answer (ServiceEntry DNS_ROUND_ROBIN). */
  | "DNSRoundRobinLB"
  /** Traffic goes to the address the caller asked for. Kubernetes headless, ServiceEntry NONE. */
  | "Passthrough"
  /** A Kubernetes ExternalName service: an alias for another hostname, no endpoints. */
  | "Alias"
  /** ServiceEntry DYNAMIC_DNS: resolved per request from SNI or Host. */
  | "DynamicDNS";

/** Which registry a service came from (Istio's provider.ID): "External" is ServiceEntry. */
export type RegistryKind = "Kubernetes" | "External";

export interface ServicePort {
  name: string;
  port: number;
  protocol: ServiceProtocol;
  /** Kubernetes targetPort (a number or a container port name), ServiceEntry targetPort; 0 when unset. */
  targetPort: number | string;
}

export interface Service {
  /** The fully qualified name: `name.ns.svc.<domain>` for Kubernetes, the host as written for a ServiceEntry. */
  hostname: string;
  namespace: string;
  /** Istio's Attributes.Name: the Kubernetes Service's name, or the hostname for a ServiceEntry. */
  name: string;
  /** Name of the config object this came from (the Service or the ServiceEntry). */
  objectName: string;
  registry: RegistryKind;
  ports: ServicePort[];
  /** Virtual IPs (Kubernetes clusterIPs, ServiceEntry addresses); empty when there are none. */
  addresses: string[];
  /** The first address, or 0.0.0.0 when there is none (headless, ServiceEntry without addresses). */
  defaultAddress: string;
  resolution: Resolution;
  meshExternal: boolean;
  /** As written (networking.istio.io/exportTo annotation, ServiceEntry exportTo); empty means the mesh default. */
  exportTo: string[];
  labels: Labels;
  /** Workload labels the service selects (Kubernetes spec.selector, ServiceEntry workloadSelector); null when it selects by none. */
  selector: Labels | null;
  /** Identities allowed to serve it (Istio's ServiceAccounts: SPIFFE URIs or ServiceEntry subjectAltNames). */
  serviceAccounts: string[];
  /** The config object's creationTimestamp ("" when unknown); the older of two same-host services wins. */
  creationTime: string;
  /** Kubernetes spec.type ("" for ServiceEntry). */
  kubernetesType: string;
  /** The cluster a Kubernetes Service is in (Istio's cluster ID); "" for a ServiceEntry. */
  clusterId: string;
  /** ExternalName target ("" otherwise). */
  externalName: string;
  /** LoadBalancer ingress IPs/hostnames and externalIPs. */
  externalAddresses: string[];
  /** internalTrafficPolicy: Local. */
  nodeLocal: boolean;
  publishNotReadyAddresses: boolean;
  /**
   * A ServiceEntry host's addresses from its status, as Istio's IP autoallocation controller records
   * them (only for entries it allocates for: resolution not NONE, no spec addresses, not opted out).
   */
  autoAllocatedAddresses?: string[];
}

/**
 * EndpointSlice conditions as Istio reads them (model.HealthStatus); "Unknown" for ServiceEntry
 * endpoints, which carry no health (Envoy's UNKNOWN, counted as healthy).
 */
export type HealthStatus = "Unknown" | "Healthy" | "UnHealthy" | "Draining" | "Terminating";

/** A Pod or a WorkloadEntry: something that can serve services, before any service port is applied. */
export interface WorkloadInstance {
  kind: "Pod" | "WorkloadEntry";
  name: string;
  namespace: string;
  /** IP, or (WorkloadEntry only) a DNS name or `unix://` path. "" for a Pod without an IP yet. */
  address: string;
  /** The workload's labels plus the topology labels Istio adds (region, zone, subzone, cluster, node, network). */
  labels: Labels;
  /** The Kubernetes service account name ("" when none). */
  serviceAccount: string;
  /** SPIFFE identity `spiffe://<trust domain>/ns/<ns>/sa/<sa>` ("" when no service account). */
  identity: string;
  /** `region/zone/subzone` ("" when unknown). */
  locality: string;
  clusterId: string;
  network: string;
  /** security.istio.io/tlsMode: "istio" for sidecar-injected workloads, "disabled" otherwise (or a custom value). */
  tlsMode: string;
  /** Deployment (or other controller) name, or the WorkloadEntry's name: the istio.workload metadata. */
  workloadName: string;
  /** Load-balancing weight (1 when unset). */
  weight: number;
  /** Named container ports (Pod) or WorkloadEntry ports: service port name → port. */
  portMap: Readonly<Record<string, number>>;
  /**
   * A Pod with spec.subdomain: its DNS name `<dnsHostname>.<subdomain>.<ns>.svc.<domain>` (hostname is
   * spec.hostname, else the Pod's name), which the NDS name table publishes for headless services.
   */
  podDns?: PodDnsName;
  /** Ready to serve: a running, ready Pod with an IP; a WorkloadEntry not failing its health checks. */
  ready: boolean;
  /** The address is not an IP: only DNS ServiceEntries can use it. */
  dnsOnly: boolean;
  nodeName: string;
}

/** One address:port of a service port (Istio's IstioEndpoint, resolved to its service). */
export interface ServiceEndpoint {
  hostname: string;
  /** The service's namespace. */
  namespace: string;
  servicePort: number;
  servicePortName: string;
  address: string;
  /** The port on the workload. 0 for a unix socket. */
  port: number;
  health: HealthStatus;
  labels: Labels;
  serviceAccount: string;
  identity: string;
  locality: string;
  clusterId: string;
  network: string;
  tlsMode: string;
  workloadName: string;
  /** The workload's namespace. */
  workloadNamespace: string;
  /** "Pod", "WorkloadEntry", or "" for an address with no workload object behind it. */
  workloadKind: string;
  weight: number;
  /** The serving Pod's own DNS name parts, when it sets spec.subdomain. */
  podDns?: PodDnsName;
  /** The serving Pod's node (spec.nodeName), when it has one. */
  nodeName?: string;
}

/** The live endpoints of a service port (ServiceRegistry.endpointsFor). */
/**
 * Which services select a workload (Kubernetes selectors, ServiceEntry workloadSelectors), from the
 * registry's live services: what a workload change reaches.
 */
export interface WorkloadServices {
  /** The services of `namespace` whose non-empty selector selects a workload labelled `labels`. */
  servicesSelecting(namespace: string, labels: Readonly<Record<string, string>>): readonly Service[];
}

export interface EndpointLookup {
  endpointsFor(hostname: string, port: number, namespace: string): readonly ServiceEndpoint[];
}

/** A Pod's spec.hostname (its name when unset) and spec.subdomain. */
export interface PodDnsName {
  hostname: string;
  subdomain: string;
}

/** The endpoints one registry holds for one of its services. */
export interface RegistryEndpoints {
  /** The key of the service this belongs to in its registry collection. */
  key: string;
  hostname: string;
  namespace: string;
  endpoints: ServiceEndpoint[];
}

/** The endpoints of one port of one service, over every registry (one EDS ClusterLoadAssignment's worth). */
export interface PortEndpoints {
  hostname: string;
  namespace: string;
  port: number;
  endpoints: ServiceEndpoint[];
}

export const UNSPECIFIED_IP = "0.0.0.0";

/** A service's key in its registry's collections: unique per registry, cluster, namespace, config object and host. */
export function registryKey(service: Service): string {
  return `${service.registry}/${service.clusterId}/${service.namespace}/${service.objectName}/${service.hostname}`;
}

/** A service's key in the aggregate view, where one service stands for each hostname in a namespace. */
export function hostKey(namespace: string, hostname: string): string {
  return `${namespace}/${hostname}`;
}
