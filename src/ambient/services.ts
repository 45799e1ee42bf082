// Kubernetes Services and ServiceEntries as ztunnel's `istio.workload.Service` (Istio's ambient
// constructService and constructServiceEntries, pilot/pkg/serviceregistry/ambient/services.go), and
// which of those sharing a hostname are sent (selectWorkloadServices). ExternalName Services are left
// out: ztunnel's DNS proxy forwards those names upstream.

import { clone, create } from "@bufbuild/protobuf";
import type { V1ServiceSpec } from "@kubernetes/client-node";
import { workloadapi } from "../api/index.ts";
import { type ConfigObject, parseProtocol } from "../config/index.ts";
import { serviceSpecOf } from "../config/typed.ts";
import type { ServiceEntry } from "../config/types/index.ts";
import type { Labels } from "../krt/index.ts";
import { autoAllocatedByHost, kubeHostname, kubePortProtocol, type ServiceProtocol } from "../registry/index.ts";
import { compareStrings, isWildcard } from "../util/index.ts";
import { ipAddressBytes, ipCidrBytes } from "./ip-bytes.ts";
import { ipString, packAddress, type ServiceInfo } from "./model.ts";

const ANNOTATION_TRAFFIC_DISTRIBUTION = "networking.istio.io/traffic-distribution";

const Scope = workloadapi.LoadBalancing_Scope;
const Mode = workloadapi.LoadBalancing_Mode;

/** What a Service's (or a ServiceEntry's) conversion reads besides the object. */
export interface ServiceContext {
  /** The network of the cluster's addresses (the system namespace's topology.istio.io/network). */
  network: string;
  /** The annotations of the Service's namespace (its traffic distribution default). */
  namespaceAnnotations: Labels;
  /** The waypoint its traffic goes through (and its `namespace/name`), and whether traffic from ingress gateways does too. */
  waypoint?: { key: string; address: workloadapi.GatewayAddress; ingressUseWaypoint: boolean };
}

export function kubeServiceInfo(
  svc: ConfigObject,
  context: ServiceContext & { domainSuffix: string },
): ServiceInfo | undefined {
  const spec = serviceSpecOf(svc) ?? ({} as V1ServiceSpec);
  if (spec.type === "ExternalName") return undefined;
  const name = svc.metadata.name ?? "";
  const namespace = svc.metadata.namespace ?? "";
  const addresses: workloadapi.NetworkAddress[] = [];
  for (const vip of serviceVips(spec)) {
    const address = ipAddressBytes(vip);
    // As Istio: a Service with an address that does not parse is left out.
    if (!address) return undefined;
    addresses.push(create(workloadapi.NetworkAddressSchema, { network: context.network, address }));
  }
  const ports = (spec.ports ?? []).map((p) =>
    create(workloadapi.PortSchema, {
      servicePort: p.port,
      targetPort: typeof p.targetPort === "number" ? p.targetPort : 0,
      appProtocol: appProtocol(kubePortProtocol(p.port, p.name ?? "", p.protocol, p.appProtocol)),
    }),
  );
  const service = create(workloadapi.ServiceSchema, {
    name,
    namespace,
    hostname: kubeHostname(name, namespace, context.domainSuffix),
    addresses,
    ports,
    loadBalancing: loadBalancing(svc, spec, context.namespaceAnnotations),
    ipFamilies: ipFamilies(spec.ipFamilies),
    waypoint: context.waypoint?.address,
    ingressUseWaypoint: context.waypoint?.ingressUseWaypoint ?? false,
    // A Kubernetes Service is always the canonical one for its hostname.
    canonical: true,
  });
  const targetPortNames: Record<number, string> = {};
  const portNames: Record<number, string> = {};
  for (const p of spec.ports ?? []) {
    if (typeof p.targetPort === "string") targetPortNames[p.port] = p.targetPort;
    portNames[p.port] = p.name ?? "";
  }
  return {
    ...addressInfo(service),
    selector: spec.selector && Object.keys(spec.selector).length > 0 ? spec.selector : null,
    targetPortNames,
    portNames,
    source: { kind: "Service", name },
    creationTime: creationTime(svc),
    ...(context.waypoint ? { waypointKey: context.waypoint.key } : {}),
  };
}

/** The parts of a service's info its WDS Service gives: name, aliases, the packed resource. */
function addressInfo(service: workloadapi.Service) {
  return {
    kind: "service" as const,
    name: `${service.namespace}/${service.hostname}`,
    aliases: service.addresses.map(
      (a) => `${a.network}/${ipString(a.address)}${a.length === undefined ? "" : `/${a.length}`}`,
    ),
    resource: packAddress({ case: "service", value: service }),
    service,
    namespace: service.namespace,
  };
}

