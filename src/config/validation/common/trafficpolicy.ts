// Traffic-policy building blocks (validation-rules.md §3): connection pool, outlier detection, load
// balancer with locality / zone-aware settings, client TLS, and the traffic policy itself. Used by
// DestinationRule, Sidecar (connection pools) and MeshConfig.
import type { Findings } from "../findings.ts";
import { checkDurationField, decodeDurationField, intPercentError, readDuration } from "./durations.ts";
import { CLIENT_TLS_MODE, H2_UPGRADE_POLICY, PROXY_PROTOCOL_VERSION, readEnum, SIMPLE_LB } from "./enums.ts";
import { goQuote } from "./format.ts";
import { fqdnError } from "./hosts.ts";
import {
  asList,
  asNumber,
  asObject,
  asString,
  boolField,
  field,
  has,
  type JsonObject,
  listField,
  mapEntries,
  numberField,
  objectField,
  stringField,
} from "./json.ts";
import { ipAddressError } from "./net.ts";
import { portError } from "./ports.ts";
import { forEachMessage, report } from "./report.ts";

/** Istio's validateConnectionPool. `out` is at the connection pool field; absent is fine. */
export function validateConnectionPool(value: unknown, out: Findings): void {
  const pool = asObject(value);
  if (!pool) return;
  const http = objectField(pool, "http");
  const tcp = objectField(pool, "tcp");
  if (!http && !tcp) {
    out.error("connection pool must have at least one field");
    return;
  }
  if (http) validateHttpPool(http, out.at("http"));
  if (tcp) validateTcpPool(tcp, out.at("tcp"));
}

function nonNegative(obj: JsonObject, field: string, message: string, out: Findings): void {
  if (numberField(obj, field) < 0) out.at(field).error(message);
}

function validateHttpPool(http: JsonObject, out: Findings): void {
  nonNegative(http, "http1MaxPendingRequests", "http1 max pending requests must be non-negative", out);
  nonNegative(http, "http2MaxRequests", "http2 max requests must be non-negative", out);
  nonNegative(http, "maxRequestsPerConnection", "max requests per connection must be non-negative", out);
  nonNegative(http, "maxRetries", "max retries must be non-negative", out);
  checkDurationField(http, "idleTimeout", out);
  const upgrade = readEnum(field(http, "h2UpgradePolicy"), H2_UPGRADE_POLICY, out.at("h2UpgradePolicy"));
  if (upgrade === "UPGRADE" && boolField(http, "useClientProtocol")) {
    out.error("use client protocol must not be true when H2UpgradePolicy is UPGRADE");
  }
  nonNegative(http, "maxConcurrentStreams", "max concurrent streams must be non-negative", out);
  const keepalive = objectField(http, "http2KeepAlive");
  if (keepalive) {
    const at = out.at("http2KeepAlive");
    for (const field of ["interval", "timeout"]) {
      if (has(keepalive, field)) checkDurationField(keepalive, field, at);
      else at.at(field).error(`http2 keepalive ${field} is required`);
    }
  }
}

function validateTcpPool(tcp: JsonObject, out: Findings): void {
  nonNegative(tcp, "maxConnections", "max connections must be non-negative", out);
  checkDurationField(tcp, "connectTimeout", out);
  checkDurationField(tcp, "maxConnectionDuration", out);
  // An idle timeout of 0s disables it, so only non-zero values get the duration rule.
  const idle = readDuration(field(tcp, "idleTimeout"), out.at("idleTimeout"));
  if (idle && Math.trunc(idle.ms) !== 0) checkDurationField(tcp, "idleTimeout", out);
  const keepalive = objectField(tcp, "tcpKeepalive");
  if (keepalive) {
    checkDurationField(keepalive, "time", out.at("tcpKeepalive"));
    checkDurationField(keepalive, "interval", out.at("tcpKeepalive"));
  }
}

