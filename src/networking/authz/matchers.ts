// Envoy matchers for AuthorizationPolicy values, as Istio's authz matcher package writes them.
// A value is exact, `prefix*`, `*suffix` or `*` (presence); `*` is checked first because Envoy
// rejects an empty prefix or suffix.
import { create } from "@bufbuild/protobuf";
import { matcher, route } from "../../api/index.ts";

type StringMatcher = matcher.StringMatcher;
type ValueMatcher = matcher.ValueMatcher;
type MetadataMatcher = matcher.MetadataMatcher;

/** The filter whose dynamic metadata holds the verified JWT payload. */
export const JWT_FILTER = "envoy.filters.http.jwt_authn";
const JWT_PAYLOAD = "payload";

export function exactMatcher(exact: string, ignoreCase = false): StringMatcher {
  return create(matcher.StringMatcherSchema, { ignoreCase, matchPattern: { case: "exact", value: exact } });
}

export function prefixMatcher(prefix: string, ignoreCase = false): StringMatcher {
  return create(matcher.StringMatcherSchema, { ignoreCase, matchPattern: { case: "prefix", value: prefix } });
}

export function suffixMatcher(suffix: string, ignoreCase = false): StringMatcher {
  return create(matcher.StringMatcherSchema, { ignoreCase, matchPattern: { case: "suffix", value: suffix } });
}

export function regexMatcher(regex: string): StringMatcher {
  return create(matcher.StringMatcherSchema, { matchPattern: { case: "safeRegex", value: { regex } } });
}

/** Go's regexp.QuoteMeta: escapes every RE2 metacharacter. */
export function quoteMeta(s: string): string {
  return s.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&");
}

/** A value matcher; `prefix` is put before the value (except for `*`, which matches any non-empty string). */
export function stringMatcher(value: string, prefix = ""): StringMatcher {
  if (value === "*") return regexMatcher(".+");
  if (value.startsWith("*")) {
    const suffix = value.slice(1);
    return prefix === "" ? suffixMatcher(suffix) : regexMatcher(`${prefix}.*${quoteMeta(suffix)}`);
  }
  if (value.endsWith("*")) return prefixMatcher(prefix + value.slice(0, -1));
  return exactMatcher(prefix + value);
}

export function valueStringMatcher(m: StringMatcher): ValueMatcher {
  return create(matcher.ValueMatcherSchema, { matchPattern: { case: "stringMatch", value: m } });
}

/** One value matcher per value, or-ed when there is more than one. */
export function stringOrMatcher(values: readonly string[]): ValueMatcher {
  return orMatcher(values.map((v) => valueStringMatcher(stringMatcher(v))));
}

export function orMatcher(matchers: ValueMatcher[]): ValueMatcher {
  if (matchers.length === 1) return matchers[0];
  return create(matcher.ValueMatcherSchema, { matchPattern: { case: "orMatch", value: { valueMatchers: matchers } } });
}

/** A value matcher that matches a list holding an element `value` matches. */
export function listOneOfMatcher(value: ValueMatcher): ValueMatcher {
  return create(matcher.ValueMatcherSchema, {
    matchPattern: { case: "listMatch", value: { matchPattern: { case: "oneOf", value } } },
  });
}

function headerMatcherWith(name: string, value: string, ignoreCase: boolean): route.HeaderMatcher {
  if (value === "*") {
    return create(route.HeaderMatcherSchema, { name, headerMatchSpecifier: { case: "presentMatch", value: true } });
  }
  let m: StringMatcher;
  if (value.startsWith("*")) m = suffixMatcher(value.slice(1), ignoreCase);
  else if (value.endsWith("*")) m = prefixMatcher(value.slice(0, -1), ignoreCase);
  else m = exactMatcher(value, ignoreCase);
  return create(route.HeaderMatcherSchema, { name, headerMatchSpecifier: { case: "stringMatch", value: m } });
}

/** A request header matcher (case-sensitive value). */
export function headerMatcher(name: string, value: string): route.HeaderMatcher {
  return headerMatcherWith(name, value, false);
}

/** A host matcher: host names compare without case. */
export function hostMatcher(name: string, value: string): route.HeaderMatcher {
  return headerMatcherWith(name, value, true);
}

export function pathMatcher(path: string): matcher.PathMatcher {
  return create(matcher.PathMatcherSchema, { rule: { case: "path", value: stringMatcher(path) } });
}

function metadataPath(keys: readonly string[]): matcher.MetadataMatcher_PathSegment[] {
  return keys.map((key) => create(matcher.MetadataMatcher_PathSegmentSchema, { segment: { case: "key", value: key } }));
}

/** Matches `value` against the dynamic metadata of `filter` at `keys`. */
export function metadataMatcher(filter: string, keys: readonly string[], value: ValueMatcher): MetadataMatcher {
  return create(matcher.MetadataMatcherSchema, { filter, path: metadataPath(keys), value });
}

export function metadataStringMatcher(filter: string, key: string, m: StringMatcher): MetadataMatcher {
  return metadataMatcher(filter, [key], valueStringMatcher(m));
}

/**
 * Matches metadata that is a list with an element `value` matches, or (`orScalar`, as for JWT
 * claims that may be a string or a list) a scalar `value` matches.
 */
export function metadataListMatcher(
  filter: string,
  keys: readonly string[],
  value: ValueMatcher,
  orScalar: boolean,
): MetadataMatcher {
  const list = listOneOfMatcher(value);
  const matched = orScalar
    ? create(matcher.ValueMatcherSchema, { matchPattern: { case: "orMatch", value: { valueMatchers: [list, value] } } })
    : list;
  return metadataMatcher(filter, keys, matched);
}

/** A JWT payload claim (string valued) matcher. */
export function jwtClaimStringMatcher(claim: string, m: StringMatcher): MetadataMatcher {
  return metadataMatcher(JWT_FILTER, [JWT_PAYLOAD, claim], valueStringMatcher(m));
}

/** A JWT payload claim (nested `claims` path) that is, or is a list holding, a value `value` matches. */
export function jwtClaimListMatcher(claims: readonly string[], value: ValueMatcher): MetadataMatcher {
  return metadataListMatcher(JWT_FILTER, [JWT_PAYLOAD, ...claims], value, true);
}
