// The surfaces around xDS, compared between istiod and Sluice (issue 26): what an operator's tools
// read besides the proxies' config.
//   metrics    the metric families on /metrics (monitoring port): name, type and label *names*
//   debug      the /debug/* endpoints each lists in /debug/list (istiod's DiscoveryServer.list), and
//              the JSON shape of each one's answer (key paths and value types, arrays collapsed to
//              the merged shape of their elements)
//   version    /version on the monitoring port: the shape of istiod's `<version>-<revision>-<status>`
//   xds-type   which type URLs each answers over ADS (SotW, plaintext): one stream per type URL, a
//              request from a sidecar node, and whether it answers, fails the stream, closes it or
//              stays silent
// Values never count, only the form: two control planes never agree on counts, timings or versions.
import { create, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { Client, type ClientDuplexStream, credentials, type ServiceError } from "@grpc/grpc-js";
import { deserializer, methodPath, serializer } from "../../src/api/grpc-service.ts";
import { type core, discovery } from "../../src/api/index.ts";
import { TypeUrl } from "../../src/xds/index.ts";
import type { ControlPlane } from "./control-planes.ts";
import { type ProxySpec, proxyNode } from "./proxies.ts";

export type SurfaceOutcome = "identical" | "differs" | "only-istiod" | "only-sluice";

export interface SurfaceComparison {
  /** `metrics <name>`, `debug /debug/<endpoint>`, `version`, `xds-type <type URL>`. */
  id: string;
  outcome: SurfaceOutcome;
  /** What differs, each `<path>: istiod … | sluice …`; for only-* a note on what the other side does. */
  paths: string[];
}

// ---------------------------------------------------------------------------------------------
// JSON shapes

/**
 * The form of a JSON value. `null` stands for "no evidence" (Go writes a nil slice, map or pointer
 * as null) and an array's `element` is undefined while the array is empty: both match any shape.
 */
export type Shape =
  | { t: "string" | "number" | "boolean" | "null" }
  | { t: "array"; element?: Shape }
  | { t: "object"; keys: Map<string, Shape> };

/**
 * Keys that name things (host names, cluster names, type URLs, proxy ids, `ns/name`) rather than
 * fields: in an object, the entries under such keys collapse into one `*` entry (their merged
 * shape), as an array's elements do; its other keys stay fields.
 */
const NAME_KEY = /[./:~]/;

/** The shape of `value`; every array (and map, see NAME_KEY) is its elements' merged shape. */
export function jsonShape(value: JsonValue): Shape {
  if (value === null) return { t: "null" };
  if (Array.isArray(value)) {
    let element: Shape | undefined;
    for (const v of value) element = element ? mergeShapes(element, jsonShape(v)) : jsonShape(v);
    return { t: "array", element };
  }
  if (typeof value === "object") {
    const keys = new Map<string, Shape>();
    for (const [k, v] of Object.entries(value)) {
      const key = NAME_KEY.test(k) ? "*" : k;
      const shape = jsonShape(v);
      const had = keys.get(key);
      keys.set(key, had ? mergeShapes(had, shape) : shape);
    }
    return { t: "object", keys };
  }
  return { t: typeof value as "string" | "number" | "boolean" };
}

/** One shape covering both: object keys united, array elements merged; null gives way to the other. */
export function mergeShapes(a: Shape, b: Shape): Shape {
  if (a.t === "null") return b;
  if (b.t === "null") return a;
  if (a.t === "array" && b.t === "array") {
    if (!a.element) return b;
    if (!b.element) return a;
    return { t: "array", element: mergeShapes(a.element, b.element) };
  }
  if (a.t === "object" && b.t === "object") {
    const keys = new Map(a.keys);
    for (const [k, v] of b.keys) keys.set(k, keys.has(k) ? mergeShapes(keys.get(k) as Shape, v) : v);
    return { t: "object", keys };
  }
  // Two types at one place (a string here, a number there): the first seen stands.
  return a;
}

/** How a shape reads in a path line: `string`, `array`, `object{a,b}`. */
export function showShape(s: Shape | undefined): string {
  if (!s) return "(absent)";
  if (s.t === "object") {
    const keys = [...s.keys.keys()];
    return keys.length <= 4 ? `object{${keys.join(",")}}` : `object{${keys.slice(0, 4).join(",")},…}`;
  }
  return s.t;
}

/**
 * Every path at which two shapes differ: a key only one side has, or a different type (`[]` marks
 * an array's element, `.*` the entries under names). Null and empty arrays match anything, and
 * entries under names on one side only are no difference.
 */
export function shapeDiff(istiod: Shape | undefined, sluice: Shape | undefined, path = ""): string[] {
  const at = path || ".";
  if (istiod === undefined || sluice === undefined) {
    return istiod === sluice ? [] : [`${at}: istiod ${showShape(istiod)} | sluice ${showShape(sluice)}`];
  }
  if (istiod.t === "null" || sluice.t === "null") return [];
  if (istiod.t !== sluice.t) return [`${at}: istiod ${showShape(istiod)} | sluice ${showShape(sluice)}`];
  if (istiod.t === "array" && sluice.t === "array") {
    if (!istiod.element || !sluice.element) return [];
    return shapeDiff(istiod.element, sluice.element, `${path}[]`);
  }
  if (istiod.t === "object" && sluice.t === "object") {
    const keys = [...new Set([...istiod.keys.keys(), ...sluice.keys.keys()])].sort();
    return keys.flatMap((k) =>
      // A map's entries on one side only: the other has none named now, which is state, not form.
      k === "*" && !(istiod.keys.has(k) && sluice.keys.has(k))
        ? []
        : shapeDiff(istiod.keys.get(k), sluice.keys.get(k), `${path}.${k}`),
    );
  }
  return [];
}

// ---------------------------------------------------------------------------------------------
// Metrics

export interface MetricFamily {
  /** counter, gauge, histogram, summary, untyped. */
  type: string;
  /** The label names its samples carry (histogram `le` and summary `quantile` left out). */
  labels: Set<string>;
  /**
   * How many samples it has that show something was recorded: a family declared with none is not
   * seen by a query. An unlabelled counter or histogram at zero is not counted: prom-client shows
   * one from its declaration, OpenTelemetry's exporter (istiod's) only once something is recorded.
   */
  samples: number;
}

const SUFFIXES = ["_bucket", "_sum", "_count", "_total", "_created"];
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g;

/** The metric families of a Prometheus text exposition, by name. */
export function parsePrometheus(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  const family = (name: string) => {
    const known = families.get(name);
    if (known) return known;
    const f: MetricFamily = { type: "untyped", labels: new Set(), samples: 0 };
    families.set(name, f);
    return f;
  };
  for (const line of text.split("\n")) {
    const typed = /^# TYPE (\S+) (\S+)/.exec(line);
    if (typed) {
      family(typed[1] as string).type = typed[2] as string;
      continue;
    }
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const sample = m[1] as string;
    // A histogram's `x_bucket` belongs to family `x`, a counter's `x_total` to `x` when declared so.
    let name = sample;
    if (!families.has(sample)) {
      const suffix = SUFFIXES.find((s) => sample.endsWith(s) && families.has(sample.slice(0, -s.length)));
      if (suffix) name = sample.slice(0, -suffix.length);
    }
    const f = family(name);
    const labels = [...(m[2] ?? "").matchAll(LABEL)]
      .map((l) => l[1] as string)
      .filter((l) => l !== "le" && l !== "quantile");
    for (const label of labels) f.labels.add(label);
    const cumulative = f.type === "counter" || f.type === "histogram" || f.type === "summary";
    if (!(cumulative && labels.length === 0 && Number(m[3]) === 0)) f.samples++;
  }
  return families;
}

/**
 * Families of the language runtime, which neither side can share: Go's runtime and Node's. The
 * process_* families (both export them, and dashboards read them) are compared.
 */
export const RUNTIME_METRICS = /^(go_|nodejs_|promhttp_)/;

export function compareMetrics(
  istiod: Map<string, MetricFamily>,
  sluice: Map<string, MetricFamily>,
): SurfaceComparison[] {
  const seen = (m: Map<string, MetricFamily>, n: string) => (m.get(n)?.samples ?? 0) > 0;
  const names = [...new Set([...istiod.keys(), ...sluice.keys()])]
    .filter((n) => !RUNTIME_METRICS.test(n) && (seen(istiod, n) || seen(sluice, n)))
    .sort();
  return names.map((name) => {
    const id = `metrics ${name}`;
    const a = istiod.get(name);
    const b = sluice.get(name);
    if (!seen(sluice, name)) {
      return {
        id,
        outcome: "only-istiod",
        paths: [b ? "sluice declares it but recorded nothing" : "sluice has no such metric"],
      };
    }
    if (!seen(istiod, name)) {
      return {
        id,
        outcome: "only-sluice",
        paths: [a ? "istiod declares it but recorded nothing" : "istiod has no such metric"],
      };
    }
    const ia = a as MetricFamily;
    const ib = b as MetricFamily;
    const paths: string[] = [];
    if (ia.type !== ib.type) paths.push(`type: istiod ${ia.type} | sluice ${ib.type}`);
    const labels = (f: MetricFamily) => [...f.labels].sort().join(",") || "(none)";
    if (labels(ia) !== labels(ib)) paths.push(`labels: istiod ${labels(ia)} | sluice ${labels(ib)}`);
    return { id, outcome: paths.length === 0 ? "identical" : "differs", paths };
  });
}

// ---------------------------------------------------------------------------------------------
// Debug endpoints

/** One answer of an HTTP endpoint, reduced to its form. */
export interface HttpAnswer {
  status: number;
  /** json (with its shape), text, html, or empty. */
  kind: "json" | "text" | "html" | "empty";
  shape?: Shape;
}

/** The form of an HTTP answer: JSON (whatever the content type says) or its content type's kind. */
export function answerForm(status: number, contentType: string, body: string): HttpAnswer {
  if (body.trim() === "") return { status, kind: "empty" };
  try {
    return { status, kind: "json", shape: jsonShape(JSON.parse(body) as JsonValue) };
  } catch {}
  return { status, kind: contentType.includes("html") ? "html" : "text" };
}

export function compareAnswers(istiod: HttpAnswer, sluice: HttpAnswer): string[] {
  const paths: string[] = [];
  if (istiod.status !== sluice.status) paths.push(`status: istiod ${istiod.status} | sluice ${sluice.status}`);
  if (istiod.kind !== sluice.kind) paths.push(`body: istiod ${istiod.kind} | sluice ${sluice.kind}`);
  else if (istiod.kind === "json") paths.push(...shapeDiff(istiod.shape, sluice.shape));
  return paths;
}

async function get(url: string, timeoutMs = 20_000): Promise<{ status: number; contentType: string; body: string }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, contentType: res.headers.get("content-type") ?? "", body: await res.text() };
  } catch (err) {
    return { status: 0, contentType: "", body: `${err instanceof Error ? err.message : String(err)}` };
  }
}