/** Istio's validateOutlierDetection. `out` is at the outlier detection field; absent is fine. */
export function validateOutlierDetection(value: unknown, out: Findings): void {
  const outlier = asObject(value);
  if (!outlier) return;
  checkDurationField(outlier, "baseEjectionTime", out);
  if (numberField(outlier, "consecutiveErrors") !== 0) {
    out
      .at("consecutiveErrors")
      .warn(
        "outlier detection consecutive errors is deprecated, use consecutiveGatewayErrors or consecutive5xxErrors instead",
      );
  }
  if (
    !boolField(outlier, "splitExternalLocalOriginErrors") &&
    numberField(outlier, "consecutiveLocalOriginFailures") > 0
  ) {
    out
      .at("consecutiveLocalOriginFailures")
      .error(
        "outlier detection consecutive local origin failures is specified, but split external local origin errors is set to false",
      );
  }
  checkDurationField(outlier, "interval", out);
  for (const field of ["maxEjectionPercent", "minHealthPercent"]) {
    report(out.at(field), intPercentError(numberField(outlier, field)));
  }
}

const MAGLEV_MAX_TABLE_SIZE = 5000011;

// Envoy's primality test for maglev table sizes: 1, 2 and 3 count as prime, 0 and other evens do not.
function isEnvoyPrime(n: number): boolean {
  if (n !== 0 && n < 4) return true;
  if (n % 2 === 0) return false;
  const limit = Math.floor(Math.sqrt(n));
  for (let factor = 3; factor <= limit; factor += 2) {
    if (n % factor === 0) return false;
  }
  return true;
}

/**
 * Istio's validateLoadBalancer. `outlierPresent`: the enclosing policy sets outlierDetection
 * (failover needs it). `out` is at the load balancer field; absent is fine.
 */
export function validateLoadBalancer(value: unknown, outlierPresent: boolean, out: Findings): void {
  const lb = asObject(value);
  if (!lb) return;
  readEnum(field(lb, "simple"), SIMPLE_LB, out.at("simple"));
  const hash = objectField(lb, "consistentHash");
  if (hash) validateConsistentHash(hash, out.at("consistentHash"));
  if (objectField(lb, "localityLbSetting") && objectField(lb, "zoneAwareLbSetting")) {
    out.error("only one of localityLbSetting and zoneAwareLbSetting can be set");
  }
  validateLocalityLbSetting(field(lb, "localityLbSetting"), outlierPresent, out.at("localityLbSetting"));
  validateZoneAwareLbSetting(field(lb, "zoneAwareLbSetting"), outlierPresent, out.at("zoneAwareLbSetting"));
  const warmup = objectField(lb, "warmup");
  if (warmup) {
    const at = out.at("warmup");
    if (has(warmup, "duration")) checkDurationField(warmup, "duration", at);
    else at.at("duration").error("duration is required");
    if (numberField(warmup, "minimumPercent") > 100) {
      at.at("minimumPercent").error("minimumPercent value should be less than or equal to 100");
    }
    if (has(warmup, "aggression") && numberField(warmup, "aggression") <= 0) {
      at.at("aggression").error("aggression should be greater than 0");
    }
  }
  decodeDurationField(lb, "warmupDurationSecs", out);
  const utilization = objectField(lb, "backendUtilization");
  if (utilization) {
    for (const field of ["weightExpirationPeriod", "weightStabilizationPeriod", "weightUpdatePeriod"]) {
      decodeDurationField(utilization, field, out.at("backendUtilization"));
    }
  }
}

function validateConsistentHash(hash: JsonObject, out: Findings): void {
  const cookie = objectField(hash, "httpCookie");
  if (cookie) {
    const at = out.at("httpCookie");
    if (stringField(cookie, "name") === "") at.at("name").error("name required for HttpCookie");
    decodeDurationField(cookie, "ttl", at);
    const seen = new Set<string>();
    (listField(cookie, "attributes") ?? []).forEach((attr, i) => {
      const name = stringField(asObject(attr) ?? {}, "name");
      if (name === "") at.at("attributes", i).error("cookie attribute name cannot be empty");
      else if (seen.has(name)) at.at("attributes", i).error(`duplicate cookie attribute name: ${name}`);
      else seen.add(name);
    });
  }
  const minimumRingSize = numberField(hash, "minimumRingSize");
  if (minimumRingSize !== 0) {
    out
      .at("minimumRingSize")
      .warn("consistent hash MinimumRingSize is deprecated, use ConsistentHashLB's RingHash configuration instead");
    if (objectField(hash, "ringHash") || objectField(hash, "maglev")) {
      out.error("only one of MinimumRingSize or Maglev/Ringhash can be specified");
    }
  }
  const maglev = objectField(hash, "maglev");
  if (maglev) {
    const at = out.at("maglev.tableSize");
    const size = numberField(maglev, "tableSize");
    if (size === 0) at.error("tableSize must be set for maglev");
    if (size >= MAGLEV_MAX_TABLE_SIZE) at.error(`tableSize must be less than ${MAGLEV_MAX_TABLE_SIZE} for maglev`);
    if (!isEnvoyPrime(size)) at.error("tableSize must be a prime number for maglev");
  }
}

