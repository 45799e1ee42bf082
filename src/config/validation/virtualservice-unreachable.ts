// VirtualService rules that can never match (validation-rules.md §4.5): rules after a match-less
// rule, matches repeated from an earlier rule, and HTTP prefix matches covered by an earlier,
// shorter prefix with the same other conditions. The webhook reports them as warnings; the
// analyzers report them as IST0130 / IST0131 with the same parameters.

import { goQuote } from "./common/format.ts";
import {
  asObject,
  type JsonObject,
  listField,
  mapEntries,
  numberField,
  objectField,
  stringField,
} from "./common/json.ts";

export type RouteKind = "http" | "tcp" | "tls";

/** One unreachable rule or match; `path` is relative to the spec (`http[1].match[0]`). */
export type UnreachableRule =
  | { type: "VirtualServiceUnreachableRule"; path: string; rule: string; reason: string }
  | { type: "VirtualServiceIneffectiveMatch"; path: string; rule: string; match: string; duplicateOf: string };

/** The webhook's warning text for a finding. */
export function unreachableRuleMessage(r: UnreachableRule): string {
  return r.type === "VirtualServiceUnreachableRule"
    ? `virtualService rule ${r.rule} not used (${r.reason})`
    : `virtualService rule ${r.rule} match ${r.match} is not used (duplicate/overlapping match in rule ${r.duplicateOf})`;
}

/** A prefix-URI HTTP match reduced to what the overlap check compares. */
interface PrefixMatch {
  path: string;
  route: string;
  match: string;
  prefix: string;
  port: number;
  method: string;
  authority: string;
  headers: Map<string, string>;
  queryParams: Map<string, string>;
  withoutHeaders: Map<string, string>;
}

/** The unreachable rules and matches of one route list (`spec.http`, `spec.tcp` or `spec.tls`). */
export function findUnreachableRules(kind: RouteKind, routes: unknown[]): UnreachableRule[] {
  const found: UnreachableRule[] = [];
  const unused = (path: string, rule: string, reason: string) =>
    found.push({ type: "VirtualServiceUnreachableRule", path, rule, reason });
  const seen = new Map<string, number>();
  const prefixMatches: PrefixMatch[] = [];
  let matchLessRule = -1;
  routes.forEach((value, ruleIndex) => {
    const route = asObject(value);
    if (!route) return;
    const at = `${kind}[${ruleIndex}]`;
    const name = routeName(kind, route, ruleIndex);
    const matches = listField(route, "match");
    if (!matches) {
      if (matchLessRule >= 0) unused(at, name, "only the last rule can have no matches");
      matchLessRule = ruleIndex;
      return;
    }
    let duplicates = 0;
    matches.forEach((value, matchIndex) => {
      if (matchLessRule >= 0) {
        unused(at, name, "route without matches defined before");
        return;
      }
      const match = asObject(value);
      const key = canonicalJson(kind === "http" && match ? withoutName(match) : value);
      const earlier = seen.get(key);
      if (earlier !== undefined) {
        found.push({
          type: "VirtualServiceIneffectiveMatch",
          path: `${at}.match[${matchIndex}]`,
          rule: name,
          match: matchName(kind, match, matchIndex),
          duplicateOf: earlierName(kind, routes, earlier),
        });
        duplicates++;
        return;
      }
      seen.set(key, ruleIndex);
      if (kind === "http" && match) {
        const prefix = prefixMatch(`${at}.match[${matchIndex}]`, name, match, matchIndex);
        if (prefix) prefixMatches.push(prefix);
      }
    });
    if (duplicates === matches.length) unused(at, name, "all matches used by prior rules");
  });
  found.push(...overlappingPrefixes(prefixMatches));
  return found;
}

function routeName(kind: RouteKind, route: JsonObject, index: number): string {
  const name = kind === "http" ? stringField(route, "name") : "";
  return name !== "" ? goQuote(name) : `#${index}`;
}

function earlierName(kind: RouteKind, routes: unknown[], index: number): string {
  const route = asObject(routes[index]);
  return route ? routeName(kind, route, index) : `#${index}`;
}

function matchName(kind: RouteKind, match: JsonObject | undefined, index: number): string {
  const name = kind === "http" && match ? stringField(match, "name") : "";
  return name !== "" ? goQuote(name) : `#${index}`;
}

function withoutName(match: JsonObject): JsonObject {
  const { name: _name, ...rest } = match;
  return rest;
}

/** A serialization equal for matches Istio's json.Marshal would render equally: key order, nulls, empty lists and zero values do not count. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value)) ?? "null";
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  const obj = asObject(value);
  if (!obj) return value;
  const result: JsonObject = {};
  for (const key of Object.keys(obj).sort()) {
    const v = obj[key];
    if (v === null || v === undefined || v === 0 || v === false) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    result[key] = canonical(v);
  }
  return result;
}

/** `exact:<v>` / `prefix:<v>` / "" for a StringMatch, as the overlap check compares them. */
function exactOrPrefix(value: unknown): string {
  const stringMatch = asObject(value);
  if (!stringMatch) return "";
  const exact = stringField(stringMatch, "exact");
  if (exact !== "") return `exact:${exact}`;
  const prefix = stringField(stringMatch, "prefix");
  return prefix !== "" ? `prefix:${prefix}` : "";
}

function prefixMatch(path: string, route: string, match: JsonObject, matchIndex: number): PrefixMatch | undefined {
  const uri = objectField(match, "uri");
  const prefix = uri ? stringField(uri, "prefix") : "";
  if (prefix === "") return undefined;
  const reduce = (name: string) => new Map(mapEntries(match, name).map(([k, v]) => [k, exactOrPrefix(v)]));
  return {
    path,
    route,
    match: matchName("http", match, matchIndex),
    prefix,
    port: numberField(match, "port"),
    method: exactOrPrefix(objectField(match, "method")) || "exact:GET",
    authority: exactOrPrefix(objectField(match, "authority")),
    headers: reduce("headers"),
    queryParams: reduce("queryParams"),
    withoutHeaders: reduce("withoutHeaders"),
  };
}

function narrowerOrEqual(earlier: string, later: string): boolean {
  return earlier === later || earlier.startsWith(later);
}

function mapCovers(earlier: Map<string, string>, later: Map<string, string>): boolean {
  if (earlier.size !== later.size) return false;
  for (const [key, value] of earlier) {
    const other = later.get(key);
    if (other === undefined || !narrowerOrEqual(value, other)) return false;
  }
  return true;
}

/** Whether `a`, earlier in the list, catches every request `b` would. */
function covers(a: PrefixMatch, b: PrefixMatch): boolean {
  return (
    b.prefix.startsWith(a.prefix) &&
    a.port === b.port &&
    narrowerOrEqual(a.method, b.method) &&
    narrowerOrEqual(a.authority, b.authority) &&
    mapCovers(a.headers, b.headers) &&
    mapCovers(a.queryParams, b.queryParams) &&
    mapCovers(a.withoutHeaders, b.withoutHeaders)
  );
}

function overlappingPrefixes(matches: PrefixMatch[]): UnreachableRule[] {
  return matches.flatMap((a, i) =>
    matches
      .slice(i + 1)
      .filter((b) => b.prefix !== a.prefix && covers(a, b))
      .map(
        (b): UnreachableRule => ({
          type: "VirtualServiceIneffectiveMatch",
          path: b.path,
          rule: b.route,
          match: `${b.match} of prefix ${b.prefix}`,
          duplicateOf: `${a.match} of prefix ${a.prefix} on ${a.route}`,
        }),
      ),
  );
}