/** An object's creationTimestamp in ms, 0 when it has none. */
export function creationTime(object: ConfigObject): number {
  const time = Date.parse(String(object.metadata.creationTimestamp ?? ""));
  return Number.isNaN(time) ? 0 : time;
}

/**
 * A ServiceEntry's services, one per host (Istio's serviceEntriesInfo): its addresses (CIDR blocks
 * with their length), else the addresses Istio's allocator wrote into its status for the host (not for
 * a wildcard host unless DYNAMIC_DNS); none at all when one of its addresses does not parse.
 */
export function serviceEntryServiceInfos(entry: ServiceEntry, context: ServiceContext): ServiceInfo[] {
  const spec = entry.spec ?? { hosts: [] };
  const name = entry.metadata.name ?? "";
  const namespace = entry.metadata.namespace ?? "";
  const addresses: workloadapi.NetworkAddress[] = [];
  for (const text of spec.addresses ?? []) {
    const block = ipCidrBytes(text);
    if (!block) return [];
    addresses.push(
      create(workloadapi.NetworkAddressSchema, {
        network: context.network,
        address: block.address,
        ...(block.length < block.address.length * 8 ? { length: block.length } : {}),
      }),
    );
  }
  const resolution = spec.resolution ?? "NONE";
  const autoAllocated = autoAllocatedByHost(entry);
  const ports = (spec.ports ?? []).map((p) =>
    create(workloadapi.PortSchema, {
      servicePort: p.number,
      targetPort: p.targetPort || p.number,
      appProtocol: appProtocol(parseProtocol(p.protocol ?? "")),
    }),
  );
  const portNames: Record<number, string> = {};
  for (const p of spec.ports ?? []) portNames[p.number] = p.name;
  // Resolution NONE passes traffic through to the address called, whatever its health.
  const lb =
    resolution === "NONE"
      ? create(workloadapi.LoadBalancingSchema, {
          mode: Mode.PASSTHROUGH,
          healthPolicy: workloadapi.LoadBalancing_HealthPolicy.ALLOW_ALL,
        })
      : distributionLoadBalancing(
          trafficDistribution({}, entry.metadata.annotations ?? {}, context.namespaceAnnotations),
        );
  const selector = spec.workloadSelector?.labels;
  return spec.hosts.map((host) => {
    let hostAddresses = addresses;
    if (addresses.length === 0 && resolution !== "NONE" && (!isWildcard(host) || resolution === "DYNAMIC_DNS")) {
      hostAddresses = (autoAllocated.get(host) ?? []).flatMap((ip) => {
        const address = ipAddressBytes(ip);
        return address ? [create(workloadapi.NetworkAddressSchema, { network: context.network, address })] : [];
      });
    }
    const service = create(workloadapi.ServiceSchema, {
      name,
      namespace,
      hostname: host,
      addresses: hostAddresses,
      ports,
      waypoint: context.waypoint?.address,
      ingressUseWaypoint: context.waypoint?.ingressUseWaypoint ?? false,
      subjectAltNames: [...(spec.subjectAltNames ?? [])],
      loadBalancing: lb,
    });
    return {
      ...addressInfo(service),
      selector: selector && Object.keys(selector).length > 0 ? selector : null,
      targetPortNames: {},
      portNames,
      source: { kind: "ServiceEntry", name },
      creationTime: creationTime(entry),
      ...(context.waypoint ? { waypointKey: context.waypoint.key } : {}),
    };
  });
}

/**
 * The services sent of those sharing one hostname (Istio's selectWorkloadServices): in each namespace
 * a Kubernetes Service, else the oldest ServiceEntry host; of those, the Kubernetes Service, else the
 * oldest, is marked canonical. Ties of age go to the first by kind, namespace and name (Istio's pick
 * among equally old entries depends on map order).
 */
export function selectServices(sameHostname: readonly ServiceInfo[]): ServiceInfo[] {
  const ordered = [...sameHostname].sort((a, b) =>
    compareStrings(
      `${a.source.kind}/${a.namespace}/${a.source.name}`,
      `${b.source.kind}/${b.namespace}/${b.source.name}`,
    ),
  );
  const older = (a: ServiceInfo, b: ServiceInfo) => a.creationTime < b.creationTime && b.source.kind !== "Service";
  const byNamespace = new Map<string, ServiceInfo>();
  for (const info of ordered) {
    const best = byNamespace.get(info.namespace);
    if (info.source.kind === "Service" || !best || older(info, best)) byNamespace.set(info.namespace, info);
  }
  let canonical: ServiceInfo | undefined;
  for (const info of byNamespace.values()) {
    if (info.source.kind === "Service" || !canonical || older(info, canonical)) canonical = info;
  }
  if (canonical && !canonical.service.canonical) {
    const service = clone(workloadapi.ServiceSchema, canonical.service);
    service.canonical = true;
    byNamespace.set(canonical.namespace, { ...canonical, ...addressInfo(service) });
  }
  return [...byNamespace.values()];
}

