// istioctl's proxy-config writers (istioctl/pkg/writer/envoy/configdump and compare/sds): summary
// tables of an Envoy admin ConfigDump. The dump is read as JSON, accepting Envoy's snake_case field
// names and proto3 JSON's lowerCamelCase alike, so dumps holding types this build does not know
// still print.
import { X509Certificate } from "node:crypto";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { alignTabs } from "./proxy-config-tabwriter.ts";

/** An Envoy admin ConfigDump as JSON. */
export interface ConfigDump {
  configs: JsonObject[];
}

const WIDE = { minWidth: 0, padding: 5 };
const NARROW = { minWidth: 0, padding: 1 };

/** Parses `/config_dump` output; throws a one-line error for anything else. */
export function parseConfigDump(text: string): ConfigDump {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`error unmarshalling config dump response from Envoy: ${(err as Error).message}`);
  }
  const configs = isObject(parsed) ? parsed.configs : undefined;
  if (!Array.isArray(configs)) throw new Error("error unmarshalling config dump response from Envoy: no configs");
  return { configs: configs.filter(isObject) };
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function camel(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** A field by its proto name, in either JSON spelling. */
export function field(o: JsonValue | undefined, name: string): JsonValue | undefined {
  if (!isObject(o)) return undefined;
  return o[name] ?? o[camel(name)];
}

export function obj(o: JsonValue | undefined, name: string): JsonObject | undefined {
  const v = field(o, name);
  return isObject(v) ? v : undefined;
}

export function list(o: JsonValue | undefined, name: string): JsonValue[] {
  const v = field(o, name);
  return Array.isArray(v) ? v : [];
}

export function text(o: JsonValue | undefined, name: string): string {
  const v = field(o, name);
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : "";
}

function num(o: JsonValue | undefined, name: string): number {
  const v = field(o, name);
  return typeof v === "number" ? v : typeof v === "string" && v !== "" ? Number(v) : 0;
}

/** The config of the dump whose type is `envoy.admin.v3.<kind>`. */
function section(dump: ConfigDump, kind: string): JsonObject | undefined {
  return dump.configs.find((c) => c["@type"] === `type.googleapis.com/envoy.admin.v3.${kind}`);
}

function requireSection(dump: ConfigDump, kind: string): JsonObject {
  const s = section(dump, kind);
  if (!s) throw new Error(`config dump has no ${kind}`);
  return s;
}

function table(rows: string[][], options: { minWidth: number; padding: number }): string {
  return alignTabs(rows.map((r) => `${r.join("\t")}\n`).join(""), options);
}

// Go's sort.Slice on the short lists these are: insertion sort, so equal elements keep their order.
function insertionSort<T>(items: T[], less: (a: T, b: T) => boolean): T[] {
  const out = [...items];
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && less(out[j], out[j - 1]); j--) [out[j - 1], out[j]] = [out[j], out[j - 1]];
  }
  return out;
}

// ---- clusters

export interface ClusterFilter {
  fqdn?: string;
  port?: number;
  subset?: string;
  direction?: string;
}

function clusterMatches(name: string, f: ClusterFilter): boolean {
  if (f.fqdn && !name.includes(f.fqdn)) return false;
  if (f.direction && !name.includes(f.direction)) return false;
  if (f.subset && !name.includes(f.subset)) return false;
  if (f.port && !name.includes(`|${f.port}|`)) return false;
  return true;
}

/** Istio's ParseSubsetKey on `direction|port|subset|host`; other names are just a host. */
function subsetKey(name: string): { direction: string; port: number; subset: string; host: string } {
  const parts = name.split("|");
  if (parts.length <= 3) return { direction: "", port: 0, subset: "", host: name };
  return { direction: parts[0], port: Number.parseInt(parts[1], 10) || 0, subset: parts[2], host: parts[3] };
}

function bySubsetKey(a: string, b: string): boolean {
  const x = subsetKey(a);
  const y = subsetKey(b);
  if (x.host !== y.host) return x.host < y.host;
  if (x.subset !== y.subset) return x.subset < y.subset;
  if (x.port !== y.port) return x.port < y.port;
  return x.direction < y.direction;
}

