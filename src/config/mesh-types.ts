// The shapes of Istio's mesh configuration (istio.mesh.v1alpha1: MeshConfig, ProxyConfig and the
// messages they use), under their JSON names, and a field table the decoder in mesh.ts checks YAML
// against. Derived from the field lists of Istio's mesh protos; keep both halves in step with them.
// Networking types (LocalityLoadBalancerSetting, ...) stay plain objects here: their own validators
// (validation/common/trafficpolicy.ts) check them.

/** A google.protobuf.Duration as written in YAML/JSON ("10s", "1.5s", "100ms"). */
export type Duration = string;
export type ClientTLSSettings = Record<string, unknown>;
export type ConnectionPoolSettings = Record<string, unknown>;
export type TcpKeepalive = Record<string, unknown>;
export type HTTPRetry = Record<string, unknown>;
export type LocalityLoadBalancerSetting = Record<string, unknown>;
export type OutlierDetection = Record<string, unknown>;
export type ReadinessProbe = Record<string, unknown>;
export type ZoneAwareLoadBalancerSetting = Record<string, unknown>;
export type ProxyImage = Record<string, unknown>;

export interface MeshConfig {
  proxyListenPort?: number;
  proxyInboundListenPort?: number;
  proxyHttpPort?: number;
  connectTimeout?: Duration;
  hboneIdleTimeout?: Duration;
  protocolDetectionTimeout?: Duration;
  tcpKeepalive?: TcpKeepalive;
  ingressClass?: string;
  ingressService?: string;
  ingressControllerMode?: IngressControllerMode;
  ingressSelector?: string;
  enableTracing?: boolean;
  accessLogFile?: string;
  accessLogFormat?: string;
  accessLogEncoding?: AccessLogEncoding;
  enableEnvoyAccessLogService?: boolean;
  disableEnvoyListenerLog?: boolean;
  defaultConfig?: ProxyConfig;
  outboundTrafficPolicy?: OutboundTrafficPolicy;
  inboundTrafficPolicy?: InboundTrafficPolicy;
  configSources?: ConfigSource[];
  enableAutoMtls?: boolean;
  trustDomain?: string;
  trustDomainAliases?: string[];
  caCertificates?: CertificateData[];
  defaultServiceExportTo?: string[];
  defaultVirtualServiceExportTo?: string[];
  defaultDestinationRuleExportTo?: string[];
  rootNamespace?: string;
  localityLbSetting?: LocalityLoadBalancerSetting;
  zoneAwareLbSetting?: ZoneAwareLoadBalancerSetting;
  dnsRefreshRate?: Duration;
  h2UpgradePolicy?: H2UpgradePolicy;
  inboundClusterStatName?: string;
  outboundClusterStatName?: string;
  certificates?: Certificate[];
  serviceSettings?: ServiceSettings[];
  serviceScopeConfigs?: ServiceScopeConfigs[];
  enablePrometheusMerge?: boolean;
  verifyCertificateAtClient?: boolean;
  ca?: CA;
  extensionProviders?: ExtensionProvider[];
  defaultProviders?: DefaultProviders;
  discoverySelectors?: LabelSelector[];
  pathNormalization?: ProxyPathNormalization;
  defaultHttpRetryPolicy?: HTTPRetry;
  meshMTLS?: TLSConfig;
  tlsDefaults?: TLSConfig;
  defaultTrafficPolicy?: DefaultTrafficPolicy;
  serviceEntryVisibility?: ServiceEntryVisibility;
  defaultInboundHttpRetryPolicy?: HTTPRetry;
}
export interface OutboundTrafficPolicy {
  mode?: OutboundTrafficPolicyMode;
  tls?: ClientTLSSettings;
}
export interface InboundTrafficPolicy {
  mode?: InboundTrafficPolicyMode;
}
export interface CertificateData {
  pem?: string;
  spiffeBundleUrl?: string;
  certSigners?: string[];
  trustDomains?: string[];
}
export interface ServiceSettings {
  settings?: Settings;
  hosts?: string[];
}
export interface Settings {
  clusterLocal?: boolean;
}
export interface ServiceScopeConfigs {
  namespaceSelector?: LabelSelector;
  servicesSelector?: LabelSelector;
  scope?: Scope;
}
export interface CA {
  address?: string;
  tlsSettings?: ClientTLSSettings;
  requestTimeout?: Duration;
  istiodSide?: boolean;
}
export interface ExtensionProvider {
  name?: string;
  envoyExtAuthzHttp?: EnvoyExternalAuthorizationHttpProvider;
  envoyExtAuthzGrpc?: EnvoyExternalAuthorizationGrpcProvider;
  zipkin?: ZipkinTracingProvider;
  lightstep?: LightstepTracingProvider;
  datadog?: DatadogTracingProvider;
  stackdriver?: StackdriverProvider;
  opencensus?: OpenCensusAgentTracingProvider;
  skywalking?: SkyWalkingTracingProvider;
  opentelemetry?: OpenTelemetryTracingProvider;
  prometheus?: PrometheusMetricsProvider;
  envoyFileAccessLog?: EnvoyFileAccessLogProvider;
  envoyHttpAls?: EnvoyHttpGrpcV3LogProvider;
  envoyTcpAls?: EnvoyTcpGrpcV3LogProvider;
  envoyOtelAls?: EnvoyOpenTelemetryLogProvider;
  sds?: SDSProvider;
}
export interface EnvoyExternalAuthorizationRequestBody {
  maxRequestBytes?: number;
  allowPartialMessage?: boolean;
  packAsBytes?: boolean;
}
export interface EnvoyExternalAuthorizationHttpProvider {
  service?: string;
  port?: number;
  timeout?: Duration;
  pathPrefix?: string;
  failOpen?: boolean;
  clearRouteCache?: boolean;
  statusOnError?: string;
  includeHeadersInCheck?: string[];
  includeRequestHeadersInCheck?: string[];
  includeAdditionalHeadersInCheck?: Record<string, string>;
  includeRequestBodyInCheck?: EnvoyExternalAuthorizationRequestBody;
  headersToUpstreamOnAllow?: string[];
  headersToDownstreamOnDeny?: string[];
  headersToDownstreamOnAllow?: string[];
}
export interface EnvoyExternalAuthorizationGrpcProvider {
  service?: string;
  port?: number;
  timeout?: Duration;
  failOpen?: boolean;
  clearRouteCache?: boolean;
  statusOnError?: string;
  includeRequestBodyInCheck?: EnvoyExternalAuthorizationRequestBody;
}
export interface ZipkinTracingProvider {
  service?: string;
  port?: number;
  maxTagLength?: number;
  enable64bitTraceId?: boolean;
  path?: string;
  traceContextOption?: TraceContextOption;
  timeout?: Duration;
  headers?: HttpHeader[];
}
export interface LightstepTracingProvider {
  service?: string;
  port?: number;
  accessToken?: string;
  maxTagLength?: number;
}
export interface DatadogTracingProvider {
  service?: string;
  port?: number;
  maxTagLength?: number;
}
export interface SkyWalkingTracingProvider {
  service?: string;
  port?: number;
  accessToken?: string;
}
export interface StackdriverProvider {
  debug?: boolean;
  maxNumberOfAttributes?: number;
  maxNumberOfAnnotations?: number;
  maxNumberOfMessageEvents?: number;
  maxTagLength?: number;
  logging?: Logging;
}
export interface Logging {
  labels?: Record<string, string>;
}
export interface OpenCensusAgentTracingProvider {
  service?: string;
  port?: number;
  context?: OpenCensusAgentTracingProviderTraceContext[];
  maxTagLength?: number;
}
/** A message without fields: present or absent. */
export type PrometheusMetricsProvider = Record<string, never>;
export interface EnvoyFileAccessLogProvider {
  path?: string;
  logFormat?: EnvoyFileAccessLogProviderLogFormat;
  omitEmptyValues?: boolean;
}
export interface EnvoyFileAccessLogProviderLogFormat {
  text?: string;
  labels?: Record<string, unknown>;
}
export interface EnvoyHttpGrpcV3LogProvider {
  service?: string;
  port?: number;
  logName?: string;
  filterStateObjectsToLog?: string[];
  additionalRequestHeadersToLog?: string[];
  additionalResponseHeadersToLog?: string[];
  additionalResponseTrailersToLog?: string[];
}
export interface EnvoyTcpGrpcV3LogProvider {
  service?: string;
  port?: number;
  logName?: string;
  filterStateObjectsToLog?: string[];
}
export interface EnvoyOpenTelemetryLogProvider {
  service?: string;
  port?: number;
  logName?: string;
  logFormat?: EnvoyOpenTelemetryLogProviderLogFormat;
}
export interface EnvoyOpenTelemetryLogProviderLogFormat {
  text?: string;
  labels?: Record<string, unknown>;
}
export interface OpenTelemetryTracingProvider {
  service?: string;
  port?: number;
  maxTagLength?: number;
  http?: HttpService;
  grpc?: GrpcService;
  resourceDetectors?: ResourceDetectors;
  serviceAttributeEnrichment?: ServiceAttributeEnrichment;
  dynatraceSampler?: DynatraceSampler;
}
export interface DynatraceSampler {
  tenant?: string;
  clusterId?: number;
  rootSpansPerMinute?: number;
  httpService?: DynatraceApi;
}
export interface DynatraceApi {
  service?: string;
  port?: number;
  http?: HttpService;
}
export interface SDSProvider {
  name?: string;
  service?: string;
  port?: number;
}
export interface HttpService {
  path?: string;
  timeout?: Duration;
  headers?: HttpHeader[];
}
export interface HttpHeader {
  name?: string;
  value?: string;
  envName?: string;
}
export interface ResourceDetectors {
  environment?: EnvironmentResourceDetector;
  dynatrace?: DynatraceResourceDetector;
}
/** A message without fields: present or absent. */
export type EnvironmentResourceDetector = Record<string, never>;
/** A message without fields: present or absent. */
export type DynatraceResourceDetector = Record<string, never>;
export interface GrpcService {
  timeout?: Duration;
  initialMetadata?: HttpHeader[];
}
export interface DefaultProviders {
  tracing?: string[];
  metrics?: string[];
  accessLogging?: string[];
}
export interface ProxyPathNormalization {
  normalization?: NormalizationType;
}
export interface TLSConfig {
  minProtocolVersion?: TLSProtocol;
  ecdhCurves?: string[];
  cipherSuites?: string[];
}
export interface DefaultTrafficPolicy {
  connectionPool?: ConnectionPoolSettings;
  outlierDetection?: OutlierDetection;
}
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}
export interface LabelSelectorRequirement {
  key?: string;
  operator?: string;
  values?: string[];
}
export interface ServiceEntryVisibility {
  defaultVisibility?: Visibility;
  applyToSidecars?: boolean;
  policies?: Policy[];
}
export interface Policy {
  visibility?: Visibility;
  matchingRules?: MatchRule[];
}
export interface MatchRule {
  namespaceSelector?: LabelSelector;
}
export interface ConfigSource {
  address?: string;
  tlsSettings?: ClientTLSSettings;
  subscribedResources?: Resource[];
}
export interface Certificate {
  secretName?: string;
  dnsNames?: string[];
}
export interface Tracing {
  zipkin?: Zipkin;
  lightstep?: Lightstep;
  datadog?: Datadog;
  stackdriver?: Stackdriver;
  openCensusAgent?: OpenCensusAgent;
  customTags?: Record<string, CustomTag>;
  maxPathTagLength?: number;
  sampling?: number;
  tlsSettings?: ClientTLSSettings;
  enableIstioTags?: boolean;
}
export interface Zipkin {
  address?: string;
}
export interface Lightstep {
  address?: string;
  accessToken?: string;
}
export interface Datadog {
  address?: string;
}
export interface Stackdriver {
  debug?: boolean;
  maxNumberOfAttributes?: number;
  maxNumberOfAnnotations?: number;
  maxNumberOfMessageEvents?: number;
}
export interface OpenCensusAgent {
  address?: string;
  context?: OpenCensusAgentTraceContext[];
}
export interface CustomTag {
  literal?: Literal;
  environment?: Environment;
  header?: RequestHeader;
}
export interface Literal {
  value?: string;
}
export interface Environment {
  name?: string;
  defaultValue?: string;
}
export interface RequestHeader {
  name?: string;
  defaultValue?: string;
}
export interface SDS {
  enabled?: boolean;
  k8sSaJwtPath?: string;
}
export interface Topology {
  numTrustedProxies?: number;
  forwardClientCertDetails?: ForwardClientCertDetails;
  proxyProtocol?: ProxyProtocolConfiguration;
}
/** A message without fields: present or absent. */
export type ProxyProtocolConfiguration = Record<string, never>;
export interface PrivateKeyProvider {
  cryptomb?: CryptoMb;
  qat?: QAT;
}
export interface CryptoMb {
  pollDelay?: Duration;
  fallback?: boolean;
}
export interface QAT {
  pollDelay?: Duration;
  fallback?: boolean;
}
export interface ProxyConfig {
  configPath?: string;
  binaryPath?: string;
  serviceCluster?: string;
  tracingServiceName?: TracingServiceName;
  drainDuration?: Duration;
  discoveryAddress?: string;
  discoveryRefreshDelay?: Duration;
  zipkinAddress?: string;
  statsdUdpAddress?: string;
  envoyMetricsServiceAddress?: string;
  proxyAdminPort?: number;
  availabilityZone?: string;
  controlPlaneAuthPolicy?: AuthenticationPolicy;
  customConfigFile?: string;
  statNameLength?: number;
  concurrency?: number;
  proxyBootstrapTemplatePath?: string;
  interceptionMode?: InboundInterceptionMode;
  tracing?: Tracing;
  sds?: SDS;
  envoyAccessLogService?: RemoteService;
  envoyMetricsService?: RemoteService;
  proxyMetadata?: Record<string, string>;
  runtimeValues?: Record<string, string>;
  statusPort?: number;
  extraStatTags?: string[];
  gatewayTopology?: Topology;
  terminationDrainDuration?: Duration;
  meshId?: string;
  readinessProbe?: ReadinessProbe;
  proxyStatsMatcher?: ProxyStatsMatcher;
  holdApplicationUntilProxyStarts?: boolean;
  caCertificatesPem?: string[];
  image?: ProxyImage;
  privateKeyProvider?: PrivateKeyProvider;
  proxyHeaders?: ProxyHeaders;
  fileFlushInterval?: Duration;
  fileFlushMinSizeKb?: number;
  statsCompression?: boolean;
  connectionSettings?: ConnectionSettings;
}
export interface ProxyStatsMatcher {
  inclusionPrefixes?: string[];
  inclusionSuffixes?: string[];
  inclusionRegexps?: string[];
}
export interface ProxyHeaders {
  forwardedClientCert?: ForwardClientCertDetails;
  setCurrentClientCertDetails?: SetCurrentClientCertDetails;
  requestId?: RequestId;
  server?: Server;
  attemptCount?: AttemptCount;
  envoyDebugHeaders?: EnvoyDebugHeaders;
  metadataExchangeHeaders?: MetadataExchangeHeaders;
  preserveHttp1HeaderCase?: boolean;
  xForwardedHost?: XForwardedHost;
  xForwardedPort?: XForwardedPort;
}
export interface Server {
  disabled?: boolean;
  value?: string;
}
export interface RequestId {
  disabled?: boolean;
}
export interface AttemptCount {
  disabled?: boolean;
}
export interface XForwardedHost {
  enabled?: boolean;
}
export interface XForwardedPort {
  enabled?: boolean;
}
export interface EnvoyDebugHeaders {
  disabled?: boolean;
}
export interface MetadataExchangeHeaders {
  mode?: MetadataExchangeMode;
}
export interface SetCurrentClientCertDetails {
  subject?: boolean;
  cert?: boolean;
  chain?: boolean;
  dns?: boolean;
  uri?: boolean;
}
export interface ConnectionSettings {
  profile?: Profile;
  listenerPerConnectionBufferLimitBytes?: number;
  clusterPerConnectionBufferLimitBytes?: number;
  httpIdleTimeout?: Duration;
  httpMaxConnectionDuration?: Duration;
  httpDrainTimeout?: Duration;
  httpRequestTimeout?: Duration;
  httpRequestHeadersTimeout?: Duration;
  httpStreamIdleTimeout?: Duration;
  httpMaxStreamDuration?: Duration;
  httpMaxConcurrentStreams?: number;
  http2InitialStreamWindowSize?: number;
  http2InitialConnectionWindowSize?: number;
  httpHeadersWithUnderscoresAction?: HeadersWithUnderscoresAction;
  httpMergeSlashes?: boolean;
  httpPathWithEscapedSlashesAction?: PathWithEscapedSlashesAction;
  listenerConnectionLimit?: number;
  globalDownstreamConnectionLimit?: number;
}
export interface RemoteService {
  address?: string;
  tlsSettings?: ClientTLSSettings;
  tcpKeepalive?: TcpKeepalive;
}
export type IngressControllerMode = "UNSPECIFIED" | "OFF" | "DEFAULT" | "STRICT";
export type AuthPolicy = "NONE" | "MUTUAL_TLS";
export type AccessLogEncoding = "TEXT" | "JSON";
export type OutboundTrafficPolicyMode = "REGISTRY_ONLY" | "ALLOW_ANY" | "ALLOW_ANY_DYNAMIC_DNS";
export type InboundTrafficPolicyMode = "PASSTHROUGH" | "LOCALHOST";
export type H2UpgradePolicy = "DO_NOT_UPGRADE" | "UPGRADE";
export type Scope = "LOCAL" | "GLOBAL";
export type TraceContextOption = "USE_B3" | "USE_B3_WITH_W3C_PROPAGATION";
export type OpenCensusAgentTracingProviderTraceContext =
  | "UNSPECIFIED"
  | "W3C_TRACE_CONTEXT"
  | "GRPC_BIN"
  | "CLOUD_TRACE_CONTEXT"
  | "B3";