const TOPOLOGY_LABELS = new Set([
  "topology.kubernetes.io/region",
  "topology.kubernetes.io/zone",
  "topology.istio.io/subzone",
]);

interface Failover {
  from: string;
  to: string;
}

function readFailovers(value: unknown): Failover[] {
  return (asList(value) ?? []).map((f) => {
    const obj = asObject(f) ?? {};
    return { from: stringField(obj, "from"), to: stringField(obj, "to") };
  });
}

/** Istio's ValidateLocalityLbSetting. `out` is at the locality setting; absent is fine. */
export function validateLocalityLbSetting(value: unknown, outlierPresent: boolean, out: Findings): void {
  const lb = asObject(value);
  if (!lb) return;
  const distribute = listField(lb, "distribute") ?? [];
  const failovers = readFailovers(field(lb, "failover"));
  const priorities = (listField(lb, "failoverPriority") ?? []).map(asString);
  if (distribute.length > 0 && failovers.length > 0) {
    out.error("can not simultaneously specify 'distribute' and 'failover'");
    return;
  }
  if (failovers.length > 0) {
    const topology = priorities.find((p) => TOPOLOGY_LABELS.has(p));
    if (topology !== undefined) {
      out.error(`can not simultaneously set 'failover' and topology label '${topology}' in 'failover_priority'`);
      return;
    }
  }
  const sources: string[] = [];
  for (const [i, entry] of distribute.entries()) {
    const rule = asObject(entry) ?? {};
    sources.push(stringField(rule, "from"));
    const weights = mapEntries(rule, "to");
    const at = out.at("distribute", i);
    if (weights.some(([, w]) => asNumber(w) <= 0 || asNumber(w) > 100)) {
      at.error("locality weight must be in range [1, 100]");
      return;
    }
    const total = weights.reduce((sum, [, w]) => sum + asNumber(w), 0);
    if (total !== 100) {
      at.error(`total locality weight ${total} != 100`);
      return;
    }
    report(at.at("to"), localitiesError(weights.map(([locality]) => locality)));
  }
  report(out.at("distribute"), localitiesError(sources));
  if ((failovers.length > 0 || priorities.length > 0) && !outlierPresent) {
    out.warn("outlier detection policy must be provided for failover");
  }
  failovers.forEach((f, i) => {
    validateFailover(f, "locality", out.at("failover", i));
  });
}

/** Istio's ValidateZoneAwareLbSetting. `out` is at the zone-aware setting; absent is fine. */
export function validateZoneAwareLbSetting(value: unknown, outlierPresent: boolean, out: Findings): void {
  const lb = asObject(value);
  if (!lb) return;
  const failovers = readFailovers(field(lb, "failover"));
  const priorities = (listField(lb, "failoverPriority") ?? []).map(asString);
  for (const p of priorities) {
    if (TOPOLOGY_LABELS.has(p)) {
      out
        .at("failoverPriority")
        .error(
          `'failover_priority' for zone aware lb must not use topology label '${p}'; region- and zone-level routing are handled automatically`,
        );
    }
  }
  if ((failovers.length > 0 || priorities.length > 0) && !outlierPresent) {
    out.warn("outlier detection policy must be provided for failover");
  }
  failovers.forEach((f, i) => {
    validateFailover(f, "zoneAware", out.at("failover", i));
  });
}

function validateFailover(f: Failover, setting: "locality" | "zoneAware", out: Findings): void {
  const locality = setting === "locality";
  if (f.from === f.to) {
    out.error(`${locality ? "locality" : "zone aware"} lb failover settings must specify different regions`);
  }
  if (f.from.includes("/") || f.to.includes("/")) {
    out.error(
      locality
        ? "locality lb failover only specify region"
        : "zone aware lb failover only specifies region; zone and subzone failover are handled automatically",
    );
  }
  if (f.from.includes("*") || f.to.includes("*")) {
    out.error(`${locality ? "locality" : "zone aware"} lb failover region should not contain '*' wildcard`);
  }
}