/** The dump's clusters (dynamic active, then static), sorted as istioctl sorts them. */
export function dumpClusters(dump: ConfigDump): JsonObject[] {
  const s = requireSection(dump, "ClustersConfigDump");
  const clusters = [...list(s, "dynamic_active_clusters"), ...list(s, "static_clusters")]
    .map((c) => obj(c, "cluster"))
    .filter((c): c is JsonObject => c !== undefined);
  if (clusters.length === 0) throw new Error("no clusters found");
  return insertionSort(clusters, (a, b) => bySubsetKey(text(a, "name"), text(b, "name")));
}

export function filterClusters(dump: ConfigDump, filter: ClusterFilter): JsonObject[] {
  return dumpClusters(dump).filter((c) => clusterMatches(text(c, "name"), filter));
}

function clusterType(c: JsonObject): string {
  const t = field(c, "type");
  return typeof t === "string"
    ? t
    : (["STATIC", "STRICT_DNS", "LOGICAL_DNS", "EDS", "ORIGINAL_DST"][Number(t ?? 0)] ?? "");
}

/** Istio's describeManagement: the config named in `filter_metadata.istio.config`. */
function describeManagement(metadata: JsonObject | undefined): string {
  const config = text(obj(obj(metadata, "filter_metadata"), "istio"), "config");
  if (config === "") return "";
  if (!config.startsWith("/apis/networking.istio.io/")) return "<unknown>";
  const pieces = config.split("/");
  return pieces.length === 8 ? `${pieces[7]}.${pieces[5]}` : "";
}

export function clusterSummary(dump: ConfigDump, filter: ClusterFilter, withType: boolean): string {
  const rows = [
    withType
      ? ["NAME", "SERVICE FQDN", "PORT", "SUBSET", "DIRECTION", "TYPE", "DESTINATION RULE"]
      : ["SERVICE FQDN", "PORT", "SUBSET", "DIRECTION", "TYPE", "DESTINATION RULE"],
  ];
  for (const c of filterClusters(dump, filter)) {
    const name = text(c, "name");
    const management = describeManagement(obj(c, "metadata"));
    if (name.split("|").length > 3) {
      const k = subsetKey(name);
      const cells = [k.host, String(k.port), k.subset || "-", k.direction, clusterType(c), management];
      rows.push(withType ? [`cluster/${name}`, ...cells] : cells);
    } else if (withType && name !== "") {
      rows.push([`cluster/${name}`, `cluster/${name}`, "-", "-", "-", clusterType(c), management]);
    } else {
      rows.push([name, "-", "-", "-", clusterType(c), management]);
    }
  }
  return table(rows, WIDE);
}

// ---- listeners

export interface ListenerFilter {
  address?: string;
  port?: number;
  type?: string;
  verbose: boolean;
}

const HTTP_FILTER = "envoy.filters.network.http_connection_manager";
const TCP_FILTER = "envoy.filters.network.tcp_proxy";

export function dumpListeners(dump: ConfigDump): JsonObject[] {
  const s = section(dump, "ListenersConfigDump");
  if (!s) throw new Error("listener dump: config dump has no ListenersConfigDump");
  const listeners = [
    ...list(s, "dynamic_listeners").map((l) => obj(obj(l, "active_state"), "listener")),
    ...list(s, "static_listeners").map((l) => obj(l, "listener")),
  ].filter((l): l is JsonObject => l !== undefined);
  if (listeners.length === 0) throw new Error("no listeners found");
  return listeners;
}

function listenerAddress(l: JsonObject): string {
  const address = obj(l, "address");
  const socket = obj(address, "socket_address");
  if (socket) return text(socket, "address");
  return text(obj(address, "pipe"), "path");
}

function listenerAdditionalAddresses(l: JsonObject): string[] {
  return list(l, "additional_addresses").map((a) => text(obj(obj(a, "address"), "socket_address"), "address"));
}

function listenerPort(l: JsonObject): number {
  return num(obj(obj(l, "address"), "socket_address"), "port_value");
}

function filterChains(l: JsonObject): JsonValue[] {
  const chains = list(l, "filter_chains");
  const fallback = obj(l, "default_filter_chain");
  return fallback ? [...chains, fallback] : chains;
}