/** The endpoints a control plane lists in /debug/list (names like `syncz`, `adsz?push=true`). */
async function debugList(plane: ControlPlane): Promise<string[]> {
  const res = await get(`http://${plane.debug}/debug/list`);
  if (res.status !== 200) return [];
  try {
    const list = JSON.parse(res.body) as unknown;
    return Array.isArray(list) ? list.filter((e): e is string => typeof e === "string") : [];
  } catch {
    return [];
  }
}

/** Endpoints that change the control plane's state: asked last, after every other endpoint. */
const ACTS = /[?&](push|clear)=true/;

async function debugAnswers(
  plane: ControlPlane,
  endpoints: readonly string[],
  proxyId?: string,
): Promise<Map<string, HttpAnswer>> {
  const out = new Map<string, HttpAnswer>();
  const ordered = [...endpoints.filter((e) => !ACTS.test(e)), ...endpoints.filter((e) => ACTS.test(e))];
  for (const endpoint of ordered) {
    const query = proxyId ? `${endpoint.includes("?") ? "&" : "?"}proxyID=${encodeURIComponent(proxyId)}` : "";
    const res = await get(`http://${plane.debug}/debug/${endpoint}${query}`);
    out.set(endpoint, answerForm(res.status, res.contentType, res.body));
  }
  return out;
}

