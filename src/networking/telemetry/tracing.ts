// Tracing (Istio's telemetry.go Tracing and core/tracing.go): the Telemetry tracing entries merged per
// workload mode over MeshConfig defaultProviders.tracing, and the HTTP connection manager's tracing
// config: provider, sampling, Istio's tags and the custom tags. Without Telemetry tracing or a default
// provider the mesh's legacy enableTracing settings apply.
import { posix } from "node:path";
import { create } from "@bufbuild/protobuf";
import { type Any, type Duration, DurationSchema } from "@bufbuild/protobuf/wkt";
import {
  core,
  envoyMetadata,
  envoyTrace,
  envoyTracing,
  envoyType,
  hcm,
  otelResourceDetectors,
  otelSamplers,
  packAny,
} from "../../api/index.ts";
import type {
  HttpHeader,
  MeshConfig,
  OpenTelemetryTracingProvider,
  ZipkinTracingProvider,
} from "../../config/index.ts";
import type { Telemetry, TelemetryTracingCustomTagsValue } from "../../config/types/index.ts";
import { type ProxyNode, versionAtLeast } from "../../model/index.ts";
import { lookupService, type RegistryService } from "../authz/index.ts";
import { toDuration } from "../duration.ts";
import { modeMatches, type WorkloadMode } from "./select.ts";
import type { HcmTracing } from "./types.ts";

type ExtensionProvider = NonNullable<MeshConfig["extensionProviders"]>[number];

/** PILOT_TRACE_SAMPLING's default. */
const DEFAULT_TRACE_SAMPLING = 1.0;

/** The merged tracing of one workload mode. */
export interface TracingSpec {
  provider?: ExtensionProvider;
  disabled: boolean;
  randomSamplingPercentage?: number;
  customTags?: Record<string, TelemetryTracingCustomTagsValue>;
  useRequestIdForTraceSampling: boolean;
  enableIstioTags: boolean;
}

function findProvider(mesh: MeshConfig, name: string): ExtensionProvider | undefined {
  return (mesh.extensionProviders ?? []).find((p) => (p.name ?? "").toLowerCase() === name.toLowerCase());
}

/** Undefined when neither a Telemetry nor MeshConfig defaultProviders.tracing configures tracing. */
export function mergeTracing(
  chain: readonly Telemetry[],
  mesh: MeshConfig,
  mode: WorkloadMode,
): TracingSpec | undefined {
  const entries = chain.flatMap((t) => t.spec?.tracing ?? []);
  const defaults = mesh.defaultProviders?.tracing ?? [];
  if (entries.length === 0 && defaults.length === 0) return undefined;
  const spec: TracingSpec = { disabled: false, useRequestIdForTraceSampling: true, enableIstioTags: true };
  // One provider per mode: the first named.
  if (defaults.length > 0) spec.provider = findProvider(mesh, defaults[0]);
  for (const entry of entries) {
    if (!modeMatches(entry.match?.mode, mode)) continue;
    const first = entry.providers?.[0];
    if (first) spec.provider = findProvider(mesh, first.name);
    if (entry.disableSpanReporting !== undefined && entry.disableSpanReporting !== null) {
      spec.disabled = entry.disableSpanReporting;
    }
    if (entry.customTags !== undefined) spec.customTags = entry.customTags;
    if (entry.randomSamplingPercentage !== undefined && entry.randomSamplingPercentage !== null) {
      spec.randomSamplingPercentage = entry.randomSamplingPercentage;
    }
    if (entry.useRequestIdForTraceSampling !== undefined && entry.useRequestIdForTraceSampling !== null) {
      spec.useRequestIdForTraceSampling = entry.useRequestIdForTraceSampling;
    }
    if (entry.enableIstioTags !== undefined && entry.enableIstioTags !== null) {
      spec.enableIstioTags = entry.enableIstioTags;
    }
  }
  if (!spec.provider) spec.disabled = true;
  return spec;
}