export type ServiceAttributeEnrichment = "ISTIO_CANONICAL" | "OTEL_SEMANTIC_CONVENTIONS";
export type NormalizationType = "DEFAULT" | "NONE" | "BASE" | "MERGE_SLASHES" | "DECODE_AND_MERGE_SLASHES";
export type TLSProtocol = "TLS_AUTO" | "TLSV1_2" | "TLSV1_3";
export type Resource = "SERVICE_REGISTRY";
export type Visibility = "VISIBILITY_UNSPECIFIED" | "NONE" | "NAMESPACE" | "PUBLIC";
export type AuthenticationPolicy = "NONE" | "MUTUAL_TLS" | "INHERIT";
export type OpenCensusAgentTraceContext =
  | "UNSPECIFIED"
  | "W3C_TRACE_CONTEXT"
  | "GRPC_BIN"
  | "CLOUD_TRACE_CONTEXT"
  | "B3";
export type ForwardClientCertDetails =
  | "UNDEFINED"
  | "SANITIZE"
  | "FORWARD_ONLY"
  | "APPEND_FORWARD"
  | "SANITIZE_SET"
  | "ALWAYS_FORWARD_ONLY";
export type TracingServiceName = "APP_LABEL_AND_NAMESPACE" | "CANONICAL_NAME_ONLY" | "CANONICAL_NAME_AND_NAMESPACE";
export type InboundInterceptionMode = "REDIRECT" | "TPROXY" | "NONE";
export type MetadataExchangeMode = "UNDEFINED" | "IN_MESH";
export type Profile = "SIDECAR" | "EDGE";
export type HeadersWithUnderscoresAction =
  | "HEADERS_WITH_UNDERSCORES_UNSPECIFIED"
  | "HEADERS_WITH_UNDERSCORES_ALLOW"
  | "HEADERS_WITH_UNDERSCORES_REJECT_REQUEST"
  | "HEADERS_WITH_UNDERSCORES_DROP_HEADER";