/** The /debug/* comparison: every endpoint either lists (and the /debug index and list themselves). */
export async function compareDebug(
  istiod: ControlPlane,
  sluice: ControlPlane,
  proxyId?: string,
): Promise<SurfaceComparison[]> {
  const [iList, sList] = await Promise.all([debugList(istiod), debugList(sluice)]);
  const all = [...new Set([...iList, ...sList, "list"])].sort();
  const [iAnswers, sAnswers] = await Promise.all([
    debugAnswers(istiod, all, proxyId),
    debugAnswers(sluice, all, proxyId),
  ]);
  const out: SurfaceComparison[] = [];
  for (const endpoint of all) {
    const id = `debug /debug/${endpoint}`;
    const a = iAnswers.get(endpoint) as HttpAnswer;
    const b = sAnswers.get(endpoint) as HttpAnswer;
    const listed = (list: string[]) => endpoint === "list" || list.includes(endpoint);
    if (!listed(sList)) {
      out.push({ id, outcome: "only-istiod", paths: [`sluice does not list it (answers ${b.status} ${b.kind})`] });
    } else if (!listed(iList)) {
      out.push({ id, outcome: "only-sluice", paths: [`istiod does not list it (answers ${a.status} ${a.kind})`] });
    } else {
      const paths = compareAnswers(a, b);
      out.push({ id, outcome: paths.length === 0 ? "identical" : "differs", paths });
    }
  }
  // The index page (istiod's DiscoveryServer.Debug: an HTML table of every handler).
  const [ia, ib] = await Promise.all([istiod, sluice].map((p) => get(`http://${p.debug}/debug`)));
  const paths = compareAnswers(
    answerForm(ia?.status ?? 0, ia?.contentType ?? "", ia?.body ?? ""),
    answerForm(ib?.status ?? 0, ib?.contentType ?? "", ib?.body ?? ""),
  );
  out.push({ id: "debug /debug", outcome: paths.length === 0 ? "identical" : "differs", paths });
  return out;
}

