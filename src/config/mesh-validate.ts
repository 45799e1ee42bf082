// Istio's ValidateMeshConfig (pkg/config/validation/agent), run on the merged mesh config. Messages
// are Istio's; each is reported at the field it concerns.
import { checkExtensionProviders } from "./mesh-providers.ts";
import type { MeshConfig, ProxyConfig } from "./mesh-types.ts";
import { durationError, type GoDuration, parseGoDuration } from "./validation/common/durations.ts";
import { goAtoi, goQuote } from "./validation/common/format.ts";
import { fqdnError, isDns1123Label, wildcardDomainError } from "./validation/common/hosts.ts";
import { asObject, has, type JsonObject, numberField, protoName } from "./validation/common/json.ts";
import { isIpAddress, splitHostPort } from "./validation/common/net.ts";
import { portError } from "./validation/common/ports.ts";
import { report } from "./validation/common/report.ts";
import { validateHttpRetry } from "./validation/common/retries.ts";
import {
  validateClientTls,
  validateConnectionPool,
  validateLocalityLbSetting,
  validateOutlierDetection,
  validateZoneAwareLbSetting,
} from "./validation/common/trafficpolicy.ts";
import { type Findings, withErrorPrefix } from "./validation/findings.ts";

const NANOS_PER_MS = 1_000_000n;
const NANOS_PER_SECOND = 1_000_000_000n;
const CONNECT_TIMEOUT_MAX = 3_600n * NANOS_PER_SECOND;
const VALID_ECDH_CURVES = new Set([
  "P-224",
  "P-256",
  "P-521",
  "P-384",
  "X25519",
  "X25519Kyber768Draft00",
  "X25519MLKEM768",
]);

export function validateMeshConfig(mesh: MeshConfig, out: Findings): void {
  report(out.at("proxyListenPort"), prefix("invalid proxy listen port:", portError(mesh.proxyListenPort ?? 0)));
  report(
    out.at("connectTimeout"),
    prefix("invalid connect timeout:", connectTimeoutError(duration(mesh.connectTimeout))),
  );
  const detection = duration(mesh.protocolDetectionTimeout);
  if (detection.nanos % NANOS_PER_MS !== 0n) {
    out
      .at("protocolDetectionTimeout")
      .error("invalid protocol detection timeout: only durations to ms precision are supported");
  }
  validateProxyConfig(mesh.defaultConfig ?? {}, out.at("defaultConfig"));
  // At mesh level both locality settings may be set, and outlier detection counts as present.
  validateLocalityLbSetting(mesh.localityLbSetting, true, out.at("localityLbSetting"));
  validateZoneAwareLbSetting(mesh.zoneAwareLbSetting, true, out.at("zoneAwareLbSetting"));
  (mesh.serviceSettings ?? []).forEach((settings, i) => {
    for (const host of settings.hosts ?? []) {
      report(
        out.at("serviceSettings", i).at("hosts"),
        prefix(`serviceSettings[${i}], host \`${host}\`:`, wildcardDomainError(host)),
      );
    }
  });
  report(out.at("trustDomain"), prefix("trustDomain:", trustDomainError(mesh.trustDomain ?? "")));
  (mesh.trustDomainAliases ?? []).forEach((alias, i) => {
    report(
      out.at("trustDomainAliases", i),
      prefix(`trustDomainAliases[${i}], domain \`${alias}\` :`, trustDomainError(alias)),
    );
  });
  checkExtensionProviders(mesh, out);
  if (mesh.meshMTLS?.ecdhCurves)
    out.at("meshMTLS.ecdhCurves").error("mesh TLS does not support ECDH curves configuration");
  checkEcdhCurves(mesh.tlsDefaults?.ecdhCurves ?? [], out.at("tlsDefaults.ecdhCurves"));
  const trafficPolicy = mesh.defaultTrafficPolicy;
  validateConnectionPool(trafficPolicy?.connectionPool, out.at("defaultTrafficPolicy.connectionPool"));
  validateOutlierDetection(trafficPolicy?.outlierDetection, out.at("defaultTrafficPolicy.outlierDetection"));
  validateInboundRetryPolicy(mesh.defaultInboundHttpRetryPolicy, out.at("defaultInboundHttpRetryPolicy"));
}