/** The cluster IPs, without "None" (headless) and empty ones. */
function serviceVips(spec: V1ServiceSpec): string[] {
  const ips = spec.clusterIPs && spec.clusterIPs.length > 0 ? spec.clusterIPs : [spec.clusterIP ?? ""];
  return ips.filter((ip) => ip !== "" && ip !== "None");
}

export function appProtocol(protocol: ServiceProtocol | undefined): workloadapi.AppProtocol {
  switch (protocol) {
    case "HTTP":
      return workloadapi.AppProtocol.HTTP11;
    case "HTTP2":
      return workloadapi.AppProtocol.HTTP2;
    case "GRPC":
      return workloadapi.AppProtocol.GRPC;
    case "TLS":
    case "HTTPS":
      return workloadapi.AppProtocol.TLS;
    case "TCP":
      return workloadapi.AppProtocol.TCP;
    default:
      return workloadapi.AppProtocol.UNKNOWN;
  }
}

type TrafficDistribution = "PreferSameZone" | "PreferSameNode" | "Any";

/** Istio's GetTrafficDistribution: spec.trafficDistribution, else the Service's annotation, else its namespace's. */
function trafficDistribution(
  spec: V1ServiceSpec,
  annotations: Labels,
  namespaceAnnotations: Labels,
): TrafficDistribution {
  const fromSpec = (spec as { trafficDistribution?: string }).trafficDistribution;
  if (fromSpec === "PreferClose" || fromSpec === "PreferSameZone") return "PreferSameZone";
  if (fromSpec === "PreferSameNode") return "PreferSameNode";
  for (const value of [
    annotations[ANNOTATION_TRAFFIC_DISTRIBUTION],
    namespaceAnnotations[ANNOTATION_TRAFFIC_DISTRIBUTION],
  ]) {
    if (!value) continue;
    switch (value.toLowerCase()) {
      case "preferclose":
      case "prefersamezone":
        return "PreferSameZone";
      case "prefersamenode":
        return "PreferSameNode";
      default:
        return "Any";
    }
  }
  return "Any";
}

/** The load balancing a traffic distribution asks for; none for Any. */
function distributionLoadBalancing(distribution: TrafficDistribution): workloadapi.LoadBalancing | undefined {
  switch (distribution) {
    case "PreferSameZone":
      return create(workloadapi.LoadBalancingSchema, {
        routingPreference: [Scope.NETWORK, Scope.REGION, Scope.ZONE],
        mode: Mode.FAILOVER,
      });
    case "PreferSameNode":
      return create(workloadapi.LoadBalancingSchema, {
        routingPreference: [Scope.NETWORK, Scope.REGION, Scope.ZONE, Scope.SUBZONE, Scope.NODE],
        mode: Mode.FAILOVER,
      });
    default:
      return undefined;
  }
}

function loadBalancing(
  svc: ConfigObject,
  spec: V1ServiceSpec,
  namespaceAnnotations: Labels,
): workloadapi.LoadBalancing | undefined {
  let lb =
    spec.internalTrafficPolicy === "Local"
      ? create(workloadapi.LoadBalancingSchema, { routingPreference: [Scope.NODE], mode: Mode.STRICT })
      : distributionLoadBalancing(trafficDistribution(spec, svc.metadata.annotations ?? {}, namespaceAnnotations));
  if (spec.publishNotReadyAddresses) {
    lb ??= create(workloadapi.LoadBalancingSchema);
    lb.healthPolicy = workloadapi.LoadBalancing_HealthPolicy.ALLOW_ALL;
  }
  return lb;
}

function ipFamilies(families: readonly string[] | undefined): workloadapi.IPFamilies {
  if (families?.length === 2) return workloadapi.IPFamilies.DUAL;
  if (families?.length === 1)
    return families[0] === "IPv4" ? workloadapi.IPFamilies.IPV4_ONLY : workloadapi.IPFamilies.IPV6_ONLY;
  return workloadapi.IPFamilies.AUTOMATIC;
}