// ---------------------------------------------------------------------------------------------
// /version

/**
 * The form of istiod's /version, `version.Info.String()`: `<version>-<git revision>-<build status>`
 * (the version `1.31-dev`, `1.31.0` or `unknown`; the revision a commit, whole or abbreviated, or
 * `unknown`; the status `Clean`, `Modified` or `unknown`), each part's form rather than its text.
 */
export function versionShape(text: string): Record<string, string> {
  const parts = text.trim().split("-");
  if (parts.length < 3) return { format: `not <version>-<revision>-<status> (${parts.length} part(s))` };
  const status = parts.pop() as string;
  const revision = parts.pop() as string;
  const version = parts.join("-");
  const form = (s: string) => s.replace(/[0-9]+/g, "9").replace(/[a-z]+/gi, "a");
  return {
    version: /^\d+\.\d+/.test(version) || version === "unknown" ? "release or unknown" : `other (${form(version)})`,
    revision:
      /^[0-9a-f]{7,40}$/.test(revision) || revision === "unknown" ? "commit or unknown" : `other (${form(revision)})`,
    status: ["Clean", "Modified", "unknown"].includes(status) ? "Clean|Modified|unknown" : `other (${status})`,
  };
}

export async function compareVersion(istiod: ControlPlane, sluice: ControlPlane): Promise<SurfaceComparison> {
  const [a, b] = (await Promise.all([istiod, sluice].map((p) => get(`http://${p.monitoring}/version`)))) as [
    Awaited<ReturnType<typeof get>>,
    Awaited<ReturnType<typeof get>>,
  ];
  const paths: string[] = [];
  if (a.status !== b.status) paths.push(`status: istiod ${a.status} | sluice ${b.status}`);
  const sa = versionShape(a.body);
  const sb = versionShape(b.body);
  for (const k of [...new Set([...Object.keys(sa), ...Object.keys(sb)])]) {
    if (sa[k] !== sb[k])
      paths.push(`${k}: istiod ${sa[k] ?? "(absent)"} | sluice ${sb[k] ?? "(absent)"} (${JSON.stringify(b.body)})`);
  }
  const kind = (ct: string) => ct.split(";")[0]?.trim() ?? "";
  if (kind(a.contentType) !== kind(b.contentType)) {
    paths.push(`content-type: istiod ${kind(a.contentType)} | sluice ${kind(b.contentType)}`);
  }
  return { id: "version", outcome: paths.length === 0 ? "identical" : "differs", paths };
}