/** The HCM tracing of a proxy: from the Telemetry `spec` when one applies, else the mesh's legacy settings. */
export function buildHcmTracing(
  spec: TracingSpec | undefined,
  mesh: MeshConfig,
  proxy: ProxyNode,
  services: readonly RegistryService[],
  report?: (problem: string) => void,
): HcmTracing {
  const meshSampling = () => {
    const sampling = mesh.defaultConfig?.tracing?.sampling || DEFAULT_TRACE_SAMPLING;
    return sampling > 100 ? DEFAULT_TRACE_SAMPLING : sampling;
  };
  if (!spec) {
    if (!mesh.enableTracing) return { useRequestIdForTraceSampling: true };
    const enableIstioTags = mesh.defaultConfig?.tracing?.enableIstioTags ?? true;
    return {
      tracing: tracingConfig(meshSampling(), [
        ...(enableIstioTags ? istioTags(proxy) : []),
        ...waypointPeerTags(proxy),
      ]),
      useRequestIdForTraceSampling: true,
    };
  }
  // Without tracing the request id extension keeps its default, as in Istio.
  if (spec.disabled || !spec.provider) return { useRequestIdForTraceSampling: true };
  const provider = tracerOf(spec.provider, proxy, services);
  if (typeof provider === "string") {
    report?.(`tracing provider ${spec.provider.name}: ${provider}`);
    return { useRequestIdForTraceSampling: true };
  }
  const tags = [
    ...(spec.enableIstioTags ? istioTags(proxy) : []),
    ...waypointPeerTags(proxy),
    ...customTags(spec.customTags ?? {}),
  ];
  // A provider's own sampler gets every request; else Telemetry's percentage, else the mesh's.
  const sampling = provider.customSampler ? 100 : (spec.randomSamplingPercentage ?? meshSampling());
  const tracing = tracingConfig(sampling, tags);
  // Routers start a child span for the upstream request, as SkyWalking needs everywhere.
  if (proxy.type === "router" || provider.spawnUpstreamSpan) tracing.spawnUpstreamSpan = true;
  tracing.provider = provider.http;
  if (provider.maxTagLength) tracing.maxPathTagLength = provider.maxTagLength;
  return { tracing, useRequestIdForTraceSampling: spec.useRequestIdForTraceSampling };
}

function tracingConfig(sampling: number, tags: envoyTracing.CustomTag[]): hcm.HttpConnectionManager_Tracing {
  return create(hcm.HttpConnectionManager_TracingSchema, {
    clientSampling: create(envoyType.PercentSchema, { value: 100 }),
    overallSampling: create(envoyType.PercentSchema, { value: 100 }),
    randomSampling: create(envoyType.PercentSchema, { value: sampling }),
    customTags: tags.sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0)),
  });
}

/** The Envoy tracer of a provider, or why it cannot be built (Istio's configureFromProviderConfig). */
function tracerOf(
  provider: ExtensionProvider,
  proxy: ProxyNode,
  services: readonly RegistryService[],
): Tracer | string {
  // The span's service name identifies the proxy producing it: its node's cluster, as istio-agent set it.
  const serviceName = proxy.serviceCluster;
  const http = (name: string, config: Any) =>
    create(envoyTrace.Tracing_HttpSchema, { name, configType: { case: "typedConfig", value: config } });
  if (provider.zipkin) {
    const z = provider.zipkin;
    const t = clusterTarget(z.service, z.port, services);
    if (typeof t === "string") return t;
    return { http: http("envoy.tracers.zipkin", zipkinConfig(z, t, proxy)), maxTagLength: z.maxTagLength };
  }
  if (provider.datadog) {
    const d = provider.datadog;
    const t = clusterTarget(d.service, d.port, services);
    if (typeof t === "string") return t;
    const config = create(envoyTrace.DatadogConfigSchema, {
      collectorCluster: t.cluster,
      serviceName,
      collectorHostname: t.hostname,
    });
    return {
      http: http("envoy.tracers.datadog", packAny(envoyTrace.DatadogConfigSchema, config)),
      maxTagLength: d.maxTagLength,
    };
  }
  if (provider.opentelemetry) {
    const o = provider.opentelemetry;
    const config = otelConfig(o, serviceName, proxy, services);
    if (typeof config === "string") return config;
    return {
      http: http("envoy.tracers.opentelemetry", packAny(envoyTrace.OpenTelemetryConfigSchema, config)),
      maxTagLength: o.maxTagLength,
      customSampler: o.dynatraceSampler !== undefined,
    };
  }
  if (provider.skywalking) {
    const s = provider.skywalking;
    const t = clusterTarget(s.service, s.port, services);
    if (typeof t === "string") return t;
    const config = create(envoyTrace.SkyWalkingConfigSchema, { grpcService: envoyGrpc(t) });
    return {
      http: http("envoy.tracers.skywalking", packAny(envoyTrace.SkyWalkingConfigSchema, config)),
      spawnUpstreamSpan: true,
    };
  }
  return "not a supported tracing provider";
}

