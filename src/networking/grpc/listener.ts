// Proxyless gRPC listeners (Istio's grpcgen lds.go). A client listener is an api_listener whose
// HttpConnectionManager names its route configuration over RDS (fault then router, the filters gRPC
// runs); an xDS-enabled server's listener has one filter chain with an inline route that serves
// every call (non_forwarding_action).
import { create } from "@bufbuild/protobuf";
import { core, hcm, listener, packAny, route, tls } from "../../api/index.ts";
import type { Service } from "../../registry/index.ts";
import type { Memos } from "../../util/index.ts";
import { outboundClusterName } from "../cluster/index.ts";
import { fault } from "../httpfilter/fault.ts";
import { router } from "../httpfilter/router.ts";
import { joinHostPort, type RequestedListener, SERVER_LISTENER_PREFIX, splitHostPort } from "./names.ts";

// The filters' context: gRPC reads only the filters' typed configs.
const FILTER_CONTEXT = { listenerClass: "sidecarOutbound" } as const;
const TLS_TRANSPORT_SOCKET = "envoy.transport_sockets.tls";
/**
 * Istio sets no stat_prefix and leaves the server's virtual host unnamed (gRPC reads neither); Envoy's
 * rules require both, so they carry constants to stay valid Envoy config.
 */
const STAT_PREFIX = "grpc";

function socketAddress(address: string, port: number): core.Address {
  return create(core.AddressSchema, {
    address: { case: "socketAddress", value: { address, portSpecifier: { case: "portValue", value: port } } },
  });
}

/** The route configuration (and cluster) name of a service port: `outbound|<port>||<fqdn>`. */
export function grpcRouteName(memos: Memos, hostname: string, port: number): string {
  return outboundClusterName(memos, port, "", hostname);
}

/**
 * One api_listener per requested host form and service port: `<requested-host>:<port>` (gRPC watches
 * `echo:7070` and `echo.ns.svc.cluster.local:7070` separately), all routed by the FQDN's route.
 */
export function buildClientListeners(
  memos: Memos,
  service: Service,
  requested: RequestedListener,
): listener.Listener[] {
  const out: listener.Listener[] = [];
  for (const host of [...requested.requestedHosts].sort()) {
    for (const port of service.ports) {
      if (requested.ports && !requested.ports.has(String(port.port))) continue;
      const manager = create(hcm.HttpConnectionManagerSchema, {
        statPrefix: STAT_PREFIX,
        httpFilters: [...fault.httpFilters(FILTER_CONTEXT), ...router.httpFilters(FILTER_CONTEXT)],
        routeSpecifier: {
          case: "rds",
          value: {
            configSource: { configSourceSpecifier: { case: "ads", value: {} } },
            routeConfigName: grpcRouteName(memos, service.hostname, port.port),
          },
        },
      });
      out.push(
        create(listener.ListenerSchema, {
          name: joinHostPort(host, port.port),
          address: socketAddress(service.defaultAddress, port.port),
          additionalAddresses: service.addresses.slice(1).map((a) => ({ address: socketAddress(a, port.port) })),
          apiListener: { apiListener: packAny(hcm.HttpConnectionManagerSchema, manager) },
        }),
      );
    }
  }
  return out;
}

/** What a server listener's one filter chain is made of; the security features fill it in. */
export interface ServerChainOptions {
  /** With mTLS: `inbound-mtls`, the certificates the server presents and requires. */
  tls?: tls.DownstreamTlsContext;
  /** HTTP filters ahead of the router (the RBAC filters, DENY then ALLOW). */
  httpFilters?: readonly hcm.HttpFilter[];
}

/** `<ip>:<port>` of a server listener name; undefined for another name or a malformed one. */
export function parseServerListenerName(name: string): { ip: string; port: number } | undefined {
  if (!name.startsWith(SERVER_LISTENER_PREFIX)) return undefined;
  const hostPort = splitHostPort(name.slice(SERVER_LISTENER_PREFIX.length));
  if (!hostPort || !/^\d+$/.test(hostPort.port)) return undefined;
  return { ip: hostPort.host, port: Number(hostPort.port) };
}

/** The listener of an xDS-enabled server at `<ip>:<port>`: no listener filters, one chain. */
export function buildServerListener(name: string, options: ServerChainOptions = {}): listener.Listener | undefined {
  const parsed = parseServerListenerName(name);
  if (!parsed) return undefined;
  const suffix = options.tls ? "mtls" : "plaintext";
  const manager = create(hcm.HttpConnectionManagerSchema, {
    statPrefix: STAT_PREFIX,
    routeSpecifier: {
      case: "routeConfig",
      value: create(route.RouteConfigurationSchema, {
        name: "inbound",
        virtualHosts: [
          {
            name: "inbound",
            domains: ["*"],
            routes: [
              {
                match: { pathSpecifier: { case: "prefix", value: "/" } },
                action: { case: "nonForwardingAction", value: {} },
              },
            ],
          },
        ],
      }),
    },
    httpFilters: [...(options.httpFilters ?? []), ...router.httpFilters(FILTER_CONTEXT)],
  });
  return create(listener.ListenerSchema, {
    name,
    address: socketAddress(parsed.ip, parsed.port),
    filterChains: [
      {
        name: `inbound-${suffix}`,
        filters: [
          {
            name: `inbound-hcm${suffix}`,
            configType: { case: "typedConfig", value: packAny(hcm.HttpConnectionManagerSchema, manager) },
          },
        ],
        transportSocket: options.tls && {
          name: TLS_TRANSPORT_SOCKET,
          configType: { case: "typedConfig", value: packAny(tls.DownstreamTlsContextSchema, options.tls) },
        },
      },
    ],
  });
}