/** `multierror.Prefix`: Istio's way of saying which setting an error is about. */
function prefix(text: string, message: string | undefined): string | undefined {
  return message === undefined ? undefined : `${text} ${message}`;
}

// Durations were checked while decoding; an absent one reads as zero, as in Go.
function duration(value: string | undefined): GoDuration {
  const parsed = parseGoDuration(value ?? "0s");
  return "error" in parsed ? { nanos: 0n, ms: 0 } : parsed;
}

function connectTimeoutError(timeout: GoDuration): string | undefined {
  const problem = durationError(timeout);
  if (problem !== undefined) return problem;
  if (timeout.nanos > CONNECT_TIMEOUT_MAX) return `time ${goDurationString(timeout.nanos)} must be >1ms and <1h0m0s`;
  return undefined;
}

/** Go's time.Duration.String(): "1h0m0s", "1.5s", "100ms", "0s". */
export function goDurationString(nanos: bigint): string {
  if (nanos === 0n) return "0s";
  const sign = nanos < 0n ? "-" : "";
  const abs = nanos < 0n ? -nanos : nanos;
  if (abs < NANOS_PER_SECOND) {
    const [unit, size] = abs < 1_000n ? ["ns", 1n] : abs < NANOS_PER_MS ? ["µs", 1_000n] : ["ms", NANOS_PER_MS];
    return `${sign}${decimal(abs, size)}${unit}`;
  }
  const hours = abs / (3_600n * NANOS_PER_SECOND);
  const minutes = (abs / (60n * NANOS_PER_SECOND)) % 60n;
  const seconds = decimal(abs % (60n * NANOS_PER_SECOND), NANOS_PER_SECOND);
  if (hours > 0n) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

// value/size with the fraction's trailing zeros dropped.
function decimal(value: bigint, size: bigint): string {
  const whole = value / size;
  const fraction = value % size;
  if (fraction === 0n) return String(whole);
  const digits = String(size).length - 1;
  return `${whole}.${String(fraction).padStart(digits, "0").replace(/0+$/, "")}`;
}

/** Trust domains: dot-separated DNS labels, a trailing dot allowed. */
function trustDomainError(domain: string): string | undefined {
  if (domain === "") return "empty domain name not allowed";
  const labels = domain.split(".");
  const valid = labels.every((label, i) => isDns1123Label(label) || (i === labels.length - 1 && label === ""));
  return valid ? undefined : `trust domain name ${goQuote(domain)} invalid`;
}

function checkEcdhCurves(curves: readonly string[], out: Findings): void {
  const unknown = new Set<string>();
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const curve of curves) {
    if (curve !== "" && !VALID_ECDH_CURVES.has(curve)) unknown.add(curve);
    else if (seen.has(curve)) duplicates.add(curve);
    else seen.add(curve);
  }
  if (unknown.size > 0) out.warn(`detected unrecognized ECDH curves: [${[...unknown].sort().join(" ")}]`);
  if (duplicates.size > 0) out.warn(`detected duplicate ECDH curves: [${[...duplicates].sort().join(" ")}]`);
}

// ---- defaultConfig (ProxyConfig)

