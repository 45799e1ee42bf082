// Access logs from MeshConfig accessLogFile/accessLogFormat/accessLogEncoding (Istio's legacy mesh
// settings, used when no Telemetry applies): a file access log on every HTTP connection manager and
// tcp_proxy, and on listeners for connections no filter chain matched (response flag NR), where the
// Telemetry API's logs take its place when some apply.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { accesslog, core, fileAccessLog, packAny, reqWithoutQuery } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { ListenerClass } from "../httpfilter/listener-class.ts";
import type { ListenerEnv } from "./types.ts";

export const FILE_ACCESS_LOG = "envoy.access_loggers.file";

/** Istio's default text format (EnvoyTextLogFormat). */
export const DEFAULT_TEXT_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% ' +
  '%RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% "%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% ' +
  '%BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" ' +
  '"%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER_RAW% %UPSTREAM_LOCAL_ADDRESS% ' +
  "%DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS% %REQUESTED_SERVER_NAME% %ROUTE_NAME%\n";

/** Istio's default JSON format (EnvoyJSONLogFormatIstio), keys in the order Go's Struct marshals them. */
export const DEFAULT_JSON_FORMAT: Readonly<JsonObject> = Object.freeze({
  authority: "%REQ(:AUTHORITY)%",
  bytes_received: "%BYTES_RECEIVED%",
  bytes_sent: "%BYTES_SENT%",
  connection_termination_details: "%CONNECTION_TERMINATION_DETAILS%",
  downstream_local_address: "%DOWNSTREAM_LOCAL_ADDRESS%",
  downstream_remote_address: "%DOWNSTREAM_REMOTE_ADDRESS%",
  duration: "%DURATION%",
  method: "%REQ(:METHOD)%",
  path: "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
  protocol: "%PROTOCOL%",
  request_id: "%REQ(X-REQUEST-ID)%",
  requested_server_name: "%REQUESTED_SERVER_NAME%",
  response_code: "%RESPONSE_CODE%",
  response_code_details: "%RESPONSE_CODE_DETAILS%",
  response_flags: "%RESPONSE_FLAGS%",
  route_name: "%ROUTE_NAME%",
  start_time: "%START_TIME%",
  upstream_cluster: "%UPSTREAM_CLUSTER_RAW%",
  upstream_host: "%UPSTREAM_HOST%",
  upstream_local_address: "%UPSTREAM_LOCAL_ADDRESS%",
  upstream_service_time: "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%",
  upstream_transport_failure_reason: "%UPSTREAM_TRANSPORT_FAILURE_REASON%",
  user_agent: "%REQ(USER-AGENT)%",
  x_forwarded_for: "%REQ(X-FORWARDED-FOR)%",
});

/** The access logs of an HTTP connection manager or tcp_proxy: none unless accessLogFile is set. */
export function buildAccessLogs(mesh: MeshConfig): accesslog.AccessLog[] {
  if (!mesh.accessLogFile) return [];
  return [fileAccessLogFor(mesh)];
}

const NO_ROUTE_FILTER = responseFlagFilter("NR");

/** Connections whose upstream could not be reached (response flag UF): what HBONE origination logs. */
export const UPSTREAM_FAILURE_FILTER = responseFlagFilter("UF");

/** Requests answered 400 or more: what HBONE termination logs (Istio's runtime key is a placeholder). */
export const ERROR_STATUS_FILTER = create(accesslog.AccessLogFilterSchema, {
  filterSpecifier: {
    case: "statusCodeFilter",
    value: {
      comparison: {
        op: accesslog.ComparisonFilter_Op.GE,
        value: { defaultValue: 400, runtimeKey: "istio.io/unset" },
      },
    },
  },
});

function responseFlagFilter(flag: string): accesslog.AccessLogFilter {
  return create(accesslog.AccessLogFilterSchema, {
    filterSpecifier: {
      case: "responseFlagFilter",
      value: create(accesslog.ResponseFlagFilterSchema, { flags: [flag] }),
    },
  });
}

/**
 * The listener's own access log, for connections that matched no filter chain (response flag NR): the
 * Telemetry API's logs when some apply (their own filter and'ed with NR), else the mesh's accessLogFile.
 */