/**
 * Istio's validateLocalities: `region[/zone[/subzone]]`, at most one `*` and only at the end, and no
 * entry covered by an earlier one. First error only.
 */
function localitiesError(localities: string[]): string | undefined {
  // region → zone → subzones seen; "*" keys mark "everything below is taken".
  const seen = new Map<string, Map<string, Set<string>>>();
  const overlap = (l: string) => `locality ${l} overlap with previous specified ones`;
  for (const locality of localities) {
    const stars = locality.split("*").length - 1;
    if (stars > 1 || (stars === 1 && !locality.endsWith("*"))) {
      return `locality ${locality} wildcard '*' number can not exceed 1 and must be in the end`;
    }
    if (seen.has("*")) return overlap(locality);
    const parts = splitN(locality, "/", 3);
    if (parts.some((p) => p === "")) return `locality ${locality} must not contain empty region/zone/subzone info`;
    const [region, zone, subzone] = parts;
    const zones = seen.get(region);
    if (parts.length === 1) {
      if (zones) return overlap(locality);
      seen.set(region, new Map([["*", new Set(["*"])]]));
    } else if (!zones) {
      seen.set(region, new Map([[zone, new Set([parts.length === 2 ? "*" : subzone])]]));
    } else {
      if (zones.has("*")) return overlap(locality);
      const subzones = zones.get(zone);
      if (parts.length === 2) {
        if (subzones) return overlap(locality);
        zones.set(zone, new Set(["*"]));
      } else if (!subzones) {
        zones.set(zone, new Set([subzone]));
      } else {
        if (subzones.has("*") || subzones.has(subzone)) return overlap(locality);
        subzones.add(subzone);
      }
    }
  }
  return undefined;
}

