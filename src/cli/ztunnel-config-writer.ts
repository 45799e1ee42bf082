// istioctl's ztunnel config writer: the workload, service, policy, certificate and connection tables
// of a ztunnel config dump, their filters, and the same parts as JSON or YAML.
import { alignTabs } from "./proxy-config-tabwriter.ts";
import {
  CERTIFICATE,
  type Cert,
  type Connection,
  jsonToYaml,
  marshalIndent,
  POLICY,
  SERVICE,
  type Service,
  WORKLOAD,
  WORKLOAD_STATE,
  type Workload,
  type WorkloadState,
  type ZtunnelDump,
} from "./ztunnel-config-dump.ts";

export type ZtunnelOutputFormat = "short" | "json" | "yaml";

/** `workload`'s filters; each compares without regard to case, as istioctl's. */
export interface WorkloadFilter {
  address?: string;
  node?: string;
  namespace?: string;
  /** The pod the command was given, when it is a workload's (not a ztunnel's). */
  name?: string;
}

export interface ConnectionsFilter {
  namespace?: string;
  direction?: string;
  /** Addresses as they are, not the names of the services and workloads having them. */
  raw?: boolean;
  workload?: string;
}

const sameText = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const table = (rows: string[][], padding = 1) =>
  alignTabs(rows.map((r) => `${r.join("\t")}\n`).join(""), { minWidth: 0, padding });

/** What the dump parts print as with -o json or yaml (json.MarshalIndent, then JSONToYAML). */
function dumpOutput(json: string, format: ZtunnelOutputFormat): string {
  return `${format === "yaml" ? jsonToYaml(json) : json}\n`;
}

function matchesWorkload(filter: WorkloadFilter, w: Workload): boolean {
  if (filter.name && !sameText(w.name, filter.name)) return false;
  if (filter.namespace && !sameText(w.namespace, filter.namespace)) return false;
  if (filter.address && !(w.workloadIps ?? []).some((ip) => sameText(ip, filter.address ?? ""))) return false;
  return !filter.node || sameText(w.node, filter.node);
}

/** The service a waypoint address (`namespace/hostname` or a VIP) names; "None" without one. */
function waypointName(waypoint: { destination: string } | null, services: readonly Service[]): string {
  if (waypoint === null) return "None";
  const found = services.find(
    (s) => `${s.namespace}/${s.hostname}` === waypoint.destination || (s.vips ?? []).includes(waypoint.destination),
  );
  return found?.name ?? "NA";
}

export function workloadSummary(dump: ZtunnelDump, filter: WorkloadFilter): string {
  const key = (w: Workload) => `${w.namespace}.${w.name}`;
  const workloads = dump.workloads
    .filter((w) => matchesWorkload(filter, w))
    .sort((a, b) => compare(key(a), key(b)) || compare(a.node, b.node));
  const rows = [["NAMESPACE", "POD NAME", "ADDRESS", "NODE", "WAYPOINT", "PROTOCOL"]];
  for (const w of workloads) {
    const address = (w.workloadIps ?? []).join(",") || w.hostname;
    rows.push([w.namespace, w.name, address, w.node, waypointName(w.waypoint, dump.services), w.protocol]);
  }
  return table(rows);
}

export function workloadDump(dump: ZtunnelDump, filter: WorkloadFilter, format: ZtunnelOutputFormat): string {
  return dumpOutput(
    marshalIndent(
      dump.workloads.filter((w) => matchesWorkload(filter, w)),
      WORKLOAD,
    ),
    format,
  );
}

/** Services of `namespace` (all without one), by namespace, name and hostname. */
function sortedServices(dump: ZtunnelDump, namespace?: string): Service[] {
  return dump.services
    .filter((s) => !namespace || sameText(s.namespace, namespace))
    .sort((a, b) => compare(a.namespace, b.namespace) || compare(a.name, b.name) || compare(a.hostname, b.hostname));
}

