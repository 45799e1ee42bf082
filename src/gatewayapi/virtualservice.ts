// The Istio VirtualService shapes the route translators produce, and how HTTP routes that share a
// (listener, hostname) are merged into one VirtualService in Gateway API precedence order.
import type { ConfigObject } from "../config/index.ts";
import type { Destination } from "./backends.ts";
import type { CorsPolicy, HeaderOperations, MirrorPolicy, Redirect, Rewrite } from "./filters.ts";
import { groupBy } from "./model.ts";
import { PARENTS_ANNOTATION } from "./naming.ts";

export type StringMatch = { exact: string } | { prefix: string } | { regex: string };

export interface HTTPMatchRequest {
  uri?: StringMatch;
  headers?: Record<string, StringMatch>;
  queryParams?: Record<string, StringMatch>;
  method?: StringMatch;
  port?: number;
}

export interface HTTPRouteDestination {
  destination?: Destination;
  weight?: number;
  headers?: { request?: HeaderOperations; response?: HeaderOperations };
}

/** Istio's HTTPRoute in protobuf-JSON form. */
export interface IstioHTTPRoute {
  name: string;
  match?: HTTPMatchRequest[];
  route?: HTTPRouteDestination[];
  redirect?: Redirect;
  directResponse?: { status: number };
  rewrite?: Rewrite;
  timeout?: string;
  retries?: { attempts?: number; perTryTimeout?: string; retryOn?: string; backoff?: string };
  mirrors?: MirrorPolicy[];
  corsPolicy?: CorsPolicy;
  headers?: { request?: HeaderOperations; response?: HeaderOperations };
}

/** A VirtualService before merging, with the (listener, hostname) key it merges under. */
export interface KeyedVirtualService {
  key: string;
  config: ConfigObject<{ hosts: string[]; gateways: string[]; http: IstioHTTPRoute[] }>;
}

function uriRank(match: HTTPMatchRequest): number {
  const uri = match.uri;
  if (!uri) return -1;
  if ("exact" in uri) return 3;
  if ("prefix" in uri) return 2;
  return 1;
}

function uriLength(match: HTTPMatchRequest): number {
  const uri = match.uri;
  if (!uri) return 0;
  return ("exact" in uri ? uri.exact : "prefix" in uri ? uri.prefix : uri.regex).length;
}

const countKeys = (record: Record<string, unknown> | undefined) => Object.keys(record ?? {}).length;

// Gateway API precedence: exact > prefix > regex, longer paths, method, more headers, more query params.
function before(a: IstioHTTPRoute, b: IstioHTTPRoute): boolean {
  if (!a.match?.length) return false;
  if (!b.match?.length) return true;
  const m1 = a.match[0];
  const m2 = b.match[0];
  if (uriRank(m1) !== uriRank(m2)) return uriRank(m1) > uriRank(m2);
  if (uriLength(m1) !== uriLength(m2)) return uriLength(m1) > uriLength(m2);
  if ((m1.method === undefined) !== (m2.method === undefined)) return m1.method !== undefined;
  if (countKeys(m1.headers) !== countKeys(m2.headers)) return countKeys(m1.headers) > countKeys(m2.headers);
  return countKeys(m1.queryParams) > countKeys(m2.queryParams);
}

export function sortHTTPRoutes(routes: readonly IstioHTTPRoute[]): IstioHTTPRoute[] {
  return [...routes].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
}

/** Orders generated config as Istio does: creation time (unset first), then namespace, then name. */
export function compareByCreation(a: ConfigObject, b: ConfigObject): number {
  const ta = a.metadata.creationTimestamp ? Date.parse(a.metadata.creationTimestamp) : Number.NEGATIVE_INFINITY;
  const tb = b.metadata.creationTimestamp ? Date.parse(b.metadata.creationTimestamp) : Number.NEGATIVE_INFINITY;
  if (ta !== tb) return ta < tb ? -1 : 1;
  const na = a.metadata.namespace ?? "";
  const nb = b.metadata.namespace ?? "";
  if (na !== nb) return na < nb ? -1 : 1;
  const xa = a.metadata.name ?? "";
  const xb = b.metadata.name ?? "";
  return xa < xb ? -1 : xa > xb ? 1 : 0;
}

/** One VirtualService per key: routes appended oldest first, re-sorted, parents joined; named after the key. */
export function mergeVirtualServices(keyed: readonly KeyedVirtualService[]): ConfigObject[] {
  const groups = groupBy(keyed, (vs) => vs.key);
  const merged: ConfigObject[] = [];
  for (const [key, group] of groups) {
    const name = key.replaceAll("/", "~");
    if (group.length === 1) {
      const only = group[0].config;
      merged.push({ ...only, metadata: { ...only.metadata, name } });
      continue;
    }
    const ordered = [...group].sort((a, b) => compareByCreation(a.config, b.config));
    const base = ordered[0].config;
    const spec = base.spec ?? { hosts: [], gateways: [], http: [] };
    const http = ordered.flatMap((vs) => vs.config.spec?.http ?? []);
    const parents = ordered.map((vs) => vs.config.metadata.annotations?.[PARENTS_ANNOTATION] ?? "").join(",");
    merged.push({
      ...base,
      metadata: {
        ...base.metadata,
        name,
        annotations: { ...base.metadata.annotations, [PARENTS_ANNOTATION]: parents },
      },
      spec: { ...spec, http: sortHTTPRoutes(http) },
    });
  }
  return merged;
}
