// Istio's security value checks (pkg/config/security): the `when` attribute table, service-account,
// trust-domain and wildcard rules, path templates, and the IP and port parsing AuthorizationPolicy uses.
// Each check returns its error messages; an empty list means the values are valid.
import { goMultiError, goQuote } from "./common/format.ts";
import { isIpAddress } from "./common/net.ts";

const MATCH_ONE = "{*}";
const MATCH_ANY = "{**}";
// RFC 3986 pchar: the only characters allowed in a literal segment of a templated path.
const PATH_LITERAL = /^[a-zA-Z0-9\-._~%!$&'()+,;:@=]+$/;

export function checkEmptyValues(key: string, values: readonly string[]): string[] {
  return values.includes("") ? [`empty value not allowed, found in ${key}`] : [];
}

/** Values are exact, prefix (`foo*`), suffix (`*foo`) or presence (`*`) matches. */
export function checkWildcardValues(key: string, values: readonly string[]): string[] {
  const empty = checkEmptyValues(key, values);
  if (empty.length > 0) return empty;
  for (const value of values) {
    const stars = value.split("*").length - 1;
    if (stars > 1) return [`at most one wildcard is allowed, found in ${key}: ${goQuote(value)}`];
    if (stars === 1 && value !== "*" && !value.startsWith("*") && !value.endsWith("*")) {
      return [`wildcard is only allowed at the start or end, found in ${key}: ${goQuote(value)}`];
    }
  }
  return [];
}

export function checkTrustDomainValues(key: string, values: readonly string[]): string[] {
  const wildcard = checkWildcardValues(key, values);
  if (wildcard.length > 0) return wildcard;
  const withSlash = values.find((value) => value.includes("/"));
  return withSlash === undefined ? [] : [`trust domain must not contain '/', found in ${key}: ${goQuote(withSlash)}`];
}

/** Service accounts are `sa` or `namespace/sa`, without wildcards; at most 16 of them. */
export function checkServiceAccounts(key: string, values: readonly string[]): string[] {
  if (values.length > 16) return ["may not have more than 16 values"];
  const expected = "expected format 'serviceAccount' or 'namespace/serviceAccount', found";
  for (const value of values) {
    if (value === "") return [`empty value not allowed, found in ${key}`];
    if (value.includes("*")) return [`wildcard not allowed, found in ${key}`];
    const slashes = value.split("/").length - 1;
    if (slashes > 1) return [`${expected} ${goQuote(value)} in ${key}`];
    if (value.length > 320) return [`value cannot exceed 320 characters, found ${goQuote(value)} in ${key}`];
    if (slashes === 1) {
      const [namespace, account] = value.split("/");
      if (namespace === "") return [`${expected} empty namespace ${goQuote(value)} in ${key}`];
      if (account === "") return [`${expected} empty serviceAccount ${goQuote(value)} in ${key}`];
    }
  }
  return [];
}

/** Paths may use `{*}` (one segment) and a final `{**}` (any segments); other braces are rejected. */
export function checkPathTemplates(key: string, paths: readonly string[]): string[] {
  for (const path of paths) {
    const templated = path.includes(MATCH_ONE) || path.includes(MATCH_ANY);
    const trimmed = trimSlashes(path);
    const invalid = `invalid or unsupported path ${trimmed}, found in ${key}.`;
    let seenMatchAny = false;
    for (const segment of trimmed.split("/")) {
      if (segment === MATCH_ONE || segment === MATCH_ANY) {
        if (seenMatchAny) return [`${invalid} {**} is not the last operator`];
        seenMatchAny = segment === MATCH_ANY;
        continue;
      }
      if (segment.includes("{") || segment.includes("}")) {
        return [`${invalid} Contains '{' or '}' beyond a supported path template`];
      }
      if (templated && !PATH_LITERAL.test(segment)) {
        return [`${invalid} Contains segment ${segment} with invalid string literal`];
      }
    }
  }
  return [];
}

function trimSlashes(path: string): string {
  let start = 0;
  let end = path.length;
  while (start < end && path[start] === "/") start++;
  while (end > start && path[end - 1] === "/") end--;
  return path.slice(start, end);
}

/** Each value is an IP address or, when it contains `/`, a CIDR range (Go netip rules). */
export function validateIPs(values: readonly string[]): string[] {
  const errors: string[] = [];
  for (const value of values) {
    if (value.includes("/")) {
      const problem = prefixProblem(value);
      if (problem !== undefined)
        errors.push(`bad CIDR range (${value}): netip.ParsePrefix(${goQuote(value)}): ${problem}`);
    } else if (!isIpAddress(value)) {
      errors.push(`bad IP address (${value})`);
    }
  }
  return errors;
}

/** Each value is a base-10 port number up to 65535 (Go strconv.ParseUint with 32 bits). */
export function validatePorts(values: readonly string[]): string[] {
  const errors: string[] = [];
  for (const value of values) {
    if (!/^[0-9]+$/.test(value)) {
      errors.push(`bad port (${value}): strconv.ParseUint: parsing ${goQuote(value)}: invalid syntax`);
    } else if (Number(value) > 0xffffffff) {
      errors.push(`bad port (${value}): strconv.ParseUint: parsing ${goQuote(value)}: value out of range`);
    } else if (Number(value) > 65535) {
      errors.push(`bad port (${value}): <nil>`);
    }
  }
  return errors;
}

// Attributes whose values need no check beyond being non-empty.
const FREE_FORM_ATTRIBUTES = new Set([
  "source.namespace",
  "source.principal",
  "request.auth.principal",
  "request.auth.audiences",
  "request.auth.presenter",
  "connection.sni",
]);
const IP_ATTRIBUTES = new Set(["source.ip", "remote.ip", "destination.ip"]);

/**
 * Checks a `when` condition's key and its values. Several errors (IPs, ports) come back as one
 * go-multierror text, as Istio formats them.
 */
export function validateAttribute(key: string, values: readonly string[]): string | undefined {
  const empty = checkEmptyValues(key, values);
  if (empty.length > 0) return empty[0];
  if (key.startsWith("request.headers") || key.startsWith("request.auth.claims")) return mapKeyProblem(key);
  if (key.startsWith("experimental.envoy.filters.")) return mapKeyProblem(key);
  if (IP_ATTRIBUTES.has(key)) return asMultiError(validateIPs(values));
  if (key === "destination.port") return asMultiError(validatePorts(values));
  if (key === "source.serviceAccount") return checkServiceAccounts(key, values)[0];
  if (key === "source.trustDomain") return checkWildcardValues(key, values)[0];
  if (FREE_FORM_ATTRIBUTES.has(key)) return undefined;
  if (key === "destination.namespace") return `attribute ${key} is replaced by the metadata.namespace`;
  if (key.startsWith("destination.labels")) return `attribute ${key} is replaced by the workload selector`;
  if (key === "destination.name" || key === "destination.user") {
    return `deprecated attribute ${key}: only supported in v1alpha1`;
  }
  return `unknown attribute: ${key}`;
}

function asMultiError(items: string[]): string | undefined {
  return items.length === 0 ? undefined : goMultiError(items);
}

// `name[inner]`: a non-empty name, then at least one character between the brackets.
function mapKeyProblem(key: string): string | undefined {
  const open = key.indexOf("[");
  if (key.endsWith("]") && open > 0 && open < key.length - 2) return undefined;
  return `bad key (${key}): should have format a[b]`;
}

/** Why Go netip.ParsePrefix rejects `value`, or undefined when it is a valid prefix. */
function prefixProblem(value: string): string | undefined {
  const slash = value.lastIndexOf("/");
  const address = value.slice(0, slash);
  const bits = value.slice(slash + 1);
  if (!isIpAddress(address)) return `ParseAddr(${goQuote(address)}): unable to parse IP`;
  if (address.includes("%")) return "IPv6 zones cannot be present in a prefix";
  if (!/^(0|[1-9][0-9]{0,2})$/.test(bits)) return `bad bits after slash: ${goQuote(bits)}`;
  const maxBits = address.includes(":") ? 128 : 32;
  return Number(bits) > maxBits ? "prefix length out of range" : undefined;
}