export function serviceSummary(dump: ZtunnelDump, namespace?: string): string {
  const byUid = new Map(dump.workloads.map((w) => [w.uid, w]));
  const rows = [["NAMESPACE", "SERVICE NAME", "SERVICE VIP", "WAYPOINT", "ENDPOINTS"]];
  for (const s of sortedServices(dump, namespace)) {
    // A VIP is `network/address`.
    const vips = (s.vips ?? []).map((vip) => (vip.includes("/") ? vip.slice(vip.indexOf("/") + 1) : ""));
    const endpoints = [...(s.endpoints?.values() ?? [])];
    const healthy = endpoints.filter((e) => e !== null && byUid.get(e.workloadUid)?.status === "Healthy").length;
    rows.push([
      s.namespace,
      s.name,
      vips.join(","),
      waypointName(s.waypoint, dump.services),
      `${healthy}/${endpoints.length}`,
    ]);
  }
  return table(rows);
}

export function serviceDump(dump: ZtunnelDump, namespace: string | undefined, format: ZtunnelOutputFormat): string {
  return dumpOutput(marshalIndent(sortedServices(dump, namespace), SERVICE), format);
}

function sortedPolicies(dump: ZtunnelDump, namespace?: string) {
  return dump.policies
    .filter((p) => !namespace || sameText(p.namespace, namespace))
    .sort((a, b) => compare(a.namespace, b.namespace) || compare(a.name, b.name));
}

export function policySummary(dump: ZtunnelDump, namespace?: string): string {
  const rows = [["NAMESPACE", "POLICY NAME", "ACTION", "SCOPE"]];
  for (const p of sortedPolicies(dump, namespace)) rows.push([p.namespace, p.name, p.action, p.scope]);
  return table(rows);
}

export function policyDump(dump: ZtunnelDump, namespace: string | undefined, format: ZtunnelOutputFormat): string {
  return dumpOutput(marshalIndent(sortedPolicies(dump, namespace), POLICY), format);
}

const orNA = (value: string) => value || "NA";

/** A decimal serial number in hex, as Go's %x of a big.Int ("<nil>" when it is not a number). */
function serialHex(serial: string): string {
  return /^[+-]?\d+$/.test(serial) ? BigInt(serial).toString(16) : "<nil>";
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)$/;

/** Whether now is within the certificate's validity; false when its times are missing or unreadable. */
function certValid(cert: Cert, now: number): boolean {
  if (!RFC3339.test(cert.expirationTime) || !RFC3339.test(cert.validFrom)) return false;
  return now > Date.parse(cert.validFrom) && now < Date.parse(cert.expirationTime);
}

export function certificateSummary(dump: ZtunnelDump, now = Date.now()): string {
  const rows = [["CERTIFICATE NAME", "TYPE", "STATUS", "VALID CERT", "SERIAL NUMBER", "NOT AFTER", "NOT BEFORE"]];
  for (const secret of dump.certificates ?? []) {
    const state = secret.state.includes("Unavailable") ? "Unavailable" : secret.state;
    const chain = secret.certChain ?? [];
    const roots = secret.rootCerts ?? [];
    if (chain.length === 0) {
      rows.push([secret.identity, "NA", state, "false", "NA", "NA", "NA"]);
      continue;
    }
    const row = (cert: Cert | null, type: string) => {
      const c = cert ?? { serialNumber: "", validFrom: "", expirationTime: "" };
      rows.push([
        secret.identity,
        type,
        state,
        String(certValid(c, now)),
        serialHex(c.serialNumber),
        orNA(c.expirationTime),
        orNA(c.validFrom),
      ]);
    };
    // Before ztunnel listed roots apart, the last of the chain was the root.
    const legacy = roots.length === 0;
    for (const [i, cert] of chain.entries()) {
      row(cert, i === 0 ? "Leaf" : i === chain.length - 1 && legacy ? "Root" : "Intermediate");
    }
    for (const cert of roots) row(cert, "Root");
  }
  return table(rows, 5);
}

export function certificateDump(dump: ZtunnelDump, format: ZtunnelOutputFormat): string {
  return dumpOutput(marshalIndent(dump.certificates, CERTIFICATE), format);
}

