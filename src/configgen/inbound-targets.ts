// A sidecar's inbound ports: what its inbound listener chains and `inbound|port||` clusters are built from.
import { isIPv4, isIPv6 } from "node:net";
import { parseProtocol } from "../config/index.ts";
import type { ProxyNode, PushSnapshot } from "../model/index.ts";
import type { InboundEndpoint } from "../networking/cluster/index.ts";
import { type InboundPort, interceptionMode } from "../networking/listener/index.ts";
import type { Service, ServicePort } from "../registry/index.ts";

/** One inbound port of a sidecar: what its listener chains and its `inbound|port||` cluster are built from. */
export interface InboundTarget {
  listener: InboundPort;
  port: ServicePort;
  /** The services declaring the port; for a Sidecar ingress listener, the one whose target port it is, if any. */
  services: Service[];
  /** Where a Sidecar ingress listener's cluster delivers; the mesh's inbound policy decides when unset. */
  endpoint?: InboundEndpoint;
}

/**
 * Where a Sidecar ingress listener delivers (Istio's buildInboundClustersFromSidecar): its
 * defaultEndpoint's port at loopback or the pod's IP of the family asked for (the other family when the
 * proxy lacks it), or a unix socket; the original destination without one.
 */
export function ingressEndpoint(defaultEndpoint: string | undefined, proxy: ProxyNode): InboundEndpoint {
  if (!defaultEndpoint) return { address: "", port: 0 };
  if (defaultEndpoint.startsWith("unix://")) return { address: defaultEndpoint, port: 0 };
  const colon = defaultEndpoint.lastIndexOf(":");
  const host = defaultEndpoint.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  const port = Number(defaultEndpoint.slice(colon + 1));
  const ipv4 = proxy.ipAddresses.find((ip) => isIPv4(ip));
  const ipv6 = proxy.ipAddresses.find((ip) => isIPv6(ip));
  switch (host) {
    case "0.0.0.0":
      return { address: ipv4 ?? "127.0.0.1", port };
    case "::":
      return { address: ipv6 ?? "::1", port };
    case "127.0.0.1":
      return { address: ipv4 || !ipv6 ? "127.0.0.1" : "::1", port };
    case "::1":
      return { address: ipv6 || !ipv4 ? "::1" : "127.0.0.1", port };
    default:
      // Validation admits no other host; Istio falls back to the original destination.
      return { address: "", port };
  }
}

/**
 * The sidecar's inbound ports (Istio's buildInboundChainConfigs): the Sidecar's ingress listeners when
 * it declares some, else the ports of the services selecting the workload, none under interception NONE
 * (the application owns those ports). Each carries its PeerAuthentication mode.
 */
export function sidecarInboundTargets(snap: PushSnapshot, proxy: ProxyNode): InboundTarget[] {
  const scope = snap.sidecarScope(proxy);
  const noneMode = interceptionMode(proxy) === "NONE";
  const targets = snap.serviceTargets(proxy);
  if (scope.ingressListeners.length > 0) {
    return scope.ingressListeners.map((ingress) => {
      const number = ingress.port.number ?? 0;
      const protocol = parseProtocol(ingress.port.protocol ?? "") ?? "UnsupportedProtocol";
      const captureMode = ingress.captureMode ?? "DEFAULT";
      // The cluster is the service's whose target port this is, if any (Istio's findOrCreateService).
      const owner = targets.find((t) => targetPortOf(t.port) === number)?.service;
      return {
        listener: {
          targetPort: number,
          servicePort: number,
          protocol,
          // A Sidecar has no hostname; telemetry gets a synthetic one, as in Istio.
          hostname: `${scope.name}.${scope.namespace}`,
          portName: ingress.port.name ?? "",
          mtlsMode: snap.mtlsMode(proxy, number),
          bindToPort: captureMode === "DEFAULT" ? noneMode : captureMode === "NONE",
          bind: ingress.bind,
          sidecar: { name: scope.name, namespace: scope.namespace },
        },
        port: { name: ingress.port.name ?? "", port: number, protocol, targetPort: number },
        services: owner ? [owner] : [],
        endpoint: ingressEndpoint(ingress.defaultEndpoint, proxy),
      };
    });
  }
  if (noneMode) return [];
  return targets.map(({ service, port }) => {
    const targetPort = targetPortOf(port);
    return {
      listener: {
        targetPort,
        servicePort: port.port,
        protocol: port.protocol,
        hostname: service.hostname,
        portName: port.name,
        ...(service.registry === "Kubernetes"
          ? { kubernetesService: { name: service.name, namespace: service.namespace } }
          : {}),
        mtlsMode: snap.mtlsMode(proxy, targetPort),
      },
      port,
      services: [service],
    };
  });
}

/** The workload port of a service port: its numeric target port, else the port itself. */
function targetPortOf(port: ServicePort): number {
  return typeof port.targetPort === "number" && port.targetPort > 0 ? port.targetPort : port.port;
}
