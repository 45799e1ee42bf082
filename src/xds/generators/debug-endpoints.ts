// The debug endpoints the `istio.io/debug` generators serve over xDS: a registry by name (`syncz`,
// `configz`, ...) that the admin server fills with the same handlers it serves over HTTP, as
// Istio's internal debug mux.

export interface DebugRequest {
  /** The query string of the request (`proxyID=...`). */
  query: URLSearchParams;
  /** Set when the caller may see only proxies and config of this namespace. */
  callerNamespace?: string;
}

/** A debug endpoint: returns a body (text or bytes) or a value served as JSON. */
export type DebugHandler = (req: DebugRequest) => unknown;

export class DebugEndpoints {
  readonly #handlers = new Map<string, DebugHandler>();

  /** Adds or replaces the endpoint `name` (the path after /debug/). */
  register(name: string, handler: DebugHandler): void {
    this.#handlers.set(name, handler);
  }

  names(): string[] {
    return [...this.#handlers.keys()].sort();
  }

  /**
   * Runs `path` ("configz", "config_dump?proxyID=a.b") and returns the response body. An unknown
   * endpoint gets the HTTP mux's 404 text, as Istio answers it over xDS.
   */
  serve(path: string, callerNamespace: string | undefined): Uint8Array {
    const { name, query } = parseDebugPath(path);
    const handler = this.#handlers.get(name);
    if (!handler) return new TextEncoder().encode("404 page not found\n");
    const body = handler({ query, callerNamespace });
    if (body instanceof Uint8Array) return body;
    return new TextEncoder().encode(typeof body === "string" ? body : JSON.stringify(body));
  }
}

export function parseDebugPath(path: string): { name: string; query: URLSearchParams } {
  const q = path.indexOf("?");
  return q < 0
    ? { name: path, query: new URLSearchParams() }
    : { name: path.slice(0, q), query: new URLSearchParams(path.slice(q + 1)) };
}
