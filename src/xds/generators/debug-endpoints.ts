// The debug endpoints (Istio's debug handlers, pilot/pkg/xds/debug.go): one registry by name
// (`syncz`, `configz`, ...) served both by the `istio.io/debug` generators over xDS and by the admin
// HTTP server under /debug/, as Istio's internal and HTTP muxes share their handlers.
import { compareStrings } from "../../model/index.ts";
import type { ConnectionStatus } from "../server/connection.ts";

export interface DebugRequest {
  /** The query string of the request (`proxyID=...`). */
  query: URLSearchParams;
  /** Set when the caller may see only proxies and config of this namespace. */
  callerNamespace?: string;
}

/** A plain-text answer with an HTTP status other than 200 (errors). */
export class DebugText {
  constructor(
    readonly body: string,
    readonly status: number,
  ) {}
}

/** A debug endpoint: text (a string, or a DebugText with its status), bytes, or a value served as JSON. */
export type DebugHandler = (req: DebugRequest) => unknown;

/** An encoded answer, as the HTTP server writes it. */
export interface DebugResponse {
  status: number;
  contentType: string;
  body: Uint8Array;
}

const encoder = new TextEncoder();
const TEXT = "text/plain; charset=utf-8";

export const NO_PROXY_ID = new DebugText("You must provide a proxyID in the query string\n", 400);
export const PROXY_NOT_CONNECTED = new DebugText(
  "Proxy not connected to this Pilot instance. It may be connected to another instance.\n",
  404,
);

export class DebugEndpoints {
  readonly #handlers = new Map<string, DebugHandler>();
  /** Help text by listed path ("syncz", "adsz?push=true"), for /debug and /debug/list. */
  readonly #help = new Map<string, string>();

  /** Adds or replaces the endpoint `name` (the path after /debug/). */
  register(name: string, handler: DebugHandler, help = ""): void {
    this.#handlers.set(name, handler);
    this.#help.set(name, help);
  }

  /** Lists a query variant of an endpoint (`adsz?push=true`) with its own help text. */
  describe(path: string, help: string): void {
    this.#help.set(path, help);
  }

  has(name: string): boolean {
    return this.#handlers.has(name);
  }

  names(): string[] {
    return [...this.#handlers.keys()].sort();
  }

  /** Every listed path (names and described variants) with its help, sorted by path. */
  listing(): { path: string; help: string }[] {
    return [...this.#help].map(([path, help]) => ({ path, help })).sort((a, b) => compareStrings(a.path, b.path));
  }

  /** Runs endpoint `name`; an unknown one gets the HTTP mux's 404. `pretty` in the query indents JSON. */
  respond(name: string, req: DebugRequest): DebugResponse {
    const handler = this.#handlers.get(name);
    if (!handler) return { status: 404, contentType: TEXT, body: encoder.encode("404 page not found\n") };
    const body = handler(req);
    if (typeof body === "string") return { status: 200, contentType: TEXT, body: encoder.encode(body) };
    if (body instanceof DebugText) return { status: body.status, contentType: TEXT, body: encoder.encode(body.body) };
    if (body instanceof Uint8Array) return { status: 200, contentType: "application/octet-stream", body };
    // Go's encoder writes nil slices and maps as null, and pretty output with four spaces.
    const json = JSON.stringify(body ?? null, undefined, req.query.has("pretty") ? 4 : undefined);
    return { status: 200, contentType: "application/json", body: encoder.encode(json) };
  }

  /**
   * Runs `path` ("configz", "config_dump?proxyID=a.b") and returns the response body, whatever its
   * status, as Istio's debug generator answers over xDS.
   */
  serve(path: string, callerNamespace: string | undefined): Uint8Array {
    const { name, query } = parseDebugPath(path);
    return this.respond(name, { query, callerNamespace }).body;
  }
}

export function parseDebugPath(path: string): { name: string; query: URLSearchParams } {
  const q = path.indexOf("?");
  return q < 0
    ? { name: path, query: new URLSearchParams() }
    : { name: path.slice(0, q), query: new URLSearchParams(path.slice(q + 1)) };
}

/**
 * The connection `proxyID` names (Istio's getDebugConnection: the first whose connection id contains
 * it), hidden from callers limited to another namespace; a DebugText 400 or 404 when there is none.
 */
export function debugConnection<Snapshot>(
  connections: readonly ConnectionStatus<Snapshot>[],
  req: DebugRequest,
): ConnectionStatus<Snapshot> | DebugText {
  const proxyId = req.query.get("proxyID");
  if (!proxyId) return NO_PROXY_ID;
  const conn = connections.find((c) => c.connectionId.includes(proxyId));
  if (!conn || (req.callerNamespace !== undefined && conn.proxy.configNamespace !== req.callerNamespace)) {
    return PROXY_NOT_CONNECTED;
  }
  return conn;
}
