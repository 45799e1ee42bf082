// Kubernetes Services as ztunnel's `istio.workload.Service` (Istio's ambient constructService,
// pilot/pkg/serviceregistry/ambient/services.go). ExternalName Services are left out: ztunnel's DNS
// proxy forwards those names upstream.

import { create } from "@bufbuild/protobuf";
import type { V1ServiceSpec } from "@kubernetes/client-node";
import { workloadapi } from "../api/index.ts";
import type { ConfigObject } from "../config/index.ts";
import { serviceSpecOf } from "../config/typed.ts";
import type { Labels } from "../krt/index.ts";
import { kubeHostname, kubePortProtocol, type ServiceProtocol } from "../registry/index.ts";
import { ipAddressBytes } from "./ip-bytes.ts";
import { ipString, packAddress, type ServiceInfo } from "./model.ts";

const ANNOTATION_TRAFFIC_DISTRIBUTION = "networking.istio.io/traffic-distribution";

const Scope = workloadapi.LoadBalancing_Scope;
const Mode = workloadapi.LoadBalancing_Mode;

/** What a Service's conversion reads besides the Service. */
export interface ServiceContext {
  domainSuffix: string;
  /** The network of the cluster's addresses (the system namespace's topology.istio.io/network). */
  network: string;
  /** The annotations of the Service's namespace (its traffic distribution default). */
  namespaceAnnotations: Labels;
  /** The waypoint its traffic goes through, and whether traffic from ingress gateways does too. */
  waypoint?: { address: workloadapi.GatewayAddress; ingressUseWaypoint: boolean };
}

export function kubeServiceInfo(svc: ConfigObject, context: ServiceContext): ServiceInfo | undefined {
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
  for (const p of spec.ports ?? []) if (typeof p.targetPort === "string") targetPortNames[p.port] = p.targetPort;
  return {
    kind: "service",
    name: `${namespace}/${service.hostname}`,
    aliases: addresses.map((a) => `${a.network}/${ipString(a.address)}`),
    resource: packAddress({ case: "service", value: service }),
    service,
    namespace,
    selector: spec.selector && Object.keys(spec.selector).length > 0 ? spec.selector : null,
    targetPortNames,
  };
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

function loadBalancing(
  svc: ConfigObject,
  spec: V1ServiceSpec,
  namespaceAnnotations: Labels,
): workloadapi.LoadBalancing | undefined {
  let lb: workloadapi.LoadBalancing | undefined;
  if (spec.internalTrafficPolicy === "Local") {
    lb = create(workloadapi.LoadBalancingSchema, { routingPreference: [Scope.NODE], mode: Mode.STRICT });
  } else {
    const distribution = trafficDistribution(spec, svc.metadata.annotations ?? {}, namespaceAnnotations);
    if (distribution === "PreferSameZone") {
      lb = create(workloadapi.LoadBalancingSchema, {
        routingPreference: [Scope.NETWORK, Scope.REGION, Scope.ZONE],
        mode: Mode.FAILOVER,
      });
    } else if (distribution === "PreferSameNode") {
      lb = create(workloadapi.LoadBalancingSchema, {
        routingPreference: [Scope.NETWORK, Scope.REGION, Scope.ZONE, Scope.SUBZONE, Scope.NODE],
        mode: Mode.FAILOVER,
      });
    }
  }
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