// Go strings.SplitN: at most n parts, the last holding the rest.
function splitN(s: string, sep: string, n: number): string[] {
  const parts = s.split(sep);
  return parts.length <= n ? parts : [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
}

const CONFIGMAP_PREFIX = "configmap://";

function configMapCredentialError(credentialName: string, namespace: string): string | undefined {
  const [ns, name] = credentialName.slice(CONFIGMAP_PREFIX.length).split("/");
  const invalid = (what: string) =>
    `invalid configmap:// credentialName: invalid resource name ${goQuote(credentialName)}. Expected ${what}`;
  if (name === undefined) return invalid("namespace and name");
  if (ns === "") return invalid("namespace");
  if (name === "") return invalid("name");
  return ns !== namespace || namespace === ""
    ? `invalid configmap:// credentialName: namespace must match the configuration namespace ${goQuote(namespace)}`
    : undefined;
}

/** Istio's ValidateTLS for client (upstream) TLS. `out` is at the tls field; absent is fine. */
export function validateClientTls(namespace: string, value: unknown, out: Findings): void {
  const tls = asObject(value);
  if (!tls) return;
  const mode = readEnum(field(tls, "mode"), CLIENT_TLS_MODE, out.at("mode"));
  const credentialName = stringField(tls, "credentialName");
  const caCertificates = stringField(tls, "caCertificates");
  const hasSubjectAltNames = listField(tls, "subjectAltNames") !== undefined;
  if (credentialName.startsWith(CONFIGMAP_PREFIX)) {
    report(out.at("credentialName"), configMapCredentialError(credentialName, namespace));
  }
  if (boolField(tls, "insecureSkipVerify")) {
    if (mode === "SIMPLE" && (caCertificates !== "" || credentialName !== "" || hasSubjectAltNames)) {
      out.error(
        "cannot specify CaCertificates or CredentialName or SubjectAltNames when InsecureSkipVerify is set true",
      );
    }
    if (mode === "MUTUAL" && (caCertificates !== "" || hasSubjectAltNames)) {
      out.error("cannot specify CaCertificates or SubjectAltNames when InsecureSkipVerify is set true");
    }
  }
  const clientCertificate = stringField(tls, "clientCertificate");
  const privateKey = stringField(tls, "privateKey");
  if ((mode === "SIMPLE" || mode === "MUTUAL") && credentialName !== "") {
    if (clientCertificate !== "" || caCertificates !== "" || privateKey !== "" || stringField(tls, "caCrl") !== "") {
      out.error("cannot specify client certificates or CA certificate or CA CRL If credentialName is set");
    }
    return;
  }
  if (mode === "MUTUAL") {
    if (clientCertificate === "") out.at("clientCertificate").error("client certificate required for mutual tls");
    if (privateKey === "") out.at("privateKey").error("private key required for mutual tls");
  }
}

/**
 * Istio's validateTrafficPolicy (DestinationRule and its subsets). `namespace` is the config's
 * namespace (client TLS configmap credentials). `out` is at the policy field; absent is fine.
 */
export function validateTrafficPolicy(namespace: string, value: unknown, out: Findings): void {
  const policy = asObject(value);
  if (!policy) return;
  const fields = [
    "outlierDetection",
    "connectionPool",
    "loadBalancer",
    "tls",
    "tunnel",
    "proxyProtocol",
    "retryBudget",
  ];
  if (!fields.some((f) => objectField(policy, f)) && !listField(policy, "portLevelSettings")) {
    out.error("traffic policy must have at least one field");
    return;
  }
  if (objectField(policy, "tunnel") && objectField(policy, "proxyProtocol")) {
    out.error("tunnel and proxyProtocol must not be set together");
    return;
  }
  validatePolicyParts(namespace, policy, out);
  validatePortTrafficPolicies(namespace, field(policy, "portLevelSettings"), out.at("portLevelSettings"));
  validateTunnel(field(policy, "tunnel"), out.at("tunnel"));
  const proxyProtocol = objectField(policy, "proxyProtocol");
  if (proxyProtocol) {
    const at = out.at("proxyProtocol.version");
    const version = readEnum(field(proxyProtocol, "version"), PROXY_PROTOCOL_VERSION, at);
    if (version !== undefined && version !== "V1" && version !== "V2") {
      at.error(`proxy protocol version is invalid: ${version}`);
    }
  }
  const retryBudget = objectField(policy, "retryBudget");
  if (retryBudget) decodeDurationField(retryBudget, "budgetInterval", out.at("retryBudget"));
}

// The four parts a policy and its port-level settings share.
function validatePolicyParts(namespace: string, policy: JsonObject, out: Findings): void {
  validateOutlierDetection(field(policy, "outlierDetection"), out.at("outlierDetection"));
  validateConnectionPool(field(policy, "connectionPool"), out.at("connectionPool"));
  validateLoadBalancer(
    field(policy, "loadBalancer"),
    objectField(policy, "outlierDetection") !== undefined,
    out.at("loadBalancer"),
  );
  validateClientTls(namespace, field(policy, "tls"), out.at("tls"));
}

function validatePortTrafficPolicies(namespace: string, value: unknown, out: Findings): void {
  forEachMessage(asList(value), out, "traffic policy may not be null", (policy, at) => {
    // The port number itself is not range-checked, as in Istio.
    if (!objectField(policy, "port")) at.error("portTrafficPolicy must have valid port");
    if (!["outlierDetection", "connectionPool", "loadBalancer", "tls"].some((f) => objectField(policy, f))) {
      at.error("port traffic policy must have at least one field");
      return;
    }
    validatePolicyParts(namespace, policy, at);
  });
}

function validateTunnel(value: unknown, out: Findings): void {
  const tunnel = asObject(value);
  if (!tunnel) return;
  const protocol = stringField(tunnel, "protocol");
  if (protocol !== "" && protocol !== "CONNECT" && protocol !== "POST") {
    out.at("protocol").error('tunnel protocol must be "CONNECT" or "POST"');
  }
  const host = stringField(tunnel, "targetHost");
  const hostError = fqdnError(host);
  const ipError = ipAddressError(host);
  if (hostError && ipError) {
    out.at("targetHost").error(`tunnel target host must be valid FQDN or IP address: ${hostError}; ${ipError}`);
  }
  const targetPortError = portError(numberField(tunnel, "targetPort"));
  if (targetPortError) out.at("targetPort").error(`tunnel target port is invalid: ${targetPortError}`);
}