/** `workload` given as `name.namespace` (with no namespace filter) is split into both. */
function normalized(filter: ConnectionsFilter): ConnectionsFilter {
  if (filter.workload && !filter.namespace && filter.workload.includes(".")) {
    const dot = filter.workload.indexOf(".");
    return { ...filter, workload: filter.workload.slice(0, dot), namespace: filter.workload.slice(dot + 1) };
  }
  return filter;
}

function selectedStates(dump: ZtunnelDump, filter: ConnectionsFilter): WorkloadState[] {
  return [...(dump.workloadState?.values() ?? [])]
    .sort((a, b) => compare(a.info.namespace, b.info.namespace) || compare(a.info.name, b.info.name))
    .filter(
      (s) =>
        (!filter.namespace || filter.namespace === s.info.namespace) &&
        (!filter.workload || sameText(filter.workload, s.info.name)),
    );
}

/** Go's net.SplitHostPort; undefined when `address` is not host:port. */
function splitHostPort(address: string): { host: string; port: string } | undefined {
  const colon = address.lastIndexOf(":");
  if (colon < 0) return undefined;
  const port = address.slice(colon + 1);
  if (address.startsWith("[")) {
    return address[colon - 1] === "]" ? { host: address.slice(1, colon - 1), port } : undefined;
  }
  const host = address.slice(0, colon);
  return host.includes(":") || host.includes("[") || host.includes("]") ? undefined : { host, port };
}

const joinHostPort = (host: string, port: string) => (host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);

export function connectionsSummary(dump: ZtunnelDump, given: ConnectionsFilter): string {
  const filter = normalized(given);
  const names = new Map<string, string>();
  // A service's first VIP names it, else a workload's first address names it (or "None").
  const workloadNames = new Map<string, string>();
  for (const s of dump.services) {
    const first = s.vips?.[0] ?? "";
    const ip = first.includes("/") ? first.slice(first.indexOf("/") + 1) : "";
    names.set(ip || "None", s.hostname);
  }
  for (const w of dump.workloads) workloadNames.set(w.workloadIps?.[0] || "None", `${w.name}.${w.namespace}`);
  const named = (address: string) => {
    if (filter.raw) return address;
    const split = splitHostPort(address) ?? { host: "", port: "" };
    const name = names.get(split.host) ?? workloadNames.get(split.host);
    return name === undefined ? address : joinHostPort(name, split.port);
  };
  const rows = [["WORKLOAD", "DIRECTION", "LOCAL", "REMOTE", "REMOTE TARGET", "PROTOCOL"]];
  for (const state of selectedStates(dump, filter)) {
    const workload = `${state.info.name}.${state.info.namespace}`;
    const add = (direction: string, c: Connection, local: string, remote: string, target: string) =>
      rows.push([workload, direction, local, remote, target, c.protocol]);
    if (filter.direction !== "outbound") {
      for (const c of state.connections.inbound ?? [])
        add("Inbound", c, named(c.actualDst), named(c.src), c.originalDst);
    }
    if (filter.direction !== "inbound") {
      for (const c of state.connections.outbound ?? [])
        add("Outbound", c, named(c.src), named(c.actualDst), named(c.originalDst));
    }
  }
  return table(rows);
}

export function connectionsDump(dump: ZtunnelDump, filter: ConnectionsFilter, format: ZtunnelOutputFormat): string {
  const states = selectedStates(dump, normalized(filter));
  return dumpOutput(marshalIndent(states, WORKLOAD_STATE), format);
}

/** `all`: every table, each after an empty line (and a title with `withHeaders`). */
export function fullSummary(dump: ZtunnelDump, withHeaders: boolean): string {
  const part = (title: string, text: string) => `\n${withHeaders ? `------ ${title} ------\n\n` : ""}${text}`;
  return [
    part("WORKLOAD INFO", workloadSummary(dump, {})),
    part("SERVICE INFO", serviceSummary(dump)),
    part("POLICY INFO", policySummary(dump)),
    part("SECRET INFO", certificateSummary(dump)),
    part("CONNECTIONS INFO", connectionsSummary(dump, {})),
  ].join("");
}

/** `all -o json|yaml`: the dump as read (JSON), or converted to YAML. */
export function fullDump(dump: ZtunnelDump, format: ZtunnelOutputFormat): string {
  return dumpOutput(dump.raw, format);
}
