// Access logging from the Telemetry API (Istio's telemetry.go mergeLogs and telemetry_logging.go):
// which providers log for a listener class, and the Envoy access log each provider stands for.
import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  accesslog,
  celAccessLogFilter,
  core,
  fileAccessLog,
  grpcAccessLog,
  otelAccessLog,
  otelCommon,
  packAny,
} from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { Telemetry, TelemetryAccessLoggingFilter } from "../../config/types/index.ts";
import { lookupService, type RegistryService } from "../authz/index.ts";
import {
  accessLogFormatters,
  DEFAULT_JSON_FORMAT,
  DEFAULT_TEXT_FORMAT,
  FILE_ACCESS_LOG,
  textFormat,
} from "../listener/accesslog.ts";
import { modeMatches, type WorkloadMode } from "./select.ts";

type ExtensionProvider = NonNullable<MeshConfig["extensionProviders"]>[number];

const HTTP_GRPC_ACCESS_LOG = "envoy.access_loggers.http_grpc";
const TCP_GRPC_ACCESS_LOG = "envoy.access_loggers.tcp_grpc";
const OTEL_ACCESS_LOG = "envoy.access_loggers.open_telemetry";
const CEL_FILTER = "envoy.access_loggers.extension_filters.cel";

/**
 * The providers logging for `mode`, each with its filter; undefined when neither a Telemetry nor
 * MeshConfig defaultProviders configure access logging (the mesh's accessLogFile applies then). The
 * last level naming providers decides which are in scope; `disabled` removes a provider.
 */
export function mergeAccessLogging(
  chain: readonly Telemetry[],
  mesh: MeshConfig,
  mode: WorkloadMode,
): Map<string, TelemetryAccessLoggingFilter | undefined> | undefined {
  const defaults = mesh.defaultProviders?.accessLogging ?? [];
  const levels = chain.map((t) => t.spec?.accessLogging ?? []).filter((logging) => logging.length > 0);
  if (levels.length === 0 && defaults.length === 0) return undefined;
  const providers = new Map<string, TelemetryAccessLoggingFilter | undefined>();
  if (levels.length === 0) {
    for (const name of defaults) providers.set(name, undefined);
    return providers;
  }
  let inScope = defaults;
  const filters = new Map<string, TelemetryAccessLoggingFilter | undefined>();
  for (const level of levels) {
    const names = new Set<string>();
    for (const logging of level) {
      // Only the entries for this mode name providers and their filters.
      if (!modeMatches(logging.match?.mode, mode)) continue;
      for (const p of logging.providers ?? []) {
        names.add(p.name);
        filters.set(p.name, logging.filter);
      }
    }
    if (names.size > 0) inScope = [...names];
  }
  let parent = defaults;
  for (const level of levels) {
    for (const logging of level) {
      const named = (logging.providers ?? []).map((p) => p.name);
      const names = named.length > 0 ? named : parent;
      parent = names;
      for (const name of names) {
        if (!inScope.includes(name) || !modeMatches(logging.match?.mode, mode)) continue;
        if (logging.disabled) providers.delete(name);
        else providers.set(name, filters.get(name));
      }
    }
  }
  return providers;
}

/** The access logs of the merged providers, by provider name; providers that cannot log are left out. */
export function telemetryAccessLogs(
  providers: ReadonlyMap<string, TelemetryAccessLoggingFilter | undefined>,
  mesh: MeshConfig,
  services: readonly RegistryService[],
  report?: (problem: string) => void,
): accesslog.AccessLog[] {
  const logs: accesslog.AccessLog[] = [];
  for (const name of [...providers.keys()].sort()) {
    // Provider names match case-insensitively, as Istio's fetchProvider.
    const provider = (mesh.extensionProviders ?? []).find((p) => (p.name ?? "").toLowerCase() === name.toLowerCase());
    if (!provider) {
      report?.(`access logging provider ${name} is not among the mesh extensionProviders`);
      continue;
    }
    const log = providerAccessLog(provider, services, report);
    if (!log) continue;
    const filter = providers.get(name);
    if (filter?.expression) log.filter = celFilter(filter.expression);
    logs.push(log);
  }
  return logs;
}

function providerAccessLog(
  provider: ExtensionProvider,
  services: readonly RegistryService[],
  report?: (problem: string) => void,
): accesslog.AccessLog | undefined {
  if (provider.envoyFileAccessLog) return fileLog(provider.envoyFileAccessLog);
  const grpc = provider.envoyHttpAls ?? provider.envoyTcpAls ?? provider.envoyOtelAls;
  if (!grpc) return undefined; // not an access log provider (metrics, tracing, ext_authz)
  const found = lookupService(grpc.service ?? "", services);
  if (typeof found === "string") {
    report?.(`access logging provider ${provider.name}: ${found}`);
    return undefined;
  }
  const target = { cluster: `outbound|${grpc.port ?? 0}||${found.hostname}`, authority: found.hostname };
  if (provider.envoyHttpAls) {
    const als = provider.envoyHttpAls;
    const config = create(grpcAccessLog.HttpGrpcAccessLogConfigSchema, {
      commonConfig: commonGrpcConfig(als.logName || "http_envoy_accesslog", target, als.filterStateObjectsToLog),
      additionalRequestHeadersToLog: als.additionalRequestHeadersToLog ?? [],
      additionalResponseHeadersToLog: als.additionalResponseHeadersToLog ?? [],
      additionalResponseTrailersToLog: als.additionalResponseTrailersToLog ?? [],
    });
    return typedLog(HTTP_GRPC_ACCESS_LOG, packAny(grpcAccessLog.HttpGrpcAccessLogConfigSchema, config));
  }
  if (provider.envoyTcpAls) {
    const als = provider.envoyTcpAls;
    const config = create(grpcAccessLog.TcpGrpcAccessLogConfigSchema, {
      commonConfig: commonGrpcConfig(als.logName || "tcp_envoy_accesslog", target, als.filterStateObjectsToLog),
    });
    return typedLog(TCP_GRPC_ACCESS_LOG, packAny(grpcAccessLog.TcpGrpcAccessLogConfigSchema, config));
  }
  return otelLog(provider.envoyOtelAls ?? {}, target);
}

