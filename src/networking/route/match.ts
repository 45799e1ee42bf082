// VirtualService HTTPMatchRequest → Envoy RouteMatch (Istio route.go TranslateRouteMatch), and the
// checks that drop a match for a proxy: port, sourceLabels, sourceNamespace, gateways.
import { create } from "@bufbuild/protobuf";
import { matcher, preEncoded, route } from "../../api/index.ts";
import type { VirtualServiceHttpMatch, VirtualServiceHttpMatchUri } from "../../config/index.ts";
import { type Memos, weakTable } from "../../util/index.ts";
import { jwtClaimListMatcher, valueStringMatcher } from "../authz/matchers.ts";
import { newHeaderMatcher, newRouteMatch, newStringMatcher } from "./message.ts";
import type { ProxyNode } from "./types.ts";

type StringMatch = VirtualServiceHttpMatchUri;

const JWT_CLAIM_HEADER = "@request.auth.claims";

/** Istio's util.ConvertToEnvoyMatch: exact, prefix or RE2 regex; undefined when the match is empty. */
export function envoyStringMatcher(m: StringMatch): matcher.StringMatcher | undefined {
  if (m.exact !== undefined) return newStringMatcher({ case: "exact", value: m.exact });
  if (m.prefix !== undefined) return newStringMatcher({ case: "prefix", value: m.prefix });
  if (m.regex !== undefined) {
    return newStringMatcher({ case: "safeRegex", value: create(matcher.RegexMatcherSchema, { regex: m.regex }) });
  }
  return undefined;
}

/** An empty match, or the regex `*` (not RE2: Istio reads it as "present"), becomes present_match. */
function isPresentMatch(m: StringMatch | undefined): boolean {
  return (
    m === undefined || (m.exact === undefined && m.prefix === undefined && m.regex === undefined) || m.regex === "*"
  );
}

export function headerMatcher(name: string, m: StringMatch): route.HeaderMatcher {
  if (isPresentMatch(m)) return newHeaderMatcher(name, { case: "presentMatch", value: true });
  const sm = envoyStringMatcher(m);
  return newHeaderMatcher(name, sm ? { case: "stringMatch", value: sm } : { case: undefined });
}

function queryParameterMatcher(name: string, m: StringMatch): route.QueryParameterMatcher {
  if (isPresentMatch(m)) {
    return create(route.QueryParameterMatcherSchema, {
      name,
      queryParameterMatchSpecifier: { case: "presentMatch", value: true },
    });
  }
  const sm = envoyStringMatcher(m);
  return create(route.QueryParameterMatcherSchema, {
    name,
    queryParameterMatchSpecifier: sm ? { case: "stringMatch", value: sm } : { case: undefined },
  });
}

/** `@request.auth.claims.a.b` or `@request.auth.claims[a][b]` → the claim path; undefined for other headers. */
export function jwtClaimPath(header: string): string[] | undefined {
  if (!header.toLowerCase().startsWith(JWT_CLAIM_HEADER)) return undefined;
  const rest = header.slice(JWT_CLAIM_HEADER.length);
  if (rest.startsWith(".") && rest.length > 1) return rest.slice(1).split(".");
  if (rest.startsWith("[") && rest.endsWith("]") && rest.length > 2) return rest.slice(1, -1).split("][");
  return undefined;
}

function claimMatcher(claims: string[], m: StringMatch): matcher.MetadataMatcher {
  const sm = envoyStringMatcher(m) ?? create(matcher.StringMatcherSchema);
  return jwtClaimListMatcher(claims, valueStringMatcher(sm));
}

/**
 * Istio's TranslateRouteMatch. No match (undefined) is `prefix: /`. `pathSeparatedPrefix` (routes from
 * Gateway API or Ingress) matches prefixes on whole path segments.
 */
