// The HTTP connection manager network filter (listener_builder.go buildHTTPConnectionManager),
// with its HTTP filters from the ordered registry (router last), access logs and tracing (Telemetry API
// or the mesh's legacy settings), request id,
// and the per-class settings: client cert forwarding inbound and on gateways, remote address on gateways.
import { create } from "@bufbuild/protobuf";
import { type Any, DurationSchema } from "@bufbuild/protobuf/wkt";
import { core, encodeMessage, hcm, listener, packAny, preEncoded, type route, uuidRequestId } from "../../api/index.ts";
import type { ServiceProtocol } from "../../registry/index.ts";
import { weakTable } from "../../util/index.ts";
import { toDuration } from "../duration.ts";
import type { ListenerClass } from "../httpfilter/index.ts";
import { buildHcmTracing } from "../telemetry/tracing.ts";
import { buildAccessLogs } from "./accesslog.ts";
import { newHttpConnectionManager } from "./message.ts";
import { envMemos, gatewayTopology, type ListenerEnv } from "./types.ts";

export const HCM_FILTER = "envoy.filters.network.http_connection_manager";
const SERVER_NAME = "istio-envoy";
const ZERO = create(DurationSchema, {});

// The parts every connection manager shares are built once (messages are never changed once built).
const ADS_CONFIG_SOURCE = preEncoded(
  core.ConfigSourceSchema,
  create(core.ConfigSourceSchema, {
    configSourceSpecifier: { case: "ads", value: create(core.AggregatedConfigSourceSchema) },
    initialFetchTimeout: ZERO,
    resourceApiVersion: core.ApiVersion.V3,
  }),
);
const WEBSOCKET_UPGRADE = create(hcm.HttpConnectionManager_UpgradeConfigSchema, { upgradeType: "websocket" });
const INBOUND_CLIENT_CERT_DETAILS = create(hcm.HttpConnectionManager_SetCurrentClientCertDetailsSchema, {
  subject: true,
  uri: true,
  dns: true,
});
const GATEWAY_CLIENT_CERT_DETAILS = create(hcm.HttpConnectionManager_SetCurrentClientCertDetailsSchema, {
  subject: true,
  cert: true,
  dns: true,
  uri: true,
});

/** The UUID request id extension, packed once per value of its one varying field. */
const REQUEST_ID_EXTENSIONS = new Map(
  [true, false].map((useRequestIdForTraceSampling) => [
    useRequestIdForTraceSampling,
    create(hcm.RequestIDExtensionSchema, {
      typedConfig: packAny(
        uuidRequestId.UuidRequestIdConfigSchema,
        create(uuidRequestId.UuidRequestIdConfigSchema, { useRequestIdForTraceSampling }),
      ),
    }),
  ]),
);

export interface HcmOptions {
  listenerClass: ListenerClass;
  /** `outbound_0.0.0.0_8080;`, `inbound_0.0.0.0_8080;`, a gateway server's name. */
  statPrefix: string;
  /** The RouteConfiguration: by RDS name (outbound, gateways) or inline (sidecar inbound). */
  routes: { rds: string } | { inline: route.RouteConfiguration };
  /** From httpfilter's buildHttpFilters, router last. */
  httpFilters: readonly hcm.HttpFilter[];
  /** The port's protocol: HTTP2 and GRPC inbound get HTTP/2 options. */
  protocol?: ServiceProtocol;
  /** The sidecar's HTTP proxy listener: requests carry absolute URLs. */
  httpProxy?: boolean;
  /** A gateway's QUIC listener: the HTTP/3 codec only. */
  http3?: boolean;
  /**
   * A waypoint's service connection manager (inbound class): no client certificate to forward (HBONE
   * ended on connect_terminate), and HTTP/1.0 accepted when the node asks.
   */
  waypoint?: boolean;
}

/** The HCM as a network filter of a filter chain. */
export function buildHcmFilter(env: ListenerEnv, options: HcmOptions): listener.Filter {
  return create(listener.FilterSchema, {
    name: HCM_FILTER,
    configType: { case: "typedConfig", value: packedManager(env, options) },
  });
}

