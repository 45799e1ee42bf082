// Which pods and namespaces `sluice bug-report` collects, from istioctl's --include and --exclude
// specs: `ns1,ns2/dep1,dep2/pod1,pod2/lbl1=val1,lbl2=val2/ann1=val1/cntr1,cntr2`, every part optional,
// names (and label and annotation values) glob patterns. A container is selected when it matches one
// include spec and no exclude spec; a spec matches when each part it sets matches (a list: any of its
// names; labels and annotations: all of them). Also istioctl's processlog: the logs' time range, and
// the error counts (with --critical-errs and --ignore-errs) that rate a log's importance.

/** istioctl's inject.IgnoredNamespaces: always excluded from the pods whose logs and state are collected. */
export const IGNORED_NAMESPACES: readonly string[] = [
  "kube-node-lease",
  "kube-public",
  "kube-system",
  "local-path-storage",
];

export interface SelectionSpec {
  namespaces: string[];
  deployments: string[];
  pods: string[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  containers: string[];
}

/** One container of a pod, where istioctl's resource tree puts it: namespace/deployment/pod/container. */
export interface ContainerPath {
  namespace: string;
  /** The Deployment (through its ReplicaSet) or DaemonSet owning the pod. */
  deployment: string;
  pod: string;
  container: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** A spec as istioctl's SelectionSpec.UnmarshalJSON reads it; a bad label or annotation part throws. */
export function parseSelectionSpec(text: string): SelectionSpec {
  const [namespaces = "", deployments = "", pods = "", labels = "", annotations = "", containers = ""] =
    text.split("/");
  return {
    namespaces: names(namespaces),
    deployments: names(deployments),
    pods: names(pods),
    labels: keyValues(labels),
    annotations: keyValues(annotations),
    containers: names(containers),
  };
}

function names(part: string): string[] {
  return part.trim() === "*" || part === "" ? [] : part.split(",");
}

function keyValues(part: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (part.trim() === "*") return out;
  for (const pair of part.split(",")) {
    if (pair === "") continue;
    const kv = pair.split("=");
    if (kv.length !== 2) throw new Error(`bad label/annotation selection ${pair}, must have format key=value`);
    if (kv[0].includes("*")) throw new Error(`bad label/annotation selection ${pair}, key cannot have '*' wildcards`);
    out[kv[0]] = kv[1];
  }
  return out;
}

/** Go's filepath.Match for names without a separator: `*`, `?`, `[...]` (`^` negates) and `\` escapes. */
export function globMatches(pattern: string, name: string): boolean {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else if (c === "\\" && i + 1 < pattern.length) source += escapeRegExp(pattern[++i]);
    else if (c === "[") {
      const scanned = scanClass(pattern, i);
      if (typeof scanned === "string") return false; // Go: ErrBadPattern, which istioctl counts as no match
      // A reversed range matches nothing in Go; an empty class matches nothing ([]) or anything ([^]).
      const ranges = scanned.ranges
        .filter(([lo, hi]) => lo <= hi)
        .map(([lo, hi]) => (lo === hi ? classChar(lo) : `${classChar(lo)}-${classChar(hi)}`));
      source += `[${scanned.negated ? "^" : ""}${ranges.join("")}]`;
      i = scanned.end;
    } else source += escapeRegExp(c);
  }
  return new RegExp(`^${source}$`, "s").test(name);
}

/**
 * The character class starting at `pattern[start]` ('['), read as Go's filepath.Match reads it: an
 * optional '^', then ranges (a character, or `lo-hi`; `\` escapes one) up to a ']' after at least
 * one. Its ranges and the index of its ']', or why it is malformed.
 */
function scanClass(
  pattern: string,
  start: number,
): { negated: boolean; ranges: [string, string][]; end: number } | string {
  let j = start + 1;
  const negated = pattern[j] === "^";
  if (negated) j++;
  // One end of a range; undefined when there is none, or nothing follows it (so no ']').
  const end = (): string | undefined => {
    if (j >= pattern.length || pattern[j] === "-" || pattern[j] === "]") return undefined;
    if (pattern[j] === "\\") j++;
    const ch = pattern[j++];
    return j < pattern.length ? ch : undefined;
  };
  const ranges: [string, string][] = [];
  for (;;) {
    if (pattern[j] === "]" && ranges.length > 0) return { negated, ranges, end: j };
    const lo = end();
    if (lo === undefined) return `the character class at offset ${start} is not closed or names no character`;
    let hi = lo;
    if (pattern[j] === "-") {
      j++;
      const h = end();
      if (h === undefined) return `the range in the character class at offset ${start} has no end`;
      hi = h;
    }
    ranges.push([lo, hi]);
  }
}

/** A character inside a RegExp class. */
function classChar(ch: string): string {
  return /[\\\][^-]/.test(ch) ? `\\${ch}` : ch;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** A list part: empty (or a lone `*`) matches everything, else any of its patterns. */
function anyGlob(patterns: readonly string[], name: string): boolean {
  if (patterns.length === 0) return true;
  if (patterns.length === 1 && (patterns[0].trim() === "" || patterns[0].trim() === "*")) return true;
  return patterns.some((p) => globMatches(p, name));
}

/** A label or annotation part: every key present, its value matching the pattern. */
function allPairs(selection: Readonly<Record<string, string>>, actual: Readonly<Record<string, string>>): boolean {
  return Object.entries(selection).every(([key, pattern]) => key in actual && globMatches(pattern, actual[key]));
}

export function specMatches(spec: SelectionSpec, path: ContainerPath): boolean {
  return (
    anyGlob(spec.namespaces, path.namespace) &&
    anyGlob(spec.deployments, path.deployment) &&
    anyGlob(spec.pods, path.pod) &&
    anyGlob(spec.containers, path.container) &&
    allPairs(spec.labels, path.labels) &&
    allPairs(spec.annotations, path.annotations)
  );
}

/** The --include and --exclude flags, parsed. */
export class Selection {
  readonly include: SelectionSpec[];
  /** The user's exclude specs (istioctl's ignored namespaces taken out of them). */
  readonly exclude: SelectionSpec[];

  constructor(include: readonly string[], exclude: readonly string[]) {
    this.include = include.map(parseSelectionSpec);
    // As istioctl: the ignored namespaces are always excluded, so naming them changes nothing; a spec
    // naming only them is dropped (istioctl also drops specs naming no namespace; Sluice keeps them).
    this.exclude = exclude.map(parseSelectionSpec).flatMap((spec) => {
      if (spec.namespaces.length === 0) return [spec];
      const namespaces = spec.namespaces.filter((ns) => !IGNORED_NAMESPACES.includes(ns));
      return namespaces.length > 0 ? [{ ...spec, namespaces }] : [];
    });
  }

  /** Whether a container's logs and state are collected. */
  selects(path: ContainerPath): boolean {
    if (IGNORED_NAMESPACES.includes(path.namespace)) return false;
    if (this.exclude.some((spec) => specMatches(spec, path))) return false;
    const include = this.include.length > 0 ? this.include : [parseSelectionSpec("")];
    return include.some((spec) => specMatches(spec, path));
  }

  /**
   * The namespaces to list resources in (istioctl's ExtractIncludedNamespaces): [""] (all) unless
   * every include spec names namespaces without globs; then those and the Istio namespace.
   */
  listedNamespaces(istioNamespace: string): string[] {
    if (this.include.length === 0) return [""];
    const set = new Set<string>();
    for (const spec of this.include) {
      if (spec.namespaces.length === 0) return [""];
      for (const ns of spec.namespaces) {
        if (ns.includes("*")) return [""];
        set.add(ns);
      }
    }
    if (istioNamespace) set.add(istioNamespace);
    return set.size > 20 ? [""] : [...set].sort();
  }

  /**
   * Whether a namespace's resources, secrets and events go into the report: in the included
   * namespaces (or the Istio namespace), and not excluded by an --exclude spec naming namespaces
   * alone. (istioctl applies --exclude to logs only; the ignored namespaces' resources are kept.)
   */
  keepsNamespace(namespace: string, istioNamespace: string): boolean {
    const included =
      namespace === istioNamespace ||
      this.include.length === 0 ||
      this.include.some((spec) => spec.namespaces.length === 0 || anyGlob(spec.namespaces, namespace));
    if (!included) return false;
    return !this.exclude.some((spec) => isNamespacesOnly(spec) && anyGlob(spec.namespaces, namespace));
  }
}

function isNamespacesOnly(spec: SelectionSpec): boolean {
  return (
    spec.namespaces.length > 0 &&
    spec.deployments.length === 0 &&
    spec.pods.length === 0 &&
    spec.containers.length === 0 &&
    Object.keys(spec.labels).length === 0 &&
    Object.keys(spec.annotations).length === 0
  );
}

/**
 * Keeps the log lines in [since, until] (istioctl's processlog time filter): a line starting with an
 * RFC 3339 time is kept when the time is in range; a line without one (a stack trace, a wrapped
 * message) goes with the line before it.
 */
export function filterLogLines(log: string, since: Date | undefined, until: Date | undefined): string {
  if (!since && !until) return log;
  let keep = true;
  const out: string[] = [];
  for (const line of log.split("\n")) {
    const stamp = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))/.exec(line)?.[1];
    if (stamp) {
      const t = Date.parse(stamp);
      keep = !((since && t < since.getTime()) || (until && t > until.getTime()));
    }
    if (keep) out.push(line);
  }
  return out.join("\n");
}

