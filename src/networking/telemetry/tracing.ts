// Tracing (Istio's telemetry.go Tracing and core/tracing.go): the Telemetry tracing entries merged per
// workload mode over MeshConfig defaultProviders.tracing, and the HTTP connection manager's tracing
// config: provider, sampling, Istio's tags and the custom tags. Without Telemetry tracing or a default
// provider the mesh's legacy enableTracing settings apply.
import { create, type JsonObject, toJson } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { envoyMetadata, envoyTrace, envoyTracing, envoyType, hcm, packAny, xdsType } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { Telemetry, TelemetryTracingCustomTagsValue } from "../../config/types/index.ts";
import type { ProxyNode } from "../../model/proxy.ts";
import { lookupService, type RegistryService } from "../authz/index.ts";
import { toDuration } from "../duration.ts";
// Tracer configs are not among the generated protos: sent as TypedStruct.
import { TRACER_TYPE_URLS } from "../httpfilter/extension-types.ts";
import { typedStruct } from "../httpfilter/typed.ts";
import { modeMatches, type WorkloadMode } from "./select.ts";

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

/** What the HCM gets from tracing: its tracing config (none: no tracing) and the request id sampling flag. */
export interface HcmTracing {
  tracing?: hcm.HttpConnectionManager_Tracing;
  useRequestIdForTraceSampling: boolean;
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
      tracing: tracingConfig(meshSampling(), enableIstioTags ? istioTags(proxy) : []),
      useRequestIdForTraceSampling: true,
    };
  }
  // Without tracing the request id extension keeps its default, as in Istio.
  if (spec.disabled || !spec.provider) return { useRequestIdForTraceSampling: true };
  const provider = tracerOf(spec.provider, mesh, proxy, services);
  if (typeof provider === "string") {
    report?.(`tracing provider ${spec.provider.name}: ${provider}`);
    return { useRequestIdForTraceSampling: true };
  }
  const tags = [...(spec.enableIstioTags ? istioTags(proxy) : []), ...customTags(spec.customTags ?? {})];
  const tracing = tracingConfig(spec.randomSamplingPercentage ?? meshSampling(), tags);
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

/** The Envoy tracer of a provider, or why it cannot be built. */
function tracerOf(
  provider: ExtensionProvider,
  mesh: MeshConfig,
  proxy: ProxyNode,
  services: readonly RegistryService[],
): { http: envoyTrace.Tracing_Http; maxTagLength?: number } | string {
  const target = (service: string | undefined, port: number | undefined) => {
    const found = lookupService(service ?? "", services);
    return typeof found === "string"
      ? found
      : { hostname: found.hostname, cluster: `outbound|${port ?? 0}||${found.hostname}` };
  };
  const http = (name: string, typeUrl: string, value: JsonObject) =>
    create(envoyTrace.Tracing_HttpSchema, {
      name,
      configType: { case: "typedConfig", value: packAny(xdsType.TypedStructSchema, typedStruct(typeUrl, value)) },
    });
  if (provider.zipkin) {
    const z = provider.zipkin;
    const t = target(z.service, z.port);
    if (typeof t === "string") return t;
    return {
      http: http("envoy.tracers.zipkin", TRACER_TYPE_URLS.zipkin, {
        collector_cluster: t.cluster,
        collector_endpoint: z.path || "/api/v2/spans",
        collector_endpoint_version: "HTTP_JSON",
        trace_id_128bit: !(z.enable64bitTraceId ?? false),
        shared_span_context: false,
        collector_hostname: t.hostname,
      }),
      maxTagLength: z.maxTagLength,
    };
  }
  if (provider.datadog) {
    const d = provider.datadog;
    const t = target(d.service, d.port);
    if (typeof t === "string") return t;
    return {
      http: http("envoy.tracers.datadog", TRACER_TYPE_URLS.datadog, {
        collector_cluster: t.cluster,
        service_name: tracingServiceName(mesh, proxy),
        collector_hostname: t.hostname,
      }),
      maxTagLength: d.maxTagLength,
    };
  }
  if (provider.opentelemetry) {
    const o = provider.opentelemetry;
    const t = target(o.service, o.port);
    if (typeof t === "string") return t;
    const value: JsonObject = { service_name: tracingServiceName(mesh, proxy) };
    if (o.http) {
      const timeout = toDuration(o.http.timeout);
      value.http_service = {
        http_uri: {
          uri: `${t.hostname}${o.http.path ?? ""}`,
          cluster: t.cluster,
          timeout: timeout ? toJson(DurationSchema, timeout) : "0s",
        },
      };
    } else {
      value.grpc_service = { envoy_grpc: { cluster_name: t.cluster, authority: t.hostname } };
    }
    return {
      http: http("envoy.tracers.opentelemetry", TRACER_TYPE_URLS.opentelemetry, value),
      maxTagLength: o.maxTagLength,
    };
  }
  if (provider.skywalking) {
    const s = provider.skywalking;
    const t = target(s.service, s.port);
    if (typeof t === "string") return t;
    const clientConfig: JsonObject = { service_name: tracingServiceName(mesh, proxy), instance_name: proxy.id };
    if (s.accessToken) clientConfig.backend_token = s.accessToken;
    return {
      http: http("envoy.tracers.skywalking", TRACER_TYPE_URLS.skywalking, {
        grpc_service: { envoy_grpc: { cluster_name: t.cluster, authority: t.hostname } },
        client_config: clientConfig,
      }),
    };
  }
  return "not a supported tracing provider";
}

/** ProxyConfig tracingServiceName: how the proxy names itself to the tracer. */
function tracingServiceName(mesh: MeshConfig, proxy: ProxyNode): string {
  const canonical = proxy.labels["service.istio.io/canonical-name"];
  const namespace = proxy.metadata.NAMESPACE || proxy.configNamespace;
  switch (mesh.defaultConfig?.tracingServiceName) {
    case "CANONICAL_NAME_ONLY":
      return canonical || "istio-proxy";
    case "CANONICAL_NAME_AND_NAMESPACE":
      return `${canonical || "istio-proxy"}.${namespace}`;
    default:
      return `${proxy.labels.app || canonical || "istio-proxy"}.${namespace}`;
  }
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