// ---------------------------------------------------------------------------------------------
// Which xDS types each answers

/** What one ADS stream asking for one type URL got. */
export type TypeAnswer =
  | { kind: "answers"; typeUrl: string; resources: number }
  | { kind: "error"; code: number; message: string }
  | { kind: "closes" }
  | { kind: "silent" };

/**
 * The type URLs probed: every key of istiod's generator map that is a type URL (pilot/pkg/bootstrap
 * InitGenerators), the health reports istiod takes on the stream (HealthInformation), what Sluice
 * registers beyond them (VHDS), the Bootstrap type (istio-agent's, not istiod's), an MCP-over-xDS
 * config type and a type nobody serves (the `api` generator's answer).
 */
export const PROBED_TYPES: readonly string[] = [
  TypeUrl.Cluster,
  TypeUrl.Listener,
  TypeUrl.Route,
  TypeUrl.Endpoint,
  TypeUrl.Secret,
  TypeUrl.ExtensionConfiguration,
  TypeUrl.NameTable,
  TypeUrl.ProxyConfig,
  TypeUrl.Address,
  TypeUrl.Workload,
  TypeUrl.WorkloadAuthorization,
  TypeUrl.HealthInfo,
  TypeUrl.VirtualHost,
  TypeUrl.Bootstrap,
  TypeUrl.Debug,
  "istio.io/debug/syncz",
  "networking.istio.io/v1/VirtualService",
  "type.googleapis.com/sluice.compare.NoSuchType",
];

/** How a probe's answer reads in a path line. */
export function showAnswer(a: TypeAnswer): string {
  switch (a.kind) {
    case "answers":
      return `answers ${a.resources} resource(s)${a.typeUrl ? ` of ${a.typeUrl}` : ""}`;
    case "error":
      return `fails the stream (${a.code}: ${a.message})`;
    case "closes":
      return "closes the stream";
    case "silent":
      return "stays silent";
  }
}

/** A plaintext SotW ADS stream of raw bytes, its codec, and how to drop it without further events. */
function openSotwStream(address: string) {
  const method = discovery.AggregatedDiscoveryService.method.streamAggregatedResources;
  const client = new Client(address, credentials.createInsecure());
  const stream = client.makeBidiStreamRequest(
    methodPath(method),
    (r: Uint8Array) => Buffer.from(r),
    (b: Buffer) => b,
  ) as ClientDuplexStream<Uint8Array, Buffer>;
  const close = () => {
    stream.removeAllListeners();
    stream.on("error", () => {});
    stream.cancel();
    client.close();
  };
  return { stream, encode: serializer(method.input), decode: deserializer(method.output), close };
}

/**
 * Opens one SotW ADS stream, sends one request for `typeUrl` from `node`, and reports what
 * happened first within `timeoutMs`.
 */
export function probeType(address: string, node: JsonObject, typeUrl: string, timeoutMs = 3000): Promise<TypeAnswer> {
  const { stream, encode, decode, close } = openSotwStream(address);
  return new Promise<TypeAnswer>((resolve) => {
    let done = false;
    const finish = (answer: TypeAnswer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      close();
      resolve(answer);
    };
    const timer = setTimeout(() => finish({ kind: "silent" }), timeoutMs);
    stream.on("data", (bytes: Buffer) => {
      const res = decode(bytes) as discovery.DiscoveryResponse;
      finish({ kind: "answers", typeUrl: res.resources[0]?.typeUrl ?? "", resources: res.resources.length });
    });
    stream.on("error", (err: ServiceError) => finish({ kind: "error", code: err.code, message: err.details }));
    stream.on("end", () => finish({ kind: "closes" }));
    stream.write(
      encode(
        create(discovery.DiscoveryRequestSchema, {
          typeUrl,
          node: node as MessageInitShape<typeof core.NodeSchema>,
        }),
      ),
    );
  });
}