/** Filter state the peer metadata filters leave (Istio 1.24 on). */
const PEER_FILTER_STATE_OBJECTS = ["upstream_peer", "downstream_peer"];

/** The same with the keys of the older Wasm filters: what Istio's OTel log sends. */
const OTEL_FILTER_STATE_OBJECTS = [
  ...PEER_FILTER_STATE_OBJECTS,
  "wasm.upstream_peer",
  "wasm.upstream_peer_id",
  "wasm.downstream_peer",
  "wasm.downstream_peer_id",
];

/** Istio's buildOpenTelemetryAccessLogConfig: the text format as the body, the labels as attributes. */
function otelLog(
  otel: NonNullable<ExtensionProvider["envoyOtelAls"]>,
  target: { cluster: string; authority: string },
): accesslog.AccessLog {
  // The user's text as given (no newline added, unlike file logs).
  const format = otel.logFormat?.text || DEFAULT_TEXT_FORMAT;
  const labels = otel.logFormat?.labels ?? {};
  const config = create(otelAccessLog.OpenTelemetryAccessLogConfigSchema, {
    commonConfig: commonGrpcConfig(otel.logName || "otel_envoy_accesslog", target, OTEL_FILTER_STATE_OBJECTS),
    disableBuiltinLabels: true,
    body: create(otelCommon.AnyValueSchema, { value: { case: "stringValue", value: format } }),
    formatters: accessLogFormatters([format, ...Object.values(labels)]),
  });
  const keys = Object.keys(labels).sort();
  if (keys.length > 0) {
    config.attributes = create(otelCommon.KeyValueListSchema, {
      // Only string labels carry a value, as Istio reads them (structpb GetStringValue).
      values: keys.map((key) => {
        const label = labels[key];
        return create(otelCommon.KeyValueSchema, {
          key,
          value: create(otelCommon.AnyValueSchema, {
            value: { case: "stringValue", value: typeof label === "string" ? label : "" },
          }),
        });
      }),
    });
  }
  return typedLog(OTEL_ACCESS_LOG, packAny(otelAccessLog.OpenTelemetryAccessLogConfigSchema, config));
}

function fileLog(provider: NonNullable<ExtensionProvider["envoyFileAccessLog"]>): accesslog.AccessLog {
  const labels = provider.logFormat?.labels;
  const omitEmptyValues = provider.omitEmptyValues ?? false;
  let format: core.SubstitutionFormatString;
  if (labels !== undefined) {
    const json = Object.keys(labels).length > 0 ? (labels as JsonObject) : { ...DEFAULT_JSON_FORMAT };
    format = create(core.SubstitutionFormatStringSchema, {
      format: { case: "jsonFormat", value: json },
      jsonFormatOptions: create(core.JsonFormatOptionsSchema, { sortProperties: false }),
      omitEmptyValues,
      formatters: accessLogFormatters(Object.values(json)),
    });
  } else {
    const text = textFormat(provider.logFormat?.text) || DEFAULT_TEXT_FORMAT;
    format = create(core.SubstitutionFormatStringSchema, {
      format: {
        case: "textFormatSource",
        value: create(core.DataSourceSchema, { specifier: { case: "inlineString", value: text } }),
      },
      omitEmptyValues,
      formatters: accessLogFormatters([text]),
    });
  }
  const config = create(fileAccessLog.FileAccessLogSchema, {
    path: provider.path || "/dev/stdout",
    accessLogFormat: { case: "logFormat", value: format },
  });
  return typedLog(FILE_ACCESS_LOG, packAny(fileAccessLog.FileAccessLogSchema, config));
}

function commonGrpcConfig(
  logName: string,
  target: { cluster: string; authority: string },
  filterStateObjectsToLog: readonly string[] | undefined,
): grpcAccessLog.CommonGrpcAccessLogConfig {
  // Without a list, the peer metadata the metadata exchange filters leave (Istio's envoyStateToLog).
  const objects = filterStateObjectsToLog?.length ? filterStateObjectsToLog : PEER_FILTER_STATE_OBJECTS;
  return create(grpcAccessLog.CommonGrpcAccessLogConfigSchema, {
    logName,
    grpcService: create(core.GrpcServiceSchema, {
      targetSpecifier: {
        case: "envoyGrpc",
        value: create(core.GrpcService_EnvoyGrpcSchema, { clusterName: target.cluster, authority: target.authority }),
      },
    }),
    transportApiVersion: core.ApiVersion.V3,
    filterStateObjectsToLog: [...objects],
  });
}

/** Telemetry's `filter.expression`: Envoy's CEL access log filter. */
function celFilter(expression: string): accesslog.AccessLogFilter {
  return create(accesslog.AccessLogFilterSchema, {
    filterSpecifier: {
      case: "extensionFilter",
      value: create(accesslog.ExtensionFilterSchema, {
        name: CEL_FILTER,
        configType: {
          case: "typedConfig",
          value: packAny(
            celAccessLogFilter.ExpressionFilterSchema,
            create(celAccessLogFilter.ExpressionFilterSchema, { expression }),
          ),
        },
      }),
    },
  });
}

function typedLog(name: string, typedConfig: ReturnType<typeof packAny>): accesslog.AccessLog {
  return create(accesslog.AccessLogSchema, { name, configType: { case: "typedConfig", value: typedConfig } });
}