interface Tracer {
  http: envoyTrace.Tracing_Http;
  maxTagLength?: number;
  /** SkyWalking spans every upstream request, as routers do for every tracer. */
  spawnUpstreamSpan?: boolean;
  /** A sampler of the provider decides: every request is sampled into it. */
  customSampler?: boolean;
}

interface ClusterTarget {
  hostname: string;
  cluster: string;
}

/** Istio's LookupCluster: the service (`host` or `namespace/host`) and the outbound cluster of its port. */
function clusterTarget(
  service: string | undefined,
  port: number | undefined,
  services: readonly RegistryService[],
): ClusterTarget | string {
  const found = lookupService(service ?? "", services);
  return typeof found === "string"
    ? found
    : { hostname: found.hostname, cluster: `outbound|${port ?? 0}||${found.hostname}` };
}

function envoyGrpc(t: ClusterTarget, timeout?: string, initialMetadata?: readonly HttpHeader[]): core.GrpcService {
  return create(core.GrpcServiceSchema, {
    targetSpecifier: {
      case: "envoyGrpc",
      value: create(core.GrpcService_EnvoyGrpcSchema, { clusterName: t.cluster, authority: t.hostname }),
    },
    timeout: toDuration(timeout),
    initialMetadata: (initialMetadata ?? []).map((h) =>
      create(core.HeaderValueSchema, { key: h.name ?? "", value: headerValue(h) }),
    ),
  });
}

function httpService(uri: string, cluster: string, timeout: Duration | undefined, headers?: readonly HttpHeader[]) {
  return create(core.HttpServiceSchema, {
    httpUri: create(core.HttpUriSchema, { uri, httpUpstreamType: { case: "cluster", value: cluster }, timeout }),
    requestHeadersToAdd: (headers ?? []).map((h) =>
      create(core.HeaderValueOptionSchema, {
        appendAction: core.HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD,
        header: create(core.HeaderValueSchema, { key: h.name ?? "", value: headerValue(h) }),
      }),
    ),
  });
}

/** A header's value: given, or read from istiod's (here sluiced's) environment. */
function headerValue(header: HttpHeader): string {
  if (header.value !== undefined) return header.value;
  if (header.envName) return process.env[header.envName] ?? "";
  return "";
}

/** Go's url.JoinPath on a host name: `host/path`, cleaned, keeping a trailing slash. */
function joinPath(hostname: string, path: string | undefined): string {
  const joined = posix.join(`/${hostname}`, path ?? "").slice(1);
  return path?.endsWith("/") && !joined.endsWith("/") ? `${joined}/` : joined;
}

const ZIPKIN_DEFAULT_TIMEOUT = create(DurationSchema, { seconds: 5n });

/**
 * Zipkin: proxies from Istio 1.29 get the collector as an HTTP service (with the timeout and headers),
 * older ones the legacy collector fields; the trace context option from 1.28.
 */
function zipkinConfig(z: ZipkinTracingProvider, t: ClusterTarget, proxy: ProxyNode): Any {
  const config = create(envoyTrace.ZipkinConfigSchema, {
    collectorEndpointVersion: envoyTrace.ZipkinConfig_CollectorEndpointVersion.HTTP_JSON,
    traceId128bit: !(z.enable64bitTraceId ?? false),
    sharedSpanContext: false,
  });
  const endpoint = z.path || "/api/v2/spans";
  if (versionAtLeast(proxy, 1, 29)) {
    config.collectorService = httpService(
      `http://${t.hostname}${endpoint}`,
      t.cluster,
      toDuration(z.timeout) ?? ZIPKIN_DEFAULT_TIMEOUT,
      z.headers,
    );
  } else {
    config.collectorCluster = t.cluster;
    config.collectorEndpoint = endpoint;
    config.collectorHostname = t.hostname;
  }
  if (versionAtLeast(proxy, 1, 28) && z.traceContextOption === "USE_B3_WITH_W3C_PROPAGATION") {
    config.traceContextOption = envoyTrace.ZipkinConfig_TraceContextOption.USE_B3_WITH_W3C_PROPAGATION;
  }
  return packAny(envoyTrace.ZipkinConfigSchema, config);
}