export type PathWithEscapedSlashesAction =
  | "PATH_WITH_ESCAPED_SLASHES_UNSPECIFIED"
  | "KEEP_UNCHANGED"
  | "REJECT_REQUEST"
  | "UNESCAPE_AND_REDIRECT"
  | "UNESCAPE_AND_FORWARD";

// istio.mesh.v1alpha1.MeshNetworks: the `--meshNetworks` file.
export interface MeshNetworks {
  networks?: Record<string, Network>;
}
export interface Network {
  endpoints?: NetworkEndpoints[];
  gateways?: IstioNetworkGateway[];
}
/** One of fromCidr or fromRegistry. */
export interface NetworkEndpoints {
  fromCidr?: string;
  fromRegistry?: string;
}
/** One of registryServiceName or address. */
export interface IstioNetworkGateway {
  registryServiceName?: string;
  address?: string;
  port?: number;
  locality?: string;
}

/**
 * Field kinds by message (full proto name without package) and JSON field name: a scalar
 * (`string`, `bool`, `int32`, `uint32`, `int64`, `double`, `duration`), `struct` (any JSON object),
 * `object` (a networking message checked elsewhere), `enum:<name>`, `msg:<name>`; `[]` marks a list
 * and `map:` a map with string keys.
 */
export const MESSAGE_FIELDS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  MeshConfig: {
    proxyListenPort: "int32",
    proxyInboundListenPort: "int32",
    proxyHttpPort: "int32",
    connectTimeout: "duration",
    hboneIdleTimeout: "duration",
    protocolDetectionTimeout: "duration",
    tcpKeepalive: "object",
    ingressClass: "string",
    ingressService: "string",
    ingressControllerMode: "enum:MeshConfig.IngressControllerMode",
    ingressSelector: "string",
    enableTracing: "bool",
    accessLogFile: "string",
    accessLogFormat: "string",
    accessLogEncoding: "enum:MeshConfig.AccessLogEncoding",
    enableEnvoyAccessLogService: "bool",
    disableEnvoyListenerLog: "bool",
    defaultConfig: "msg:ProxyConfig",
    outboundTrafficPolicy: "msg:MeshConfig.OutboundTrafficPolicy",
    inboundTrafficPolicy: "msg:MeshConfig.InboundTrafficPolicy",
    configSources: "msg:ConfigSource[]",
    enableAutoMtls: "bool",
    trustDomain: "string",
    trustDomainAliases: "string[]",
    caCertificates: "msg:MeshConfig.CertificateData[]",
    defaultServiceExportTo: "string[]",
    defaultVirtualServiceExportTo: "string[]",
    defaultDestinationRuleExportTo: "string[]",
    rootNamespace: "string",
    localityLbSetting: "object",
    zoneAwareLbSetting: "object",
    dnsRefreshRate: "duration",
    h2UpgradePolicy: "enum:MeshConfig.H2UpgradePolicy",
    inboundClusterStatName: "string",
    outboundClusterStatName: "string",
    certificates: "msg:Certificate[]",
    serviceSettings: "msg:MeshConfig.ServiceSettings[]",
    serviceScopeConfigs: "msg:MeshConfig.ServiceScopeConfigs[]",
    enablePrometheusMerge: "bool",
    verifyCertificateAtClient: "bool",
    ca: "msg:MeshConfig.CA",
    extensionProviders: "msg:MeshConfig.ExtensionProvider[]",
    defaultProviders: "msg:MeshConfig.DefaultProviders",
    discoverySelectors: "msg:LabelSelector[]",
    pathNormalization: "msg:MeshConfig.ProxyPathNormalization",
    defaultHttpRetryPolicy: "object",
    meshMTLS: "msg:MeshConfig.TLSConfig",
    tlsDefaults: "msg:MeshConfig.TLSConfig",
    defaultTrafficPolicy: "msg:MeshConfig.DefaultTrafficPolicy",
    serviceEntryVisibility: "msg:ServiceEntryVisibility",
    defaultInboundHttpRetryPolicy: "object",
  },
  "MeshConfig.OutboundTrafficPolicy": { mode: "enum:MeshConfig.OutboundTrafficPolicy.Mode", tls: "object" },
  "MeshConfig.InboundTrafficPolicy": { mode: "enum:MeshConfig.InboundTrafficPolicy.Mode" },
  "MeshConfig.CertificateData": {
    pem: "string",
    spiffeBundleUrl: "string",
    certSigners: "string[]",
    trustDomains: "string[]",
  },
  "MeshConfig.ServiceSettings": { settings: "msg:MeshConfig.ServiceSettings.Settings", hosts: "string[]" },
  "MeshConfig.ServiceSettings.Settings": { clusterLocal: "bool" },
  "MeshConfig.ServiceScopeConfigs": {
    namespaceSelector: "msg:LabelSelector",
    servicesSelector: "msg:LabelSelector",
    scope: "enum:MeshConfig.ServiceScopeConfigs.Scope",
  },
  "MeshConfig.CA": { address: "string", tlsSettings: "object", requestTimeout: "duration", istiodSide: "bool" },
  "MeshConfig.ExtensionProvider": {
    name: "string",
    envoyExtAuthzHttp: "msg:MeshConfig.ExtensionProvider.EnvoyExternalAuthorizationHttpProvider",
    envoyExtAuthzGrpc: "msg:MeshConfig.ExtensionProvider.EnvoyExternalAuthorizationGrpcProvider",
    zipkin: "msg:MeshConfig.ExtensionProvider.ZipkinTracingProvider",
    lightstep: "msg:MeshConfig.ExtensionProvider.LightstepTracingProvider",
    datadog: "msg:MeshConfig.ExtensionProvider.DatadogTracingProvider",
    stackdriver: "msg:MeshConfig.ExtensionProvider.StackdriverProvider",
    opencensus: "msg:MeshConfig.ExtensionProvider.OpenCensusAgentTracingProvider",
    skywalking: "msg:MeshConfig.ExtensionProvider.SkyWalkingTracingProvider",
    opentelemetry: "msg:MeshConfig.ExtensionProvider.OpenTelemetryTracingProvider",
    prometheus: "msg:MeshConfig.ExtensionProvider.PrometheusMetricsProvider",
    envoyFileAccessLog: "msg:MeshConfig.ExtensionProvider.EnvoyFileAccessLogProvider",
    envoyHttpAls: "msg:MeshConfig.ExtensionProvider.EnvoyHttpGrpcV3LogProvider",
    envoyTcpAls: "msg:MeshConfig.ExtensionProvider.EnvoyTcpGrpcV3LogProvider",
    envoyOtelAls: "msg:MeshConfig.ExtensionProvider.EnvoyOpenTelemetryLogProvider",
    sds: "msg:MeshConfig.ExtensionProvider.SDSProvider",
  },
  "MeshConfig.ExtensionProvider.EnvoyExternalAuthorizationRequestBody": {
    maxRequestBytes: "uint32",
    allowPartialMessage: "bool",
    packAsBytes: "bool",
  },
  "MeshConfig.ExtensionProvider.EnvoyExternalAuthorizationHttpProvider": {
    service: "string",
    port: "uint32",
    timeout: "duration",
    pathPrefix: "string",
    failOpen: "bool",
    clearRouteCache: "bool",
    statusOnError: "string",
    includeHeadersInCheck: "string[]",
    includeRequestHeadersInCheck: "string[]",
    includeAdditionalHeadersInCheck: "map:string",
    includeRequestBodyInCheck: "msg:MeshConfig.ExtensionProvider.EnvoyExternalAuthorizationRequestBody",
    headersToUpstreamOnAllow: "string[]",
    headersToDownstreamOnDeny: "string[]",
    headersToDownstreamOnAllow: "string[]",
  },
  "MeshConfig.ExtensionProvider.EnvoyExternalAuthorizationGrpcProvider": {
    service: "string",
    port: "uint32",
    timeout: "duration",
    failOpen: "bool",
    clearRouteCache: "bool",
    statusOnError: "string",
    includeRequestBodyInCheck: "msg:MeshConfig.ExtensionProvider.EnvoyExternalAuthorizationRequestBody",
  },
  "MeshConfig.ExtensionProvider.ZipkinTracingProvider": {
    service: "string",
    port: "uint32",
    maxTagLength: "uint32",
    enable64bitTraceId: "bool",
    path: "string",
    traceContextOption: "enum:MeshConfig.ExtensionProvider.ZipkinTracingProvider.TraceContextOption",
    timeout: "duration",
    headers: "msg:MeshConfig.ExtensionProvider.HttpHeader[]",
  },
  "MeshConfig.ExtensionProvider.LightstepTracingProvider": {
    service: "string",
    port: "uint32",
    accessToken: "string",
    maxTagLength: "uint32",
  },
  "MeshConfig.ExtensionProvider.DatadogTracingProvider": { service: "string", port: "uint32", maxTagLength: "uint32" },
  "MeshConfig.ExtensionProvider.SkyWalkingTracingProvider": {
    service: "string",
    port: "uint32",
    accessToken: "string",
  },
  "MeshConfig.ExtensionProvider.StackdriverProvider": {
    debug: "bool",
    maxNumberOfAttributes: "int64",
    maxNumberOfAnnotations: "int64",
    maxNumberOfMessageEvents: "int64",
    maxTagLength: "uint32",
    logging: "msg:MeshConfig.ExtensionProvider.StackdriverProvider.Logging",
  },
  "MeshConfig.ExtensionProvider.StackdriverProvider.Logging": { labels: "map:string" },
  "MeshConfig.ExtensionProvider.OpenCensusAgentTracingProvider": {
    service: "string",
    port: "uint32",
    context: "enum:MeshConfig.ExtensionProvider.OpenCensusAgentTracingProvider.TraceContext[]",
    maxTagLength: "uint32",
  },
  "MeshConfig.ExtensionProvider.PrometheusMetricsProvider": {},
  "MeshConfig.ExtensionProvider.EnvoyFileAccessLogProvider": {
    path: "string",
    logFormat: "msg:MeshConfig.ExtensionProvider.EnvoyFileAccessLogProvider.LogFormat",
    omitEmptyValues: "bool",
  },
  "MeshConfig.ExtensionProvider.EnvoyFileAccessLogProvider.LogFormat": { text: "string", labels: "struct" },
  "MeshConfig.ExtensionProvider.EnvoyHttpGrpcV3LogProvider": {
    service: "string",
    port: "uint32",
    logName: "string",
    filterStateObjectsToLog: "string[]",
    additionalRequestHeadersToLog: "string[]",
    additionalResponseHeadersToLog: "string[]",
    additionalResponseTrailersToLog: "string[]",
  },
  "MeshConfig.ExtensionProvider.EnvoyTcpGrpcV3LogProvider": {
    service: "string",
    port: "uint32",
    logName: "string",
    filterStateObjectsToLog: "string[]",
  },
  "MeshConfig.ExtensionProvider.EnvoyOpenTelemetryLogProvider": {
    service: "string",
    port: "uint32",
    logName: "string",
    logFormat: "msg:MeshConfig.ExtensionProvider.EnvoyOpenTelemetryLogProvider.LogFormat",
  },
  "MeshConfig.ExtensionProvider.EnvoyOpenTelemetryLogProvider.LogFormat": { text: "string", labels: "struct" },
  "MeshConfig.ExtensionProvider.OpenTelemetryTracingProvider": {
    service: "string",
    port: "uint32",
    maxTagLength: "uint32",
    http: "msg:MeshConfig.ExtensionProvider.HttpService",
    grpc: "msg:MeshConfig.ExtensionProvider.GrpcService",
    resourceDetectors: "msg:MeshConfig.ExtensionProvider.ResourceDetectors",
    serviceAttributeEnrichment: "enum:MeshConfig.ExtensionProvider.ServiceAttributeEnrichment",
    dynatraceSampler: "msg:MeshConfig.ExtensionProvider.OpenTelemetryTracingProvider.DynatraceSampler",
  },
  "MeshConfig.ExtensionProvider.OpenTelemetryTracingProvider.DynatraceSampler": {
    tenant: "string",
    clusterId: "int32",
    rootSpansPerMinute: "uint32",
    httpService: "msg:MeshConfig.ExtensionProvider.OpenTelemetryTracingProvider.DynatraceSampler.DynatraceApi",
  },
  "MeshConfig.ExtensionProvider.OpenTelemetryTracingProvider.DynatraceSampler.DynatraceApi": {
    service: "string",
    port: "uint32",
    http: "msg:MeshConfig.ExtensionProvider.HttpService",
  },
  "MeshConfig.ExtensionProvider.SDSProvider": { name: "string", service: "string", port: "uint32" },
  "MeshConfig.ExtensionProvider.HttpService": {
    path: "string",
    timeout: "duration",
    headers: "msg:MeshConfig.ExtensionProvider.HttpHeader[]",
  },
  "MeshConfig.ExtensionProvider.HttpHeader": { name: "string", value: "string", envName: "string" },
  "MeshConfig.ExtensionProvider.ResourceDetectors": {
    environment: "msg:MeshConfig.ExtensionProvider.ResourceDetectors.EnvironmentResourceDetector",
    dynatrace: "msg:MeshConfig.ExtensionProvider.ResourceDetectors.DynatraceResourceDetector",
  },
  "MeshConfig.ExtensionProvider.ResourceDetectors.EnvironmentResourceDetector": {},
  "MeshConfig.ExtensionProvider.ResourceDetectors.DynatraceResourceDetector": {},
  "MeshConfig.ExtensionProvider.GrpcService": {
    timeout: "duration",
    initialMetadata: "msg:MeshConfig.ExtensionProvider.HttpHeader[]",
  },
  "MeshConfig.DefaultProviders": { tracing: "string[]", metrics: "string[]", accessLogging: "string[]" },
  "MeshConfig.ProxyPathNormalization": { normalization: "enum:MeshConfig.ProxyPathNormalization.NormalizationType" },
  "MeshConfig.TLSConfig": {
    minProtocolVersion: "enum:MeshConfig.TLSConfig.TLSProtocol",
    ecdhCurves: "string[]",
    cipherSuites: "string[]",
  },
  "MeshConfig.DefaultTrafficPolicy": { connectionPool: "object", outlierDetection: "object" },
  LabelSelector: { matchLabels: "map:string", matchExpressions: "msg:LabelSelectorRequirement[]" },
  LabelSelectorRequirement: { key: "string", operator: "string", values: "string[]" },
  ServiceEntryVisibility: {
    defaultVisibility: "enum:ServiceEntryVisibility.Visibility",
    applyToSidecars: "bool",
    policies: "msg:ServiceEntryVisibility.Policy[]",
  },
  "ServiceEntryVisibility.Policy": {
    visibility: "enum:ServiceEntryVisibility.Visibility",
    matchingRules: "msg:ServiceEntryVisibility.MatchRule[]",
  },
  "ServiceEntryVisibility.MatchRule": { namespaceSelector: "msg:LabelSelector" },
  ConfigSource: { address: "string", tlsSettings: "object", subscribedResources: "enum:Resource[]" },
  Certificate: { secretName: "string", dnsNames: "string[]" },
  Tracing: {
    zipkin: "msg:Tracing.Zipkin",
    lightstep: "msg:Tracing.Lightstep",
    datadog: "msg:Tracing.Datadog",
    stackdriver: "msg:Tracing.Stackdriver",
    openCensusAgent: "msg:Tracing.OpenCensusAgent",
    customTags: "map:msg:Tracing.CustomTag",
    maxPathTagLength: "uint32",
    sampling: "double",
    tlsSettings: "object",
    enableIstioTags: "bool",
  },
  "Tracing.Zipkin": { address: "string" },
  "Tracing.Lightstep": { address: "string", accessToken: "string" },
  "Tracing.Datadog": { address: "string" },
  "Tracing.Stackdriver": {
    debug: "bool",
    maxNumberOfAttributes: "int64",
    maxNumberOfAnnotations: "int64",
    maxNumberOfMessageEvents: "int64",
  },
  "Tracing.OpenCensusAgent": { address: "string", context: "enum:Tracing.OpenCensusAgent.TraceContext[]" },
  "Tracing.CustomTag": {
    literal: "msg:Tracing.Literal",
    environment: "msg:Tracing.Environment",
    header: "msg:Tracing.RequestHeader",
  },
  "Tracing.Literal": { value: "string" },
  "Tracing.Environment": { name: "string", defaultValue: "string" },
  "Tracing.RequestHeader": { name: "string", defaultValue: "string" },
  SDS: { enabled: "bool", k8sSaJwtPath: "string" },
  Topology: {
    numTrustedProxies: "uint32",
    forwardClientCertDetails: "enum:ForwardClientCertDetails",
    proxyProtocol: "msg:Topology.ProxyProtocolConfiguration",
  },
  "Topology.ProxyProtocolConfiguration": {},
  PrivateKeyProvider: { cryptomb: "msg:PrivateKeyProvider.CryptoMb", qat: "msg:PrivateKeyProvider.QAT" },
  "PrivateKeyProvider.CryptoMb": { pollDelay: "duration", fallback: "bool" },
  "PrivateKeyProvider.QAT": { pollDelay: "duration", fallback: "bool" },
  ProxyConfig: {
    configPath: "string",
    binaryPath: "string",
    serviceCluster: "string",
    tracingServiceName: "enum:ProxyConfig.TracingServiceName",
    drainDuration: "duration",
    discoveryAddress: "string",
    discoveryRefreshDelay: "duration",
    zipkinAddress: "string",
    statsdUdpAddress: "string",
    envoyMetricsServiceAddress: "string",
    proxyAdminPort: "int32",
    availabilityZone: "string",
    controlPlaneAuthPolicy: "enum:AuthenticationPolicy",
    customConfigFile: "string",
    statNameLength: "int32",
    concurrency: "int32",
    proxyBootstrapTemplatePath: "string",
    interceptionMode: "enum:ProxyConfig.InboundInterceptionMode",
    tracing: "msg:Tracing",
    sds: "msg:SDS",
    envoyAccessLogService: "msg:RemoteService",
    envoyMetricsService: "msg:RemoteService",
    proxyMetadata: "map:string",
    runtimeValues: "map:string",
    statusPort: "int32",
    extraStatTags: "string[]",
    gatewayTopology: "msg:Topology",
    terminationDrainDuration: "duration",
    meshId: "string",
    readinessProbe: "object",
    proxyStatsMatcher: "msg:ProxyConfig.ProxyStatsMatcher",
    holdApplicationUntilProxyStarts: "bool",
    caCertificatesPem: "string[]",
    image: "object",
    privateKeyProvider: "msg:PrivateKeyProvider",
    proxyHeaders: "msg:ProxyConfig.ProxyHeaders",
    fileFlushInterval: "duration",
    fileFlushMinSizeKb: "uint32",
    statsCompression: "bool",
    connectionSettings: "msg:ProxyConfig.ConnectionSettings",
  },
  "ProxyConfig.ProxyStatsMatcher": {
    inclusionPrefixes: "string[]",
    inclusionSuffixes: "string[]",
    inclusionRegexps: "string[]",
  },
  "ProxyConfig.ProxyHeaders": {
    forwardedClientCert: "enum:ForwardClientCertDetails",
    setCurrentClientCertDetails: "msg:ProxyConfig.ProxyHeaders.SetCurrentClientCertDetails",
    requestId: "msg:ProxyConfig.ProxyHeaders.RequestId",
    server: "msg:ProxyConfig.ProxyHeaders.Server",
    attemptCount: "msg:ProxyConfig.ProxyHeaders.AttemptCount",
    envoyDebugHeaders: "msg:ProxyConfig.ProxyHeaders.EnvoyDebugHeaders",
    metadataExchangeHeaders: "msg:ProxyConfig.ProxyHeaders.MetadataExchangeHeaders",
    preserveHttp1HeaderCase: "bool",
    xForwardedHost: "msg:ProxyConfig.ProxyHeaders.XForwardedHost",
    xForwardedPort: "msg:ProxyConfig.ProxyHeaders.XForwardedPort",
  },
  "ProxyConfig.ProxyHeaders.Server": { disabled: "bool", value: "string" },
  "ProxyConfig.ProxyHeaders.RequestId": { disabled: "bool" },
  "ProxyConfig.ProxyHeaders.AttemptCount": { disabled: "bool" },
  "ProxyConfig.ProxyHeaders.XForwardedHost": { enabled: "bool" },
  "ProxyConfig.ProxyHeaders.XForwardedPort": { enabled: "bool" },
  "ProxyConfig.ProxyHeaders.EnvoyDebugHeaders": { disabled: "bool" },
  "ProxyConfig.ProxyHeaders.MetadataExchangeHeaders": { mode: "enum:ProxyConfig.ProxyHeaders.MetadataExchangeMode" },
  "ProxyConfig.ProxyHeaders.SetCurrentClientCertDetails": {
    subject: "bool",
    cert: "bool",
    chain: "bool",
    dns: "bool",
    uri: "bool",
  },
  "ProxyConfig.ConnectionSettings": {
    profile: "enum:ProxyConfig.ConnectionSettings.Profile",
    listenerPerConnectionBufferLimitBytes: "int32",
    clusterPerConnectionBufferLimitBytes: "int32",
    httpIdleTimeout: "duration",
    httpMaxConnectionDuration: "duration",
    httpDrainTimeout: "duration",
    httpRequestTimeout: "duration",
    httpRequestHeadersTimeout: "duration",
    httpStreamIdleTimeout: "duration",
    httpMaxStreamDuration: "duration",
    httpMaxConcurrentStreams: "int32",
    http2InitialStreamWindowSize: "int32",
    http2InitialConnectionWindowSize: "int32",
    httpHeadersWithUnderscoresAction: "enum:ProxyConfig.ConnectionSettings.HeadersWithUnderscoresAction",
    httpMergeSlashes: "bool",
    httpPathWithEscapedSlashesAction: "enum:ProxyConfig.ConnectionSettings.PathWithEscapedSlashesAction",
    listenerConnectionLimit: "int32",
    globalDownstreamConnectionLimit: "int32",
  },
  RemoteService: { address: "string", tlsSettings: "object", tcpKeepalive: "object" },
  MeshNetworks: { networks: "map:msg:Network" },
  Network: { endpoints: "msg:Network.NetworkEndpoints[]", gateways: "msg:Network.IstioNetworkGateway[]" },
  "Network.NetworkEndpoints": { fromCidr: "string", fromRegistry: "string" },
  "Network.IstioNetworkGateway": {
    registryServiceName: "string",
    address: "string",
    port: "uint32",
    locality: "string",
  },
};
export const ENUM_VALUES: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  "MeshConfig.IngressControllerMode": { UNSPECIFIED: 0, OFF: 1, DEFAULT: 2, STRICT: 3 },
  "MeshConfig.AuthPolicy": { NONE: 0, MUTUAL_TLS: 1 },
  "MeshConfig.AccessLogEncoding": { TEXT: 0, JSON: 1 },
  "MeshConfig.OutboundTrafficPolicy.Mode": { REGISTRY_ONLY: 0, ALLOW_ANY: 1, ALLOW_ANY_DYNAMIC_DNS: 3 },
  "MeshConfig.InboundTrafficPolicy.Mode": { PASSTHROUGH: 0, LOCALHOST: 1 },
  "MeshConfig.H2UpgradePolicy": { DO_NOT_UPGRADE: 0, UPGRADE: 1 },
  "MeshConfig.ServiceScopeConfigs.Scope": { LOCAL: 0, GLOBAL: 1 },
  "MeshConfig.ExtensionProvider.ZipkinTracingProvider.TraceContextOption": {
    USE_B3: 0,
    USE_B3_WITH_W3C_PROPAGATION: 1,
  },
  "MeshConfig.ExtensionProvider.OpenCensusAgentTracingProvider.TraceContext": {
    UNSPECIFIED: 0,
    W3C_TRACE_CONTEXT: 1,
    GRPC_BIN: 2,
    CLOUD_TRACE_CONTEXT: 3,
    B3: 4,
  },
  "MeshConfig.ExtensionProvider.ServiceAttributeEnrichment": { ISTIO_CANONICAL: 0, OTEL_SEMANTIC_CONVENTIONS: 1 },
  "MeshConfig.ProxyPathNormalization.NormalizationType": {
    DEFAULT: 0,
    NONE: 1,
    BASE: 2,
    MERGE_SLASHES: 3,
    DECODE_AND_MERGE_SLASHES: 4,
  },
  "MeshConfig.TLSConfig.TLSProtocol": { TLS_AUTO: 0, TLSV1_2: 1, TLSV1_3: 2 },
  Resource: { SERVICE_REGISTRY: 0 },
  "ServiceEntryVisibility.Visibility": { VISIBILITY_UNSPECIFIED: 0, NONE: 1, NAMESPACE: 2, PUBLIC: 3 },
  AuthenticationPolicy: { NONE: 0, MUTUAL_TLS: 1, INHERIT: 1000 },
  "Tracing.OpenCensusAgent.TraceContext": {
    UNSPECIFIED: 0,
    W3C_TRACE_CONTEXT: 1,
    GRPC_BIN: 2,
    CLOUD_TRACE_CONTEXT: 3,
    B3: 4,
  },
  ForwardClientCertDetails: {
    UNDEFINED: 0,
    SANITIZE: 1,
    FORWARD_ONLY: 2,
    APPEND_FORWARD: 3,
    SANITIZE_SET: 4,
    ALWAYS_FORWARD_ONLY: 5,
  },
  "ProxyConfig.TracingServiceName": {
    APP_LABEL_AND_NAMESPACE: 0,
    CANONICAL_NAME_ONLY: 1,
    CANONICAL_NAME_AND_NAMESPACE: 2,
  },
  "ProxyConfig.InboundInterceptionMode": { REDIRECT: 0, TPROXY: 1, NONE: 2 },
  "ProxyConfig.ProxyHeaders.MetadataExchangeMode": { UNDEFINED: 0, IN_MESH: 1 },
  "ProxyConfig.ConnectionSettings.Profile": { SIDECAR: 0, EDGE: 1 },
  "ProxyConfig.ConnectionSettings.HeadersWithUnderscoresAction": {
    HEADERS_WITH_UNDERSCORES_UNSPECIFIED: 0,
    HEADERS_WITH_UNDERSCORES_ALLOW: 1,
    HEADERS_WITH_UNDERSCORES_REJECT_REQUEST: 2,
    HEADERS_WITH_UNDERSCORES_DROP_HEADER: 3,
  },
  "ProxyConfig.ConnectionSettings.PathWithEscapedSlashesAction": {
    PATH_WITH_ESCAPED_SLASHES_UNSPECIFIED: 0,
    KEEP_UNCHANGED: 1,
    REJECT_REQUEST: 2,
    UNESCAPE_AND_REDIRECT: 3,
    UNESCAPE_AND_FORWARD: 4,
  },
};