const HCM_TYPE_URL = `type.googleapis.com/${hcm.HttpConnectionManagerSchema.typeName}`;

/**
 * Per listener build (its env) and HTTP filter list (by identity) and the other options a manager
 * reads, the encoding of the manager without its stat prefix and route.
 */
const ENCODED_WITHOUT_ROUTE = weakTable<ListenerEnv, Map<readonly hcm.HttpFilter[], Map<string, Uint8Array>>>(
  "listener/encodedManagers",
);

/**
 * The manager packed into an Any. The RDS-routed managers of one listener build that share their
 * HTTP filter list (the per-port managers of a sidecar's outbound listeners, a gateway's servers)
 * differ only in stat prefix and RDS name, fields 2 and 3, which come before every other field a
 * manager sets (the codec, field 1, is AUTO and not written; HTTP/3 managers are packed whole): the
 * rest is encoded once, and each manager's bytes are its own two fields followed by that encoding,
 * exactly what encoding the whole manager writes. Inline routes (sidecar inbound, whose filter lists
 * are per chain) are packed whole.
 */
function packedManager(env: ListenerEnv, options: HcmOptions): Any {
  const routes = options.routes;
  if (options.http3 || !("rds" in routes)) {
    return packAny(hcm.HttpConnectionManagerSchema, buildHttpConnectionManager(env, options));
  }
  const encodedWithoutRoute = envMemos(env).weak(ENCODED_WITHOUT_ROUTE);
  let byFilters = encodedWithoutRoute.get(env);
  if (!byFilters) {
    byFilters = new Map();
    encodedWithoutRoute.set(env, byFilters);
  }
  let byOptions = byFilters.get(options.httpFilters);
  if (!byOptions) {
    byOptions = new Map();
    byFilters.set(options.httpFilters, byOptions);
  }
  const key = `${options.listenerClass} ${options.protocol ?? ""} ${options.httpProxy === true}`;
  let rest = byOptions.get(key);
  if (!rest) {
    rest = encodeMessage(hcm.HttpConnectionManagerSchema, managerWithoutRoute(env, options));
    byOptions.set(key, rest);
  }
  const head = encodeRouteFields(options.statPrefix, routes.rds);
  const value = new Uint8Array(head.length + rest.length);
  value.set(head);
  value.set(rest, head.length);
  return { $typeName: "google.protobuf.Any", typeUrl: HCM_TYPE_URL, value };
}

/**
 * Fields 2 (stat prefix) and 3 (RDS), as encoding the manager writes them: the encoding of a manager
 * holding only those (the compiled encoder leaves a plain object's missing fields unset).
 */
function encodeRouteFields(statPrefix: string, routeConfigName: string): Uint8Array {
  const routeFields = {
    $typeName: hcm.HttpConnectionManagerSchema.typeName,
    statPrefix,
    routeSpecifier: { case: "rds", value: rds(routeConfigName) },
  } as hcm.HttpConnectionManager;
  return encodeMessage(hcm.HttpConnectionManagerSchema, routeFields);
}

function rds(routeConfigName: string): hcm.Rds {
  return {
    $typeName: "envoy.extensions.filters.network.http_connection_manager.v3.Rds",
    routeConfigName,
    configSource: ADS_CONFIG_SOURCE,
  };
}

export function buildHttpConnectionManager(env: ListenerEnv, options: HcmOptions): hcm.HttpConnectionManager {
  const manager = managerWithoutRoute(env, options);
  manager.statPrefix = options.statPrefix;
  manager.routeSpecifier =
    "rds" in options.routes
      ? { case: "rds", value: rds(options.routes.rds) }
      : { case: "routeConfig", value: options.routes.inline };
  return manager;
}