/** The OTel resource detectors Istio names (xdsfilters.EnvironmentResourceDetector, DynatraceResourceDetector). */
const ENVIRONMENT_RESOURCE_DETECTOR = create(core.TypedExtensionConfigSchema, {
  name: "envoy.tracers.opentelemetry.resource_detectors.environment",
  typedConfig: packAny(
    otelResourceDetectors.EnvironmentResourceDetectorConfigSchema,
    create(otelResourceDetectors.EnvironmentResourceDetectorConfigSchema),
  ),
});
const DYNATRACE_RESOURCE_DETECTOR = create(core.TypedExtensionConfigSchema, {
  name: "envoy.tracers.opentelemetry.resource_detectors.dynatrace",
  typedConfig: packAny(
    otelResourceDetectors.DynatraceResourceDetectorConfigSchema,
    create(otelResourceDetectors.DynatraceResourceDetectorConfigSchema),
  ),
});

function otelConfig(
  o: OpenTelemetryTracingProvider,
  serviceCluster: string,
  proxy: ProxyNode,
  services: readonly RegistryService[],
): envoyTrace.OpenTelemetryConfig | string {
  const t = clusterTarget(o.service, o.port, services);
  if (typeof t === "string") return t;
  const semantic = o.serviceAttributeEnrichment === "OTEL_SEMANTIC_CONVENTIONS";
  const config = create(envoyTrace.OpenTelemetryConfigSchema, {
    serviceName: semantic ? otelServiceName(proxy) : serviceCluster,
  });
  if (o.http) {
    config.httpService = httpService(
      joinPath(t.hostname, o.http.path),
      t.cluster,
      toDuration(o.http.timeout),
      o.http.headers,
    );
  } else {
    config.grpcService = envoyGrpc(t, o.grpc?.timeout, o.grpc?.initialMetadata);
  }
  const detectors: core.TypedExtensionConfig[] = [];
  if (o.resourceDetectors?.environment) detectors.push(ENVIRONMENT_RESOURCE_DETECTOR);
  if (o.resourceDetectors?.dynatrace) detectors.push(DYNATRACE_RESOURCE_DETECTOR);
  // OTel's semantic conventions read OTEL_RESOURCE_ATTRIBUTES too: the environment detector is implied.
  if (semantic && !detectors.includes(ENVIRONMENT_RESOURCE_DETECTOR)) detectors.push(ENVIRONMENT_RESOURCE_DETECTOR);
  config.resourceDetectors = detectors;
  if (o.dynatraceSampler) {
    const sampler = dynatraceSampler(o, o.dynatraceSampler, t, services);
    if (typeof sampler === "string") return sampler;
    config.sampler = sampler;
  }
  return config;
}

/** Dynatrace's adaptive sampler: its own API service, or the OTLP HTTP exporter's host and headers. */
function dynatraceSampler(
  o: OpenTelemetryTracingProvider,
  d: NonNullable<OpenTelemetryTracingProvider["dynatraceSampler"]>,
  exporter: ClusterTarget,
  services: readonly RegistryService[],
): core.TypedExtensionConfig | string {
  let service: core.HttpService;
  if (!d.httpService) {
    if (!o.http) {
      return "dynatrace sampler could not get http settings. considering setting the http_service field on the dynatrace sampler";
    }
    service = httpService(
      joinPath(exporter.hostname, "api/v2/samplingConfiguration"),
      exporter.cluster,
      toDuration(o.http.timeout),
      o.http.headers,
    );
  } else {
    const api = d.httpService;
    const t = clusterTarget(api.service, api.port, services);
    if (typeof t === "string") return `could not find cluster for dynatrace sampler ${t}`;
    service = httpService(
      joinPath(t.hostname, api.http?.path),
      t.cluster,
      toDuration(api.http?.timeout),
      api.http?.headers,
    );
  }
  const config = create(otelSamplers.DynatraceSamplerConfigSchema, {
    tenant: d.tenant ?? "",
    clusterId: d.clusterId ?? 0,
    rootSpansPerMinute: d.rootSpansPerMinute ?? 0,
    httpService: service,
  });
  return create(core.TypedExtensionConfigSchema, {
    name: "envoy.tracers.opentelemetry.samplers.dynatrace",
    typedConfig: packAny(otelSamplers.DynatraceSamplerConfigSchema, config),
  });
}