function validateProxyConfig(config: ProxyConfig, out: Findings): void {
  if (!config.configPath) out.at("configPath").error("config path must be set");
  if (!config.binaryPath) out.at("binaryPath").error("binary path must be set");
  if (config.serviceCluster !== undefined) {
    if (config.serviceCluster === "") out.at("serviceCluster").error("service cluster must be specified");
  } else if (config.tracingServiceName === undefined) {
    out.error("oneof service cluster or tracing service name must be specified");
  }
  report(out.at("drainDuration"), drainDurationError(duration(config.drainDuration)));
  if (!config.discoveryAddress) {
    out.at("discoveryAddress").error("discovery address must be set to the proxy discovery service");
  } else {
    report(
      out.at("discoveryAddress"),
      prefix("invalid discovery address:", proxyAddressError(config.discoveryAddress)),
    );
  }
  validateTracing(config.tracing, out.at("tracing"));
  checkAddress(config.statsdUdpAddress, "invalid statsd udp address", out.at("statsdUdpAddress"));
  checkAddress(
    config.envoyMetricsServiceAddress,
    "invalid envoy metrics service address",
    out.at("envoyMetricsServiceAddress"),
  );
  if (config.proxyMetadata && "ISTIO_META_DNS_AUTO_ALLOCATE" in config.proxyMetadata) {
    out
      .at("proxyMetadata")
      .warn(
        "'ISTIO_META_DNS_AUTO_ALLOCATE' is deprecated; review https://istio.io/latest/docs/ops/configuration/traffic-management/dns-proxy/#dns-auto-allocation-v2 for information about replacement functionality",
      );
  }
  const metricsService = config.envoyMetricsService?.address;
  checkAddress(metricsService, "invalid envoy metrics service address", out.at("envoyMetricsService.address"));
  const accessLogService = config.envoyAccessLogService?.address;
  checkAddress(accessLogService, "invalid envoy access log service address", out.at("envoyAccessLogService.address"));
  report(out.at("proxyAdminPort"), prefix("invalid proxy admin port:", portError(config.proxyAdminPort ?? 0)));
  const authPolicy = config.controlPlaneAuthPolicy ?? "NONE";
  if (authPolicy !== "NONE" && authPolicy !== "MUTUAL_TLS") {
    out
      .at("controlPlaneAuthPolicy")
      .error(`invalid authentication policy: unrecognized control plane auth policy ${goQuote(authPolicy)}`);
  }
  report(out.at("statusPort"), prefix("invalid status port:", portError(config.statusPort ?? 0)));
  if (config.privateKeyProvider) {
    const at = out.at("privateKeyProvider");
    for (const message of privateKeyProviderErrors(config.privateKeyProvider)) {
      at.error(`invalid private key provider configuration: ${message}`);
    }
  }
  if (config.connectionSettings) {
    const at = out.at("connectionSettings");
    for (const message of connectionSettingsErrors(config.connectionSettings)) {
      at.error(`invalid connection settings: ${message}`);
    }
  }
}

function drainDurationError(drain: GoDuration): string | undefined {
  const problem = durationError(drain);
  if (problem !== undefined) return `invalid drain duration: ${problem}`;
  return drain.nanos % NANOS_PER_SECOND === 0n ? undefined : "drain time only supports durations to seconds precision";
}

function checkAddress(address: string | undefined, what: string, out: Findings): void {
  if (address) report(out, prefix(`${what} ${goQuote(address)}:`, proxyAddressError(address)));
}

/** Istio's ValidateProxyAddress: `host:port` with a valid port and an FQDN or IP host. */
export function proxyAddressError(address: string): string | undefined {
  const split = splitHostPort(address);
  if ("error" in split) return `unable to split ${goQuote(address)}: ${split.error}`;
  const { host, port } = split;
  const number = goAtoi(port);
  if (number === undefined) {
    return `port (${port}) is not a number: strconv.Atoi: parsing ${goQuote(port)}: invalid syntax`;
  }
  const portProblem = portError(number);
  if (portProblem !== undefined) return portProblem;
  if (fqdnError(host) !== undefined && !isIpAddress(host))
    return `${goQuote(host)} is not a valid hostname or an IP address`;
  return undefined;
}

function validateTracing(tracing: ProxyConfig["tracing"], out: Findings): void {
  if (!tracing) return;
  if (tracing.lightstep) {
    const at = out.at("lightstep");
    const address = tracing.lightstep.address ?? "";
    const problems: string[] = [];
    if (address === "") problems.push("address is required");
    const addressProblem = proxyAddressError(address);
    if (addressProblem !== undefined) problems.push(`invalid lightstep address: ${addressProblem}`);
    if (!tracing.lightstep.accessToken) problems.push("access token is required");
    for (const problem of problems) at.error(`invalid lightstep config: ${problem}`);
  }
  // $(HOST_IP) is filled in by the agent; any IP stands in for it here.
  for (const collector of ["zipkin", "datadog"] as const) {
    const address = tracing[collector]?.address;
    if (tracing[collector] === undefined) continue;
    const resolved = (address ?? "").replace("$(HOST_IP)", "127.0.0.1");
    report(out.at(collector).at("address"), prefix(`invalid ${collector} config:`, proxyAddressError(resolved)));
  }
  if (tracing.tlsSettings) {
    withErrorPrefix(out.at("tlsSettings"), "invalid tracing TLS config:", (scratch) => {
      validateClientTls("", tracing.tlsSettings, scratch);
    });
  }
  const nilTag = Object.entries(tracing.customTags ?? {}).find(([, tag]) => tag === undefined || tag === null);
  if (nilTag) {
    out.at("customTags").error(`invalid tracing custom tags: encountered nil value for custom tag: ${nilTag[0]}`);
  }
}