function isBlackHole(filter: JsonValue): boolean {
  return JSON.stringify(field(filter, "typed_config") ?? null).includes("BlackHoleCluster");
}

function listenerType(l: JsonObject): string {
  let http = 0;
  let tcp = 0;
  for (const chain of filterChains(l)) {
    for (const f of list(chain, "filters")) {
      if (text(f, "name") === HTTP_FILTER) http++;
      else if (text(f, "name") === TCP_FILTER && !isBlackHole(f)) tcp++;
    }
  }
  if (http > 0) return tcp === 0 ? "HTTP" : "HTTP+TCP";
  return tcp > 0 ? "TCP" : "UNKNOWN";
}

function listenerMatches(l: JsonObject, f: ListenerFilter): boolean {
  if (f.address) {
    const addresses = [...listenerAdditionalAddresses(l), listenerAddress(l)];
    if (!addresses.some((a) => a.toLowerCase() === f.address?.toLowerCase())) return false;
  }
  if (f.port && listenerPort(l) !== f.port) return false;
  if (f.type && listenerType(l).toLowerCase() !== f.type.toLowerCase()) return false;
  return true;
}

const ALPN_DESCRIPTIONS: [string, string[]][] = [
  ["App: HTTP TLS", ["http/1.0", "http/1.1", "h2c", "istio-http/1.0", "istio-http/1.1", "istio-h2"]],
  ["App: Istio HTTP Plain", ["istio", "istio-http/1.0", "istio-http/1.1", "istio-h2"]],
  ["App: TCP TLS", ["istio-peer-exchange", "istio"]],
  ["App: HTTP", ["http/1.0", "http/1.1", "h2c"]],
];

function describeChainMatch(match: JsonObject | undefined): string {
  const descriptions: string[] = [];
  const serverNames = list(match, "server_names").map(String);
  if (serverNames.length > 0) descriptions.push(`SNI: ${serverNames.join(",")}`);
  const transport = text(match, "transport_protocol");
  if (transport) descriptions.push(`Trans: ${transport}`);
  const alpns = list(match, "application_protocols").map(String);
  if (alpns.length > 0) {
    const known = ALPN_DESCRIPTIONS.find(([, p]) => p.length === alpns.length && p.every((a, i) => a === alpns[i]));
    descriptions.push(known ? known[0] : `App: ${alpns.join(",")}`);
  }
  const destinationPort = field(match, "destination_port");
  const port =
    destinationPort === undefined
      ? ""
      : `:${typeof destinationPort === "object" ? num(destinationPort, "value") : destinationPort}`;
  const ranges = list(match, "prefix_ranges");
  if (ranges.length > 0) {
    const prefixes = ranges.map((r) => `${text(r, "address_prefix")}/${num(r, "prefix_len")}`);
    descriptions.push(`Addr: ${prefixes.join(",")}${port}`);
  } else if (port !== "") {
    descriptions.push(`Addr: *${port}`);
  }
  return descriptions.length === 0 ? "ALL" : descriptions.join("; ");
}

function clusterDestination(cluster: string): string {
  return cluster.includes("Cluster") ? cluster : `Cluster: ${cluster}`;
}

/** The routes' match descriptions (istioctl's describeMatch). */
function describeMatch(match: JsonObject | undefined): string {
  const conditions: string[] = [];
  if (text(match, "prefix")) conditions.push(`${text(match, "prefix")}*`);
  if (text(match, "path_separated_prefix")) conditions.push(`PathPrefix:${text(match, "path_separated_prefix")}`);
  if (text(match, "path")) conditions.push(text(match, "path"));
  const regex = obj(match, "safe_regex");
  if (regex) conditions.push(`regex ${text(regex, "regex")}`);
  return conditions.join(" ");
}