/** Proto oneofs by message: at most one field of each group may be set. */
export const ONEOF_GROUPS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  "MeshConfig.CertificateData": [["pem", "spiffeBundleUrl"]],
  "MeshConfig.ExtensionProvider": [
    [
      "envoyExtAuthzHttp",
      "envoyExtAuthzGrpc",
      "zipkin",
      "lightstep",
      "datadog",
      "stackdriver",
      "opencensus",
      "skywalking",
      "opentelemetry",
      "prometheus",
      "envoyFileAccessLog",
      "envoyHttpAls",
      "envoyTcpAls",
      "envoyOtelAls",
      "sds",
    ],
  ],
  "MeshConfig.ExtensionProvider.EnvoyFileAccessLogProvider.LogFormat": [["text", "labels"]],
  "MeshConfig.ExtensionProvider.HttpHeader": [["value", "envName"]],
  Tracing: [["zipkin", "lightstep", "datadog", "stackdriver", "openCensusAgent"]],
  "Tracing.CustomTag": [["literal", "environment", "header"]],
  PrivateKeyProvider: [["cryptomb", "qat"]],
  ProxyConfig: [["serviceCluster", "tracingServiceName"]],
  "Network.NetworkEndpoints": [["fromCidr", "fromRegistry"]],
  "Network.IstioNetworkGateway": [["registryServiceName", "address"]],
};
