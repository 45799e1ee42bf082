// The one small interface every HTTP filter implements, and the context it is built from.
import type { dfpCommon, hcm } from "../../api/index.ts";
import type { RequestAuthenticationJwtRules, TrafficExtension } from "../../config/types/index.ts";
import type { ServiceProtocol } from "../../registry/index.ts";
import type { AuthzBuildOptions, CustomAuthzOptions, PoliciesByAction } from "../authz/index.ts";
import type { ProxyTelemetry } from "../telemetry/types.ts";
import type { ListenerClass } from "./listener-class.ts";

/** Everything an HTTP filter may read; the policies are those that apply to the proxy being served. */
export interface HttpFilterContext {
  listenerClass: ListenerClass;
  /** The port's protocol: a GRPC-Web port gets the grpc_web filter. */
  protocol?: ServiceProtocol;
  /** AuthorizationPolicies applying to the workload (sidecar inbound) or gateway, by action. */
  authz?: PoliciesByAction;
  /** How the RBAC filters are built (trust domains, filter state). */
  authzOptions?: Omit<AuthzBuildOptions, "custom">;
  /** What CUSTOM policies need (mesh extension providers, services); without it CUSTOM policies add nothing. */
  customAuthz?: CustomAuthzOptions;
  /** jwtRules of the RequestAuthentications applying to the workload or gateway, in policy order. */
  jwtRules?: readonly RequestAuthenticationJwtRules[];
  /** The cluster serving a JWKS URI's host and port, when the mesh knows it. */
  jwksCluster?: (host: string, port: number) => string | undefined;
  /** A Prometheus metrics provider applies (MeshConfig defaultProviders.metrics or Telemetry): istio.stats runs. */
  prometheusStats?: boolean;
  /** TrafficExtensions attached to the proxy (WasmPlugins translated), highest priority first: HTTP ones join the chain by phase and match. */
  extensions?: readonly TrafficExtension[];
  /** The listener's port, for TrafficExtension port matches. */
  port?: number;
  /** The Telemetry API for the proxy: when present, it decides istio.stats and its metric overrides. */
  telemetry?: ProxyTelemetry;
  /** PILOT_ENABLE_PERSISTENT_SESSION_FILTER: the stateful session filter on outbound and gateway managers. */
  persistentSessions?: boolean;
  /** The DNS cache of the DYNAMIC_DNS wildcard ServiceEntry the connection manager was built for. */
  forwardProxyDnsCache?: dfpCommon.DnsCacheConfig;
  /** Under outboundTrafficPolicy ALLOW_ANY_DYNAMIC_DNS, the shared cache unknown hosts resolve into. */
  allowAnyDnsCache?: dfpCommon.DnsCacheConfig;
  /** A waypoint's connection manager: JWT claims are known before the route is chosen, as on gateways. */
  waypoint?: boolean;
  /** Receives what a filter had to leave out (unusable providers, dropped rules, bad JWKS URIs). */
  report?: (problem: string) => void;
}

/** One HTTP filter feature: the filters it puts in the HTTP connection manager, in its place in the order. */
export interface HttpFilterPlugin {
  /** The Envoy filter name it adds (or the feature's name when it adds several). */
  readonly name: string;
  /** The filters for this context, in order; empty when the feature does not apply. */
  httpFilters(context: HttpFilterContext): readonly hcm.HttpFilter[];
}