function describeInlineRoute(routeConfig: JsonObject): string {
  const vhosts = list(routeConfig, "virtual_hosts");
  if (vhosts.length === 1) {
    const domains = list(vhosts[0], "domains");
    const routes = list(vhosts[0], "routes");
    const cluster = text(obj(routes[0], "route"), "cluster");
    if (
      domains.length === 1 &&
      domains[0] === "*" &&
      routes.length === 1 &&
      text(obj(routes[0], "match"), "prefix") === "/" &&
      cluster
    ) {
      return clusterDestination(cluster);
    }
  }
  const described = vhosts.map((vh) => {
    const domains = list(vh, "domains").map(String);
    const routes = list(vh, "routes")
      .map((r) => describeMatch(obj(r, "match")))
      .join(", ");
    return domains.length === 1 && domains[0] === "*" ? routes : `${domains.join("/")} ${routes}`;
  });
  return `Inline Route: ${described.join("; ")}`;
}

function describeFilters(filters: JsonValue[]): string {
  for (const f of filters) {
    const config = obj(f, "typed_config");
    if (text(f, "name") === HTTP_FILTER) {
      const inline = obj(config, "route_config");
      if (inline) return describeInlineRoute(inline);
      const rds = text(obj(config, "rds"), "route_config_name");
      return rds ? `Route: ${rds}` : "HTTP";
    }
    if (text(f, "name") === TCP_FILTER && !isBlackHole(f)) return clusterDestination(text(config, "cluster"));
  }
  return "Non-HTTP/Non-TCP";
}

export function filterListeners(dump: ConfigDump, filter: ListenerFilter): JsonObject[] {
  return dumpListeners(dump).filter((l) => listenerMatches(l, filter));
}

export function listenerSummary(dump: ConfigDump, filter: ListenerFilter, withType: boolean): string {
  const listeners = insertionSort(filterListeners(dump, filter), (a, b) => {
    if (listenerPort(a) !== listenerPort(b)) return listenerPort(a) < listenerPort(b);
    if (listenerAddress(a) !== listenerAddress(b)) return listenerAddress(a) < listenerAddress(b);
    return listenerType(a) < listenerType(b);
  });
  const header = [
    ...(withType ? ["NAME"] : []),
    "ADDRESSES",
    "PORT",
    ...(filter.verbose ? ["MATCH", "DESTINATION"] : ["TYPE"]),
  ];
  const rows = [header];
  for (const l of listeners) {
    const name = withType ? [`listener/${text(l, "name")}`] : [];
    const addresses = [listenerAddress(l), ...listenerAdditionalAddresses(l)].join(",");
    const port = String(listenerPort(l));
    if (!filter.verbose) {
      rows.push([...name, addresses, port, listenerType(l)]);
      continue;
    }
    const chains = filterChains(l).map((c) => ({
      match: describeChainMatch(obj(c, "filter_chain_match")),
      destination: describeFilters(list(c, "filters")),
    }));
    for (const chain of insertionSort(chains, (a, b) => a.destination > b.destination)) {
      rows.push([...name, addresses, port, chain.match, chain.destination]);
    }
  }
  return table(rows, NARROW);
}

// ---- routes

export interface RouteFilter {
  name?: string;
  verbose: boolean;
}

export function filterRoutes(dump: ConfigDump, filter: RouteFilter): JsonObject[] {
  const s = requireSection(dump, "RoutesConfigDump");
  const routes = [...list(s, "dynamic_route_configs"), ...list(s, "static_route_configs")]
    .map((r) => obj(r, "route_config"))
    .filter((r): r is JsonObject => r !== undefined);
  if (routes.length === 0) throw new Error("no routes found");
  // istioctl orders numeric route names (ports) numerically and leaves others where they are.
  const sorted = insertionSort(routes, (a, b) => {
    const x = Number(text(a, "name"));
    const y = Number(text(b, "name"));
    return /^\d+$/.test(text(a, "name")) && /^\d+$/.test(text(b, "name")) && x < y;
  });
  return sorted.filter((r) => !filter.name || text(r, "name") === filter.name);
}

/** istioctl's describeRouteDomains: the domains without ports, short forms over long, two at most. */
export function describeRouteDomains(domains: string[]): string {
  if (domains.length <= 1) return domains[0] ?? "";
  const withoutPort = domains.filter((d) => !d.includes(":") || ((d.match(/:/g)?.length ?? 0) > 2 && d.endsWith("]")));
  const unique = new Set(withoutPort);
  const longForms = new Set(
    withoutPort.filter((h) =>
      [h.replace(/\.svc\.cluster\.local$/, ""), h.replace(/\.svc$/, "")].some((s) => s !== h && unique.has(s)),
    ),
  );
  const shown = withoutPort.filter((h) => !longForms.has(h));
  if (shown.length > 2) return `${shown.slice(0, 2).join(", ")} + ${shown.length - 2} more...`;
  return shown.join(", ");
}

