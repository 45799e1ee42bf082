// Config types Sluice sends as TypedStruct because their protos are not among its generated bindings:
// Istio's own istio-proxy filters and Envoy extensions outside the shipped protos. The constraint
// checker cannot know them; tests accept exactly these (see pgv.ts).
export const PEER_METADATA_TYPE_URL = "type.googleapis.com/io.istio.http.peer_metadata.Config";
export const TCP_METADATA_EXCHANGE_TYPE_URL = "type.googleapis.com/envoy.tcp.metadataexchange.config.MetadataExchange";
// Envoy's contrib MySQL proxy network filter (networking/listener/protocol-filters.ts).
export const MYSQL_PROXY_TYPE_URL = "type.googleapis.com/envoy.extensions.filters.network.mysql_proxy.v3.MySQLProxy";
// Telemetry API providers (networking/telemetry): the OpenTelemetry access logger, the CEL access log
// filter and the tracers.
export const OTEL_ACCESS_LOG_TYPE_URL =
  "type.googleapis.com/envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig";
export const CEL_FILTER_TYPE_URL =
  "type.googleapis.com/envoy.extensions.access_loggers.filters.cel.v3.ExpressionFilter";
export const TRACER_TYPE_URLS = {
  zipkin: "type.googleapis.com/envoy.config.trace.v3.ZipkinConfig",
  datadog: "type.googleapis.com/envoy.config.trace.v3.DatadogConfig",
  opentelemetry: "type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig",
  skywalking: "type.googleapis.com/envoy.config.trace.v3.SkyWalkingConfig",
} as const;

export const TYPED_STRUCT_ONLY_TYPE_URLS: ReadonlySet<string> = new Set([
  PEER_METADATA_TYPE_URL,
  TCP_METADATA_EXCHANGE_TYPE_URL,
  MYSQL_PROXY_TYPE_URL,
  OTEL_ACCESS_LOG_TYPE_URL,
  CEL_FILTER_TYPE_URL,
  ...Object.values(TRACER_TYPE_URLS),
]);