/**
 * Why `pattern` is not a valid glob for Go's filepath.Match (which istioctl matches with), or
 * undefined: a `[` class must close and name at least one character or range, each end of a range
 * must be a character (not `-` or `]`), and a `\` must escape something.
 */
export function globSyntaxError(pattern: string): string | undefined {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === "\\") {
      if (++i >= pattern.length) return "it ends in an unescaped '\\'";
    } else if (pattern[i] === "[") {
      const scanned = scanClass(pattern, i);
      if (typeof scanned === "string") return scanned;
      i = scanned.end;
    }
  }
  return undefined;
}

/** istioctl's match.MatchesGlobs for error patterns: a lone "*" (or "") matches every text; no patterns match none. */
export function matchesAnyGlob(text: string, patterns: readonly string[]): boolean {
  if (patterns.length === 1 && (patterns[0].trim() === "" || patterns[0].trim() === "*")) return true;
  return patterns.some((p) => globMatches(p, text));
}

/** One log's counts, as istioctl's processlog.Stats, and whether a --critical-errs pattern matched one of its errors. */
export interface LogStats {
  fatals: number;
  errors: number;
  warnings: number;
  critical: boolean;
}

const LOG_LEVELS = new Set(["fatal", "error", "warn", "info", "debug", "trace"]);
const RFC3339_NANO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
/** ztunnel's lines: time, an optional thread, level, target and message, separated by spaces. */
const ZTUNNEL_LINE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z)\s+(?:\w+\s+)?(\w+)\s+([\w.:]+)(.*)/;