export function buildListenerAccessLogs(env: ListenerEnv, listenerClass: ListenerClass): accesslog.AccessLog[] {
  if (env.mesh.disableEnvoyListenerLog) return [];
  return buildFilteredAccessLogs(env, listenerClass, NO_ROUTE_FILTER);
}

/**
 * Access logs of what `filter` keeps: the Telemetry API's logs when some apply (their own filter and'ed
 * after it), else the mesh's accessLogFile.
 */
export function buildFilteredAccessLogs(
  env: ListenerEnv,
  listenerClass: ListenerClass,
  filter: accesslog.AccessLogFilter,
): accesslog.AccessLog[] {
  const fromTelemetry = env.telemetry?.accessLogs(listenerClass);
  if (fromTelemetry)
    return fromTelemetry.map((log) => create(accesslog.AccessLogSchema, { ...log, filter: both(filter, log.filter) }));
  if (!env.mesh.accessLogFile) return [];
  return [create(accesslog.AccessLogSchema, { ...fileAccessLogFor(env.mesh), filter })];
}

function both(
  filter: accesslog.AccessLogFilter,
  telemetryFilter: accesslog.AccessLogFilter | undefined,
): accesslog.AccessLogFilter {
  if (!telemetryFilter) return filter;
  return create(accesslog.AccessLogFilterSchema, {
    filterSpecifier: {
      case: "andFilter",
      value: create(accesslog.AndFilterSchema, { filters: [filter, telemetryFilter] }),
    },
  });
}

function fileAccessLogFor(mesh: MeshConfig): accesslog.AccessLog {
  const config = create(fileAccessLog.FileAccessLogSchema, {
    path: mesh.accessLogFile ?? "",
    accessLogFormat: { case: "logFormat", value: logFormat(mesh) },
  });
  return create(accesslog.AccessLogSchema, {
    name: FILE_ACCESS_LOG,
    configType: { case: "typedConfig", value: packAny(fileAccessLog.FileAccessLogSchema, config) },
  });
}

function logFormat(mesh: MeshConfig): core.SubstitutionFormatString {
  if (mesh.accessLogEncoding === "JSON") {
    const json = jsonFormat(mesh.accessLogFormat);
    return create(core.SubstitutionFormatStringSchema, {
      format: { case: "jsonFormat", value: json },
      jsonFormatOptions: create(core.JsonFormatOptionsSchema, { sortProperties: false }),
      formatters: accessLogFormatters(Object.values(json)),
    });
  }
  const text = textFormat(mesh.accessLogFormat);
  return create(core.SubstitutionFormatStringSchema, {
    format: {
      case: "textFormatSource",
      value: create(core.DataSourceSchema, { specifier: { case: "inlineString", value: text } }),
    },
    formatters: accessLogFormatters([text]),
  });
}

const REQ_WITHOUT_QUERY_FORMATTER = create(core.TypedExtensionConfigSchema, {
  name: "envoy.formatter.req_without_query",
  typedConfig: packAny(reqWithoutQuery.ReqWithoutQuerySchema, create(reqWithoutQuery.ReqWithoutQuerySchema)),
});

/**
 * The formatter extensions a format needs (Istio's accessLogFormatters): REQ_WITHOUT_QUERY is not
 * built into Envoy; METADATA and CEL are now. `values` are the text format or the JSON format's values.
 */
export function accessLogFormatters(values: readonly unknown[]): core.TypedExtensionConfig[] {
  const needsReqWithoutQuery = values.some((v) => typeof v === "string" && v.includes("%REQ_WITHOUT_QUERY"));
  return needsReqWithoutQuery ? [REQ_WITHOUT_QUERY_FORMATTER] : [];
}

/** Istio appends the newline a user format lacks. */
export function textFormat(format: string | undefined): string {
  if (!format) return DEFAULT_TEXT_FORMAT;
  return format.endsWith("\n") ? format : `${format}\n`;
}

/** A user JSON format that does not parse as an object falls back to the default, as in Istio. */
function jsonFormat(format: string | undefined): JsonObject {
  if (format) {
    try {
      const parsed: unknown = JSON.parse(format);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length > 0) {
        return parsed as JsonObject;
      }
    } catch {
      // Istio logs the error and keeps the default.
    }
  }
  return { ...DEFAULT_JSON_FORMAT };
}
