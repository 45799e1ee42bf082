// The HTTP connection manager network filter (listener_builder.go buildHTTPConnectionManager),
// with its HTTP filters from the ordered registry (router last), access logs, request id, tracing,
// and the per-class settings: client cert forwarding inbound and on gateways, remote address on gateways.
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import {
  core,
  envoyMetadata,
  envoyTracing,
  envoyType,
  hcm,
  listener,
  packAny,
  type route,
  uuidRequestId,
} from "../../api/index.ts";
import type { ProxyNode } from "../../model/proxy.ts";
import type { ServiceProtocol } from "../../registry/index.ts";
import { toDuration } from "../duration.ts";
import type { ListenerClass } from "../httpfilter/index.ts";
import { buildAccessLogs } from "./accesslog.ts";
import { gatewayTopology, type ListenerEnv } from "./types.ts";

export const HCM_FILTER = "envoy.filters.network.http_connection_manager";
const SERVER_NAME = "istio-envoy";
const ZERO = create(DurationSchema, {});
/** PILOT_TRACE_SAMPLING's default. */
const DEFAULT_TRACE_SAMPLING = 1.0;

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
}

/** The HCM as a network filter of a filter chain. */
export function buildHcmFilter(env: ListenerEnv, options: HcmOptions): listener.Filter {
  return create(listener.FilterSchema, {
    name: HCM_FILTER,
    configType: {
      case: "typedConfig",
      value: packAny(hcm.HttpConnectionManagerSchema, buildHttpConnectionManager(env, options)),
    },
  });
}

export function buildHttpConnectionManager(env: ListenerEnv, options: HcmOptions): hcm.HttpConnectionManager {
  const { mesh, proxy } = env;
  const normalization = mesh.pathNormalization?.normalization ?? "DEFAULT";
  const manager = create(hcm.HttpConnectionManagerSchema, {
    codecType: hcm.HttpConnectionManager_CodecType.AUTO,
    statPrefix: options.statPrefix,
    routeSpecifier:
      "rds" in options.routes
        ? {
            case: "rds",
            value: create(hcm.RdsSchema, {
              routeConfigName: options.routes.rds,
              configSource: create(core.ConfigSourceSchema, {
                configSourceSpecifier: { case: "ads", value: create(core.AggregatedConfigSourceSchema) },
                initialFetchTimeout: ZERO,
                resourceApiVersion: core.ApiVersion.V3,
              }),
            }),
          }
        : { case: "routeConfig", value: options.routes.inline },
    httpFilters: [...options.httpFilters],
    useRemoteAddress: options.listenerClass === "gateway",
    normalizePath: normalization !== "NONE",
    mergeSlashes: normalization === "MERGE_SLASHES" || normalization === "DECODE_AND_MERGE_SLASHES",
    pathWithEscapedSlashesAction:
      normalization === "DECODE_AND_MERGE_SLASHES"
        ? hcm.HttpConnectionManager_PathWithEscapedSlashesAction.UNESCAPE_AND_FORWARD
        : hcm.HttpConnectionManager_PathWithEscapedSlashesAction.KEEP_UNCHANGED,
    upgradeConfigs: [create(hcm.HttpConnectionManager_UpgradeConfigSchema, { upgradeType: "websocket" })],
    streamIdleTimeout: ZERO,
    accessLog: buildAccessLogs(mesh),
    proxy100Continue: true,
    requestIdExtension: create(hcm.RequestIDExtensionSchema, {
      typedConfig: packAny(
        uuidRequestId.UuidRequestIdConfigSchema,
        create(uuidRequestId.UuidRequestIdConfigSchema, { useRequestIdForTraceSampling: true }),
      ),
    }),
  });

  const idleTimeout = toDuration(proxy.metadata.IDLE_TIMEOUT);
  if (idleTimeout) manager.commonHttpProtocolOptions = create(core.HttpProtocolOptionsSchema, { idleTimeout });
  if (mesh.enableTracing) manager.tracing = buildTracing(env);

  if (options.listenerClass === "sidecarInbound") {
    manager.forwardClientCertDetails = hcm.HttpConnectionManager_ForwardClientCertDetails.APPEND_FORWARD;
    manager.setCurrentClientCertDetails = create(hcm.HttpConnectionManager_SetCurrentClientCertDetailsSchema, {
      subject: true,
      uri: true,
      dns: true,
    });
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
    if (setsDetails) {
      manager.setCurrentClientCertDetails = create(hcm.HttpConnectionManager_SetCurrentClientCertDetailsSchema, {
        subject: true,
        cert: true,
        dns: true,
        uri: true,
      });
    }
    manager.serverName = SERVER_NAME;
    manager.httpProtocolOptions = create(core.Http1ProtocolOptionsSchema);
  }
  if (options.httpProxy) {
    manager.httpProtocolOptions = create(core.Http1ProtocolOptionsSchema, { allowAbsoluteUrl: true });
  }
  // Node metadata HTTP10: outbound and gateway connection managers accept HTTP/1.0 clients.
  if (proxy.metadata.HTTP10 && options.listenerClass !== "sidecarInbound") {
    manager.httpProtocolOptions ??= create(core.Http1ProtocolOptionsSchema);
    manager.httpProtocolOptions.acceptHttp10 = true;
  }
  return manager;
}