export function translateRouteMatch(
  match: VirtualServiceHttpMatch | undefined,
  pathSeparatedPrefix = false,
): route.RouteMatch {
  const out = newRouteMatch();
  out.pathSpecifier = { case: "prefix", value: "/" };
  if (!match) return out;

  for (const [name, m] of Object.entries(match.headers ?? {})) {
    const claims = jwtClaimPath(name);
    if (claims) out.dynamicMetadata.push(claimMatcher(claims, m));
    else out.headers.push(headerMatcher(name, m));
  }
  for (const [name, m] of Object.entries(match.withoutHeaders ?? {})) {
    const claims = jwtClaimPath(name);
    if (claims) {
      const dm = claimMatcher(claims, m);
      dm.invert = true;
      out.dynamicMetadata.push(dm);
      continue;
    }
    const hm = headerMatcher(name, m);
    hm.invertMatch = true;
    // treat_missing_header_as_empty cannot go with present_match.
    if (!isPresentMatch(m)) hm.treatMissingHeaderAsEmpty = true;
    out.headers.push(hm);
  }
  out.headers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const uri = match.uri;
  if (uri?.exact !== undefined) out.pathSpecifier = { case: "path", value: uri.exact };
  else if (uri?.prefix !== undefined) {
    out.pathSpecifier =
      pathSeparatedPrefix && uri.prefix !== "/"
        ? { case: "pathSeparatedPrefix", value: uri.prefix.replace(/\/$/, "") }
        : { case: "prefix", value: uri.prefix };
  } else if (uri?.regex !== undefined) {
    out.pathSpecifier = { case: "safeRegex", value: create(matcher.RegexMatcherSchema, { regex: uri.regex }) };
  }
  out.caseSensitive = !match.ignoreUriCase;

  if (match.method) out.headers.push(headerMatcher(":method", match.method));
  if (match.authority) out.headers.push(headerMatcher(":authority", match.authority));
  if (match.scheme) out.headers.push(headerMatcher(":scheme", match.scheme));
  for (const [name, m] of Object.entries(match.queryParams ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out.queryParameters.push(queryParameterMatcher(name, m));
  }
  return out;
}

// Every rule without a match matches everything: one shared RouteMatch.
/** The match of everything, shared by every route without a match (generated messages are never changed). */
export const MATCH_ALL = preEncoded(route.RouteMatchSchema, translateRouteMatch(undefined));
/** A match's RouteMatch with each prefix semantics, as far as built. */
interface TranslatedMatch {
  prefix?: route.RouteMatch;
  pathSeparatedPrefix?: route.RouteMatch;
}

// A match's RouteMatch per config object (kept by the per-push copies of a VirtualService, unless the
// match names gateways) and prefix semantics: the routes built from it share one in every push.
const ROUTE_MATCHES = weakTable<VirtualServiceHttpMatch, TranslatedMatch>("route/matches");

/** translateRouteMatch, shared per match object: never change the result. */
export function routeMatchFor(
  memos: Memos,
  match: VirtualServiceHttpMatch | undefined,
  pathSeparatedPrefix: boolean,
): route.RouteMatch {
  if (!match) return MATCH_ALL;
  const routeMatches = memos.weak(ROUTE_MATCHES);
  let translated = routeMatches.get(match);
  if (!translated) {
    translated = {};
    routeMatches.set(match, translated);
  }
  // Shared by many routes: pre-encoded, so that each copies its bytes.
  if (pathSeparatedPrefix) {
    translated.pathSeparatedPrefix ??= preEncoded(route.RouteMatchSchema, translateRouteMatch(match, true));
    return translated.pathSeparatedPrefix;
  }
  translated.prefix ??= preEncoded(route.RouteMatchSchema, translateRouteMatch(match, false));
  return translated.prefix;
}

/**
 * Istio's sourceMatchHTTP: with `gateways`, one must be among the proxy's gateway names; otherwise the
 * proxy's labels must include `sourceLabels` and its namespace equal `sourceNamespace`.
 */
export function sourceMatches(
  match: VirtualServiceHttpMatch | undefined,
  proxy: ProxyNode,
  gatewayNames: ReadonlySet<string>,
): boolean {
  if (!match) return true;
  if (match.gateways && match.gateways.length > 0) return match.gateways.some((g) => gatewayNames.has(g));
  for (const [k, v] of Object.entries(match.sourceLabels ?? {})) {
    if (proxy.labels[k] !== v) return false;
  }
  const proxyNamespace = proxy.metadata.NAMESPACE ?? proxy.configNamespace;
  return !match.sourceNamespace || match.sourceNamespace === proxyNamespace;
}

/** A route whose match is `/` (or `.*`) with no header, query or metadata condition: nothing after it matches. */
export function isCatchAllRoute(r: route.Route): boolean {
  const m = r.match;
  if (!m) return false;
  const p = m.pathSpecifier;
  const catchAll =
    (p.case === "prefix" && p.value === "/") ||
    (p.case === "pathSeparatedPrefix" && p.value === "/") ||
    (p.case === "safeRegex" && p.value.regex === ".*");
  return catchAll && m.headers.length === 0 && m.queryParameters.length === 0 && m.dynamicMetadata.length === 0;
}

/**
 * Catch-all routes moved last, the others keeping their order (Istio's SortVHostRoutes, gateways):
 * `routes` itself when no catch-all comes before another route.
 */
export function sortCatchAllLast(routes: route.Route[]): route.Route[] {
  const firstCatchAll = routes.findIndex(isCatchAllRoute);
  if (firstCatchAll === -1 || routes.every((r, i) => i < firstCatchAll || isCatchAllRoute(r))) return routes;
  return [...routes.filter((r) => !isCatchAllRoute(r)), ...routes.filter(isCatchAllRoute)];
}