export function routeSummary(dump: ConfigDump, filter: RouteFilter, withType: boolean): string {
  const rows = [
    filter.verbose ? ["NAME", "VHOST NAME", "DOMAINS", "MATCH", "VIRTUAL SERVICE"] : ["NAME", "VIRTUAL HOSTS"],
  ];
  for (const r of filterRoutes(dump, filter)) {
    const name = withType ? `route/${text(r, "name")}` : text(r, "name");
    const vhosts = list(r, "virtual_hosts");
    if (!filter.verbose) {
      rows.push([name, String(vhosts.length)]);
      continue;
    }
    for (const vh of vhosts) {
      const domains = describeRouteDomains(list(vh, "domains").map(String));
      const routes = list(vh, "routes");
      for (const route of routes) {
        if (text(obj(route, "route"), "cluster") === "PassthroughCluster") continue;
        rows.push([
          name,
          text(vh, "name"),
          domains,
          describeMatch(obj(route, "match")),
          describeManagement(obj(route, "metadata")),
        ]);
      }
      if (routes.length === 0) rows.push([name, text(vh, "name"), domains, "/*", "404"]);
    }
  }
  return table(rows, WIDE);
}

// ---- endpoints

export interface EndpointFilter {
  address?: string;
  port?: number;
  cluster?: string;
  status?: string;
}

const HEALTH_STATUS = ["UNKNOWN", "HEALTHY", "UNHEALTHY", "DRAINING", "TIMEOUT", "DEGRADED"];

function healthStatus(ep: JsonValue): string {
  const s = field(ep, "health_status");
  return typeof s === "string" ? s : (HEALTH_STATUS[Number(s ?? 0)] ?? String(s));
}

function endpointAddresses(ep: JsonValue): string[] {
  const endpoint = obj(ep, "endpoint");
  const addresses = [obj(endpoint, "address"), ...list(endpoint, "additional_addresses").map((a) => obj(a, "address"))];
  return addresses.map((address) => {
    const socket = obj(address, "socket_address");
    if (socket) return `${text(socket, "address")}:${num(socket, "port_value")}`;
    const pipe = obj(address, "pipe");
    if (pipe) return text(pipe, "path");
    const internal = obj(address, "envoy_internal_address");
    const listener = text(internal, "server_listener_name");
    if (listener) return `envoy://${listener}/${text(internal, "endpoint_id")}`;
    return "unknown";
  });
}

function endpointMatches(ep: JsonValue, cluster: string, f: EndpointFilter): boolean {
  if (f.address && !endpointAddresses(ep).some((a) => a.toLowerCase() === f.address?.toLowerCase())) return false;
  if (f.port && num(obj(obj(obj(ep, "endpoint"), "address"), "socket_address"), "port_value") !== f.port) return false;
  if (f.cluster && cluster.toLowerCase() !== f.cluster.toLowerCase()) return false;
  if (f.status && healthStatus(ep).toLowerCase() !== f.status.toLowerCase()) return false;
  return true;
}

function localityString(locality: JsonObject | undefined): string {
  if (!locality) return "";
  const parts = [text(locality, "region"), text(locality, "zone"), text(locality, "sub_zone")];
  if (parts[1] === "") return parts[0];
  return parts[2] === "" ? `${parts[0]}/${parts[1]}` : parts.join("/");
}

/** The load assignments with the endpoints the filter keeps (those left with none are dropped). */
export function filterEndpoints(dump: ConfigDump, filter: EndpointFilter): JsonObject[] {
  const s = section(dump, "EndpointsConfigDump");
  if (!s) return [];
  const assignments: JsonObject[] = [];
  for (const config of [...list(s, "dynamic_endpoint_configs"), ...list(s, "static_endpoint_configs")]) {
    const cla = obj(config, "endpoint_config");
    if (!cla) continue;
    const cluster = text(cla, "cluster_name");
    let kept = 0;
    const endpoints = list(cla, "endpoints").map((llb) => {
      const lbEndpoints = list(llb, "lb_endpoints").filter((ep) => endpointMatches(ep, cluster, filter));
      kept += lbEndpoints.length;
      return { ...(llb as JsonObject), lb_endpoints: lbEndpoints };
    });
    if (kept > 0) assignments.push({ ...cla, endpoints });
  }
  return insertionSort(assignments, (a, b) => bySubsetKey(text(a, "cluster_name"), text(b, "cluster_name")));
}