/** Tracing from the mesh's legacy settings (no Telemetry): sampling and Istio's tags, sorted by tag. */
function buildTracing({ mesh, proxy }: ListenerEnv): hcm.HttpConnectionManager_Tracing {
  let sampling = mesh.defaultConfig?.tracing?.sampling || DEFAULT_TRACE_SAMPLING;
  if (sampling > 100) sampling = DEFAULT_TRACE_SAMPLING;
  const enableIstioTags = mesh.defaultConfig?.tracing?.enableIstioTags ?? true;
  const tags = enableIstioTags ? [...serviceTags(proxy), ...DRY_RUN_TAGS] : [];
  return create(hcm.HttpConnectionManager_TracingSchema, {
    clientSampling: create(envoyType.PercentSchema, { value: 100 }),
    overallSampling: create(envoyType.PercentSchema, { value: 100 }),
    randomSampling: create(envoyType.PercentSchema, { value: sampling }),
    customTags: tags.sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0)),
  });
}

function literalTag(tag: string, value: string): envoyTracing.CustomTag {
  return create(envoyTracing.CustomTagSchema, {
    tag,
    type: { case: "literal", value: create(envoyTracing.CustomTag_LiteralSchema, { value }) },
  });
}

/** Who this proxy is, as Istio tags every span. */
function serviceTags(proxy: ProxyNode): envoyTracing.CustomTag[] {
  return [
    literalTag("istio.canonical_revision", proxy.labels["service.istio.io/canonical-revision"] || "latest"),
    literalTag("istio.canonical_service", proxy.labels["service.istio.io/canonical-name"] || "unknown"),
    literalTag("istio.mesh_id", proxy.metadata.MESH_ID || "unknown"),
    literalTag("istio.namespace", proxy.metadata.NAMESPACE || "default"),
    literalTag("istio.cluster_id", proxy.metadata.CLUSTER_ID || "unknown"),
  ];
}

/** The dry-run AuthorizationPolicy results the RBAC filter leaves in request metadata. */
function dryRunTag(tag: string, key: string): envoyTracing.CustomTag {
  return create(envoyTracing.CustomTagSchema, {
    tag,
    type: {
      case: "metadata",
      value: create(envoyTracing.CustomTag_MetadataSchema, {
        kind: create(envoyMetadata.MetadataKindSchema, {
          kind: { case: "request", value: create(envoyMetadata.MetadataKind_RequestSchema) },
        }),
        metadataKey: create(envoyMetadata.MetadataKeySchema, {
          key: "envoy.filters.http.rbac",
          path: [create(envoyMetadata.MetadataKey_PathSegmentSchema, { segment: { case: "key", value: key } })],
        }),
      }),
    },
  });
}

const DRY_RUN_TAGS: readonly envoyTracing.CustomTag[] = [
  dryRunTag("istio.authorization.dry_run.allow_policy.name", "istio_dry_run_allow_shadow_effective_policy_id"),
  dryRunTag("istio.authorization.dry_run.allow_policy.result", "istio_dry_run_allow_shadow_engine_result"),
  dryRunTag("istio.authorization.dry_run.deny_policy.name", "istio_dry_run_deny_shadow_effective_policy_id"),
  dryRunTag("istio.authorization.dry_run.deny_policy.result", "istio_dry_run_deny_shadow_engine_result"),
];