/**
 * The service.name of OTel's semantic conventions for Kubernetes: the Pod's
 * resource.opentelemetry.io/service.name annotation, app.kubernetes.io/instance, app.kubernetes.io/name,
 * the owning workload, the Pod's name, its only container, else unknown_service.
 */
function otelServiceName(proxy: ProxyNode): string {
  const annotation = proxy.metadata.ANNOTATIONS?.["resource.opentelemetry.io/service.name"];
  if (annotation) return annotation;
  const instance = proxy.labels["app.kubernetes.io/instance"];
  if (instance) return instance;
  const name = proxy.labels["app.kubernetes.io/name"];
  if (name) return name;
  if (proxy.metadata.WORKLOAD_NAME) return proxy.metadata.WORKLOAD_NAME;
  const dot = proxy.id.indexOf(".");
  if (dot > 0) return proxy.id.slice(0, dot);
  const containers = proxy.metadata.APP_CONTAINERS;
  if (containers && !containers.includes(",")) return containers;
  return "unknown_service";
}

function customTags(tags: Record<string, TelemetryTracingCustomTagsValue>): envoyTracing.CustomTag[] {
  return Object.entries(tags).flatMap(([tag, value]): envoyTracing.CustomTag[] => {
    if (value.literal) return [literalTag(tag, value.literal.value)];
    if (value.environment) {
      const env = create(envoyTracing.CustomTag_EnvironmentSchema, {
        name: value.environment.name,
        defaultValue: value.environment.defaultValue ?? "",
      });
      return [create(envoyTracing.CustomTagSchema, { tag, type: { case: "environment", value: env } })];
    }
    if (value.header) {
      const header = create(envoyTracing.CustomTag_HeaderSchema, {
        name: value.header.name,
        defaultValue: value.header.defaultValue ?? "",
      });
      return [create(envoyTracing.CustomTagSchema, { tag, type: { case: "requestHeader", value: header } })];
    }
    return [];
  });
}

function literalTag(tag: string, value: string): envoyTracing.CustomTag {
  return create(envoyTracing.CustomTagSchema, {
    tag,
    type: { case: "literal", value: create(envoyTracing.CustomTag_LiteralSchema, { value }) },
  });
}

/** Who the proxy is, and the dry-run AuthorizationPolicy results, as Istio tags every span. */
function istioTags(proxy: ProxyNode): envoyTracing.CustomTag[] {
  return [
    literalTag("istio.canonical_revision", proxy.labels["service.istio.io/canonical-revision"] || "latest"),
    literalTag("istio.canonical_service", proxy.labels["service.istio.io/canonical-name"] || "unknown"),
    literalTag("istio.mesh_id", proxy.metadata.MESH_ID || "unknown"),
    literalTag("istio.namespace", proxy.metadata.NAMESPACE || "default"),
    literalTag("istio.cluster_id", proxy.metadata.CLUSTER_ID || "unknown"),
    ...DRY_RUN_TAGS,
  ];
}

/**
 * A waypoint tags its spans with who sent and who receives each request: each field of the peers'
 * metadata the peer metadata filters keep (`downstream_peer_obj`, `upstream_peer_obj`).
 */
function waypointPeerTags(proxy: ProxyNode): envoyTracing.CustomTag[] {
  if (proxy.type !== "waypoint") return [];
  return WAYPOINT_PEER_TAGS;
}

const PEER_FIELDS: readonly [tag: string, field: string][] = [
  ["workload", "workload"],
  ["namespace", "namespace"],
  ["cluster_id", "cluster"],
  ["canonical_service", "service"],
  ["canonical_revision", "revision"],
  ["app", "app"],
  ["app_version", "version"],
  ["workload_type", "type"],
  ["instance_name", "name"],
];

const WAYPOINT_PEER_TAGS: envoyTracing.CustomTag[] = [
  ...PEER_FIELDS.map(([tag, field]) => formatTag(`istio.destination_${tag}`, `upstream_peer_obj:FIELD:${field}`)),
  ...PEER_FIELDS.map(([tag, field]) => formatTag(`istio.source_${tag}`, `downstream_peer_obj:FIELD:${field}`)),
];

function formatTag(tag: string, filterState: string): envoyTracing.CustomTag {
  return create(envoyTracing.CustomTagSchema, {
    tag,
    type: { case: "value", value: `%FILTER_STATE(${filterState})%` },
  });
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