export function compareTypeAnswers(typeUrl: string, istiod: TypeAnswer, sluice: TypeAnswer): SurfaceComparison {
  const id = `xds-type ${typeUrl}`;
  const serves = (a: TypeAnswer) => a.kind === "answers" || a.kind === "silent";
  const paths: string[] = [];
  if (istiod.kind !== sluice.kind) {
    paths.push(`.: istiod ${showAnswer(istiod)} | sluice ${showAnswer(sluice)}`);
  } else if (istiod.kind === "error" && sluice.kind === "error") {
    if (istiod.code !== sluice.code) paths.push(`code: istiod ${istiod.code} | sluice ${sluice.code}`);
    if (istiod.message !== sluice.message) paths.push(`message: istiod ${istiod.message} | sluice ${sluice.message}`);
  } else if (istiod.kind === "answers" && sluice.kind === "answers") {
    // Counts follow the cluster's state (the resource comparison covers them); only some-or-none counts here.
    if (istiod.typeUrl !== sluice.typeUrl && istiod.typeUrl !== "" && sluice.typeUrl !== "") {
      paths.push(`resource type: istiod ${istiod.typeUrl} | sluice ${sluice.typeUrl}`);
    }
    if ((istiod.resources === 0) !== (sluice.resources === 0)) {
      paths.push(`resources: istiod ${istiod.resources} | sluice ${sluice.resources}`);
    }
  }
  if (paths.length === 0) return { id, outcome: "identical", paths };
  // Serving on one side only reads as only-*; both serving differently, or failing differently, as differs.
  if (serves(istiod) && !serves(sluice)) return { id, outcome: "only-istiod", paths };
  if (serves(sluice) && !serves(istiod)) return { id, outcome: "only-sluice", paths };
  return { id, outcome: "differs", paths };
}

export async function compareXdsTypes(
  istiod: ControlPlane,
  sluice: ControlPlane,
  node: JsonObject,
  types: readonly string[] = PROBED_TYPES,
): Promise<SurfaceComparison[]> {
  const out: SurfaceComparison[] = [];
  for (const typeUrl of types) {
    const [a, b] = (await Promise.all([istiod, sluice].map((p) => probeType(p.xds, node, typeUrl)))) as [
      TypeAnswer,
      TypeAnswer,
    ];
    out.push(compareTypeAnswers(typeUrl, a, b));
  }
  return out;
}

/**
 * Rejects one CDS response over a SotW stream (a NACK with an InvalidArgument error detail), so that
 * the metrics of rejections (pilot_total_xds_rejects, pilot_xds_cds_reject) have something to show.
 */
export function rejectOnce(address: string, node: JsonObject, timeoutMs = 10_000): Promise<void> {
  const { stream, encode, decode, close } = openSotwStream(address);
  return new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      close();
      resolve();
    };
    const timer = setTimeout(finish, timeoutMs);
    stream.on("data", (bytes: Buffer) => {
      const res = decode(bytes) as discovery.DiscoveryResponse;
      stream.write(
        encode(
          create(discovery.DiscoveryRequestSchema, {
            typeUrl: res.typeUrl,
            responseNonce: res.nonce,
            errorDetail: { code: 3, message: "compare: rejected on purpose" },
          }),
        ),
      );
      // The NACK must arrive before the stream ends.
      setTimeout(finish, 500);
    });
    stream.on("error", finish);
    stream.on("end", finish);
    stream.write(
      encode(
        create(discovery.DiscoveryRequestSchema, {
          typeUrl: TypeUrl.Cluster,
          node: node as MessageInitShape<typeof core.NodeSchema>,
        }),
      ),
    );
  });
}

// ---------------------------------------------------------------------------------------------
// A connected proxy, for the debug endpoints that show one