/**
 * A log line's level (lower case) and text, as istioctl's processlog reads them: a JSON object with
 * `time`, `level` and a non-empty `msg`; or Istio's tab-separated `time<TAB>level<TAB>scope<TAB>message`
 * (the text is what follows the level); or ztunnel's space-separated line. Anything else (a stack
 * trace, a line without an RFC 3339 time or a known level) is undefined.
 */
export function parseLogLine(line: string): { level: string; text: string } | undefined {
  if (line.startsWith("{")) {
    let object: unknown;
    try {
      object = JSON.parse(line);
    } catch {
      return undefined;
    }
    if (typeof object !== "object" || object === null || Array.isArray(object)) return undefined;
    // Go's encoding/json matches field names regardless of case.
    const field = (name: string) => {
      const key = Object.keys(object).find((k) => k.toLowerCase() === name);
      const value = key === undefined ? undefined : (object as Record<string, unknown>)[key];
      return typeof value === "string" ? value : "";
    };
    const [time, level, msg] = [field("time"), field("level"), field("msg")];
    if (msg === "" || !RFC3339_NANO.test(time) || !LOG_LEVELS.has(level)) return undefined;
    return { level, text: msg };
  }
  let parts = line.split("\t");
  if (parts.length < 3) {
    const m = ZTUNNEL_LINE.exec(line);
    if (!m) return undefined;
    parts = m.slice(1);
  }
  const level = parts[1].toLowerCase();
  if (!RFC3339_NANO.test(parts[0]) || !LOG_LEVELS.has(level)) return undefined;
  return { level, text: parts.slice(2).join("\t") };
}

/**
 * istioctl's log-importance heuristic over a log: its fatal, error and warning lines, less those whose
 * text matches an `ignored` pattern (--ignore-errs); `critical` when a fatal or error line's text
 * matches a `critical` pattern (--critical-errs).
 */
export function logStats(log: string, critical: readonly string[], ignored: readonly string[]): LogStats {
  const stats: LogStats = { fatals: 0, errors: 0, warnings: 0, critical: false };
  for (const line of log.split("\n")) {
    const parsed = parseLogLine(line);
    if (!parsed || !["fatal", "error", "warn"].includes(parsed.level)) continue;
    if (ignored.length > 0 && matchesAnyGlob(parsed.text, ignored)) continue;
    if (parsed.level === "warn") stats.warnings++;
    else {
      if (parsed.level === "fatal") stats.fatals++;
      else stats.errors++;
      if (!stats.critical && critical.length > 0 && matchesAnyGlob(parsed.text, critical)) stats.critical = true;
    }
  }
  return stats;
}

/** istioctl's Stats.Importance: larger is more important. */
export function logImportance(stats: LogStats): number {
  return 1000 * stats.fatals + 100 * stats.errors + 10 * stats.warnings;
}

/**
 * The logs by priority for inclusion: those with a critical error first, then by importance, then
 * by path; each line `path: critical, N fatal, N errors, N warnings (importance N)`.
 */
export function logsByPriority(stats: ReadonlyMap<string, LogStats>): string[] {
  const order = [...stats].sort(
    ([pa, a], [pb, b]) =>
      Number(b.critical) - Number(a.critical) ||
      logImportance(b) - logImportance(a) ||
      (pa < pb ? -1 : pa > pb ? 1 : 0),
  );
  return order.map(([path, s]) => {
    const counts = `${s.fatals} fatal, ${s.errors} errors, ${s.warnings} warnings (importance ${logImportance(s)})`;
    return `${path}: ${s.critical ? "critical, " : ""}${counts}`;
  });
}