export function endpointSummary(dump: ConfigDump, filter: EndpointFilter, withType: boolean): string {
  const rows = [["NAME", "STATUS", "LOCALITY", "CLUSTER"]];
  for (const cla of filterEndpoints(dump, filter)) {
    for (const llb of list(cla, "endpoints")) {
      for (const ep of list(llb, "lb_endpoints")) {
        const address = endpointAddresses(ep).join(",");
        rows.push([
          withType ? `endpoint/${address}` : address,
          healthStatus(ep),
          localityString(obj(llb, "locality")),
          text(cla, "cluster_name"),
        ]);
      }
    }
  }
  return table(rows, WIDE);
}

// ---- secrets

interface SecretItem {
  name: string;
  state: string;
  type: string;
  valid: boolean;
  serialNumber: string;
  notAfter: string;
  notBefore: string;
  trustDomain: string;
}

function rfc3339(date: string): string {
  return new Date(date).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function secretItem(name: string, state: string, pem: string, trustDomain: string, now: Date): SecretItem {
  const item = { name, state, type: "", valid: false, serialNumber: "", notAfter: "", notBefore: "", trustDomain: "" };
  if (pem === "") return item;
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch {
    return item;
  }
  const spiffe = (cert.subjectAltName ?? "")
    .split(", ")
    .filter((san) => san.startsWith("URI:spiffe://"))
    .map((san) => new URL(san.slice("URI:".length)).host);
  const notBefore = new Date(cert.validFrom);
  const notAfter = new Date(cert.validTo);
  return {
    ...item,
    type: cert.ca ? "CA" : "Cert Chain",
    valid: now > notBefore && now < notAfter,
    serialNumber: cert.serialNumber.toLowerCase().replace(/^0+/, "").padStart(32, "0"),
    notAfter: rfc3339(cert.validTo),
    notBefore: rfc3339(cert.validFrom),
    trustDomain: trustDomain || (spiffe.at(-1) ?? ""),
  };
}

function inlineBytes(source: JsonObject | undefined): string {
  const b64 = text(source, "inline_bytes");
  return b64 ? Buffer.from(b64, "base64").toString("utf8") : "";
}

function dynamicSecretItems(dynamicSecret: JsonValue, state: string, now: Date): SecretItem[] {
  const name = text(dynamicSecret, "name");
  const secret = obj(dynamicSecret, "secret");
  const chain = inlineBytes(obj(obj(secret, "tls_certificate"), "certificate_chain"));
  const validation = obj(secret, "validation_context");
  const ca = inlineBytes(obj(validation, "trusted_ca"));
  if (chain || ca) return [secretItem(name, state, chain || ca, "", now)];
  const validator = obj(obj(validation, "custom_validator_config"), "typed_config");
  if (
    validator?.["@type"] === "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.SPIFFECertValidatorConfig"
  ) {
    return list(validator, "trust_domains").map((td) =>
      secretItem(text(secret, "name"), state, inlineBytes(obj(td, "trust_bundle")), text(td, "name"), now),
    );
  }
  return [secretItem(name, state, "", "", now)];
}

export function secretSummary(dump: ConfigDump, withType: boolean, now: Date = new Date()): string {
  const s = requireSection(dump, "SecretsConfigDump");
  const warming = list(s, "dynamic_warming_secrets");
  const active = list(s, "dynamic_active_secrets");
  if (warming.length === 0 && active.length === 0) return "No active or warming secrets found.\n";
  const items = [
    ...warming.flatMap((w) => dynamicSecretItems(w, "WARMING", now)),
    ...active.flatMap((a) => dynamicSecretItems(a, "ACTIVE", now)),
  ];
  if (items.length === 0) return "No secret items to show.\n";
  const withTrustDomain = items.every((i) => i.trustDomain !== "");
  const header = ["RESOURCE NAME", "TYPE", "STATUS", "VALID CERT", "SERIAL NUMBER", "NOT AFTER", "NOT BEFORE"];
  const rows = [withTrustDomain ? [...header, "TRUST DOMAIN"] : header];
  for (const i of items) {
    const cells = [
      withType ? `secret/${i.name}` : i.name,
      i.type,
      i.state,
      String(i.valid),
      i.serialNumber,
      i.notAfter,
      i.notBefore,
    ];
    rows.push(withTrustDomain ? [...cells, i.trustDomain] : cells);
  }
  return table(rows, WIDE);
}

// ---- ECDS and bootstrap

export function ecdsSummary(dump: ConfigDump): string {
  // Envoy writes one EcdsConfigDump per filter type; istioctl reads them as one.
  const sections = dump.configs.filter((c) => c["@type"] === "type.googleapis.com/envoy.admin.v3.EcdsConfigDump");
  if (sections.length === 0) throw new Error("config dump has no EcdsConfigDump");
  const configs = sections.flatMap((s) => list(s, "ecds_filters").map((f) => obj(f, "ecds_filter") ?? {}));
  const typeOf = (c: JsonObject) => text(obj(c, "typed_config"), "@type");
  const sorted = insertionSort(configs, (a, b) =>
    typeOf(a) === typeOf(b) ? text(a, "name") < text(b, "name") : typeOf(a) < typeOf(b),
  );
  const rows = [
    ["ECDS NAME", "TYPE"],
    ...sorted.map((c) => [text(c, "name"), typeOf(c).replace(/^type\.googleapis\.com\//, "")]),
  ];
  return table(rows, WIDE);
}

export function bootstrapOf(dump: ConfigDump): JsonObject {
  return requireSection(dump, "BootstrapConfigDump");
}

export function bootstrapSummary(dump: ConfigDump): string {
  const node = obj(obj(bootstrapOf(dump), "bootstrap"), "node");
  const metadata = obj(node, "metadata");
  const istioVersion = text(metadata, "ISTIO_VERSION");
  const sha = text(metadata, "ISTIO_PROXY_SHA");
  const shaParts = sha.split(":");
  const build = obj(node, "user_agent_build_version");
  const version = obj(build, "version");
  const buildMetadata = obj(build, "metadata");
  let envoy = `${num(version, "major_number")}.${num(version, "minor_number")}.${num(version, "patch")}`;
  const label = field(buildMetadata, "build.label");
  if (label !== undefined) envoy += `-${String(label)}`;
  for (const key of ["revision.status", "build.type", "ssl.version"]) {
    const value = field(buildMetadata, key);
    if (value !== undefined) envoy += `/${String(value)}`;
  }
  const rows: string[][] = [];
  if (istioVersion) rows.push(["Istio Version:", istioVersion]);
  if (sha) rows.push(["Istio Proxy Version:", shaParts.length > 1 ? shaParts[1] : sha]);
  rows.push(["Envoy Version:", envoy]);
  return table(rows, NARROW);
}

export interface FullSummaryFilters {
  cluster: ClusterFilter;
  listener: ListenerFilter;
  route: RouteFilter;
  endpoint: EndpointFilter;
}

/** `proxy-config all`: every summary with its type prefix, optionally under headers. */
export function fullSummary(
  dump: ConfigDump,
  filters: FullSummaryFilters,
  withHeaders: boolean,
  now = new Date(),
): string {
  const parts: [string, () => string][] = [
    ["BOOTSTRAP INFO", () => bootstrapSummary(dump)],
    ["CLUSTER INFO", () => clusterSummary(dump, filters.cluster, true)],
    ["LISTENER INFO", () => listenerSummary(dump, filters.listener, true)],
    ["ROUTE INFO", () => routeSummary(dump, filters.route, true)],
    ["SECRET INFO", () => secretSummary(dump, true, now)],
    ["ENDPOINTS INFO", () => endpointSummary(dump, filters.endpoint, true)],
  ];
  return parts.map(([title, write]) => `${withHeaders ? `------ ${title} ------\n\n` : ""}${write()}`).join("\n");
}