function privateKeyProviderErrors(provider: NonNullable<ProxyConfig["privateKeyProvider"]>): string[] {
  const chosen = provider.cryptomb ? "cryptomb" : provider.qat ? "qat" : undefined;
  if (chosen === undefined) return ["private key provider configuration is required", "unknown private key provider"];
  const pollDelay = provider[chosen]?.pollDelay;
  if (pollDelay === undefined) return ["pollDelay is required"];
  return duration(pollDelay).nanos === 0n ? ["pollDelay must be non zero"] : [];
}

const NON_NEGATIVE_SIZES = ["listenerPerConnectionBufferLimitBytes", "clusterPerConnectionBufferLimitBytes"] as const;
const NON_NEGATIVE_DURATIONS = [
  "httpIdleTimeout",
  "httpMaxConnectionDuration",
  "httpDrainTimeout",
  "httpRequestTimeout",
  "httpRequestHeadersTimeout",
  "httpStreamIdleTimeout",
  "httpMaxStreamDuration",
] as const;
const WINDOW_SIZES = ["http2InitialStreamWindowSize", "http2InitialConnectionWindowSize"] as const;
const POSITIVE_LIMITS = ["listenerConnectionLimit", "globalDownstreamConnectionLimit"] as const;

// The messages name fields by their proto (snake_case) names.
function connectionSettingsErrors(settings: NonNullable<ProxyConfig["connectionSettings"]>): string[] {
  const errors: string[] = [];
  const fields = settings as JsonObject;
  for (const field of NON_NEGATIVE_SIZES) {
    if (Number(fields[field] ?? 0) < 0) errors.push(`${protoName(field)} must be non-negative`);
  }
  for (const field of NON_NEGATIVE_DURATIONS) {
    const value = fields[field];
    if (typeof value === "string" && duration(value).nanos < 0n)
      errors.push(`${protoName(field)} must be non-negative`);
  }
  if (settings.httpMaxConcurrentStreams !== undefined && settings.httpMaxConcurrentStreams <= 0) {
    errors.push("http_max_concurrent_streams must be positive");
  }
  for (const field of WINDOW_SIZES) {
    const value = fields[field];
    if (typeof value === "number" && value < 65535) errors.push(`${protoName(field)} must be at least 65535`);
  }
  for (const field of POSITIVE_LIMITS) {
    const value = fields[field];
    if (value !== undefined && Number(value) <= 0) errors.push(`${protoName(field)} must be positive`);
  }
  return errors;
}

// ---- defaultInboundHttpRetryPolicy (HTTPRetry)

const INBOUND_RETRY = "invalid default inbound http retry policy:";

/** Only attempts, retryOn and backoff apply to inbound routes; the rest is ignored with a warning. */
function validateInboundRetryPolicy(value: unknown, out: Findings): void {
  const retry = asObject(value);
  if (!retry) return;
  withErrorPrefix(out, INBOUND_RETRY, (scratch) => {
    validateHttpRetry(retry, scratch);
  });
  if (numberField(retry, "attempts") === 0 && has(retry, "backoff")) {
    out.error(`${INBOUND_RETRY} backoff configured when attempts are set to 0 (disabled)`);
  }
  for (const field of ["perTryTimeout", "retryRemoteLocalities", "retryIgnorePreviousHosts"]) {
    if (has(retry, field)) out.at(field).warn(`${field} is ignored by the default inbound http retry policy`);
  }
}