/** Everything but the stat prefix and route. */
function managerWithoutRoute(env: ListenerEnv, options: HcmOptions): hcm.HttpConnectionManager {
  const { mesh, proxy } = env;
  const normalization = mesh.pathNormalization?.normalization ?? "DEFAULT";
  const tracing = env.telemetry?.tracing(options.listenerClass) ?? buildHcmTracing(undefined, mesh, proxy, []);
  const manager = newHttpConnectionManager();
  manager.codecType = hcm.HttpConnectionManager_CodecType.AUTO;
  manager.httpFilters = [...options.httpFilters];
  manager.useRemoteAddress = options.listenerClass === "gateway";
  manager.normalizePath = normalization !== "NONE";
  manager.mergeSlashes = normalization === "MERGE_SLASHES" || normalization === "DECODE_AND_MERGE_SLASHES";
  manager.pathWithEscapedSlashesAction =
    normalization === "DECODE_AND_MERGE_SLASHES"
      ? hcm.HttpConnectionManager_PathWithEscapedSlashesAction.UNESCAPE_AND_FORWARD
      : hcm.HttpConnectionManager_PathWithEscapedSlashesAction.KEEP_UNCHANGED;
  manager.upgradeConfigs = [WEBSOCKET_UPGRADE];
  manager.streamIdleTimeout = ZERO;
  manager.accessLog = [...(env.telemetry?.accessLogs(options.listenerClass) ?? buildAccessLogs(mesh))];
  manager.proxy100Continue = true;
  const requestId = REQUEST_ID_EXTENSIONS.get(tracing.useRequestIdForTraceSampling);
  if (requestId) manager.requestIdExtension = requestId;

  const idleTimeout = toDuration(proxy.metadata.IDLE_TIMEOUT);
  if (idleTimeout) manager.commonHttpProtocolOptions = create(core.HttpProtocolOptionsSchema, { idleTimeout });
  if (tracing.tracing) manager.tracing = tracing.tracing;

  if (options.listenerClass === "sidecarInbound") {
    if (!options.waypoint) {
      manager.forwardClientCertDetails = hcm.HttpConnectionManager_ForwardClientCertDetails.APPEND_FORWARD;
      manager.setCurrentClientCertDetails = INBOUND_CLIENT_CERT_DETAILS;
    }
    manager.serverName = SERVER_NAME;
    if (options.protocol === "HTTP2" || options.protocol === "GRPC") {
      manager.http2ProtocolOptions = create(core.Http2ProtocolOptionsSchema);
    }
  } else if (options.listenerClass === "gateway") {
    // ProxyConfig gatewayTopology: trusted proxies in front, and how client certificates are forwarded.
    const topology = gatewayTopology(env);
    manager.xffNumTrustedHops = topology.numTrustedProxies ?? 0;
    const forward = topology.forwardClientCertDetails;
    manager.forwardClientCertDetails =
      forward && forward !== "UNDEFINED"
        ? hcm.HttpConnectionManager_ForwardClientCertDetails[forward]
        : hcm.HttpConnectionManager_ForwardClientCertDetails.SANITIZE_SET;
    const setsDetails =
      manager.forwardClientCertDetails === hcm.HttpConnectionManager_ForwardClientCertDetails.SANITIZE_SET ||
      manager.forwardClientCertDetails === hcm.HttpConnectionManager_ForwardClientCertDetails.APPEND_FORWARD;
    if (setsDetails) manager.setCurrentClientCertDetails = GATEWAY_CLIENT_CERT_DETAILS;
    manager.serverName = SERVER_NAME;
    manager.httpProtocolOptions = create(core.Http1ProtocolOptionsSchema);
  }
  if (options.http3) {
    manager.codecType = hcm.HttpConnectionManager_CodecType.HTTP3;
    manager.http3ProtocolOptions = create(core.Http3ProtocolOptionsSchema);
  }
  if (options.httpProxy) {
    manager.httpProtocolOptions = create(core.Http1ProtocolOptionsSchema, { allowAbsoluteUrl: true });
  }
  // Node metadata HTTP10: outbound, gateway and waypoint connection managers accept HTTP/1.0 clients.
  if (proxy.metadata.HTTP10 && (options.listenerClass !== "sidecarInbound" || options.waypoint)) {
    manager.httpProtocolOptions ??= create(core.Http1ProtocolOptionsSchema);
    manager.httpProtocolOptions.acceptHttp10 = true;
  }
  return manager;
}