/** The sidecar the probes present when the caller names none (a `sleep` pod in `default`). */
export const PROBE_SIDECAR: ProxySpec = {
  name: "sleep",
  kind: "sidecar",
  namespace: "default",
  ip: "10.250.0.1",
  labels: { app: "sleep" },
  serviceAccount: "sleep",
};

/**
 * Keeps a SotW ADS stream open for `node` (CDS and LDS, every response ACKed), so that the debug
 * endpoints about proxies (syncz, config_dump, ...) have one to show. Resolves once LDS answered.
 */
export function holdProxy(address: string, node: JsonObject, timeoutMs = 30_000): Promise<{ close(): void }> {
  const { stream, encode, decode, close } = openSotwStream(address);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      close();
      reject(new Error(`${address}: no LDS answer within ${timeoutMs} ms`));
    }, timeoutMs);
    stream.on("data", (bytes: Buffer) => {
      const res = decode(bytes) as discovery.DiscoveryResponse;
      stream.write(
        encode(
          create(discovery.DiscoveryRequestSchema, {
            typeUrl: res.typeUrl,
            versionInfo: res.versionInfo,
            responseNonce: res.nonce,
          }),
        ),
      );
      if (res.typeUrl === TypeUrl.Listener) {
        clearTimeout(timer);
        resolve({ close });
      }
    });
    stream.on("error", (err: ServiceError) => {
      clearTimeout(timer);
      reject(new Error(`${address}: ${err.message}`));
    });
    stream.write(
      encode(
        create(discovery.DiscoveryRequestSchema, {
          typeUrl: TypeUrl.Cluster,
          node: node as MessageInitShape<typeof core.NodeSchema>,
        }),
      ),
    );
    stream.write(encode(create(discovery.DiscoveryRequestSchema, { typeUrl: TypeUrl.Listener })));
  });
}

// ---------------------------------------------------------------------------------------------

export interface SurfaceOptions {
  /** The sidecar the xDS probes present (default PROBE_SIDECAR). */
  proxy?: ProxySpec;
  /** A proxy id (`<pod>.<namespace>`) connected to both, for the debug endpoints that take `proxyID`. */
  proxyId?: string;
}

async function metrics(plane: ControlPlane): Promise<Map<string, MetricFamily>> {
  const res = await get(`http://${plane.monitoring}/metrics`);
  if (res.status !== 200) throw new Error(`${plane.name} /metrics: ${res.status} ${res.body.slice(0, 200)}`);
  return parsePrometheus(res.body);
}

/**
 * Compares the surfaces around xDS: the xDS types first, then a rejected response (both show in the
 * metrics), /debug/*, /version and, last, /metrics.
 */
export async function compareSurfaces(
  istiod: ControlPlane,
  sluice: ControlPlane,
  options: SurfaceOptions = {},
): Promise<SurfaceComparison[]> {
  const node = proxyNode(options.proxy ?? PROBE_SIDECAR) as unknown as JsonObject;
  const types = await compareXdsTypes(istiod, sluice, node);
  await Promise.all([istiod, sluice].map((p) => rejectOnce(p.xds, node)));
  const debug = await compareDebug(istiod, sluice, options.proxyId);
  const version = await compareVersion(istiod, sluice);
  const [im, sm] = await Promise.all([metrics(istiod), metrics(sluice)]);
  return [...compareMetrics(im, sm), ...debug, version, ...types];
}

/** `surfaces: N/M identical`, then each other comparison with its first paths. */
export function surfaceReport(comparisons: readonly SurfaceComparison[], pathsEach = 3): string[] {
  const identical = comparisons.filter((c) => c.outcome === "identical").length;
  const lines = [`surfaces: ${identical}/${comparisons.length} identical`];
  for (const c of comparisons) {
    if (c.outcome === "identical") continue;
    lines.push(`  ${c.outcome} ${c.id}`);
    for (const p of c.paths.slice(0, pathsEach)) lines.push(`      ${p}`);
    if (c.paths.length > pathsEach) lines.push(`      … ${c.paths.length - pathsEach} more`);
  }
  return lines;
}
