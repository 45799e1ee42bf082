// CEL for `x-kubernetes-validations`: an environment with the Kubernetes CEL library functions the CRDs use,
// programs compiled once per rule text, and the conversion of JSON values to CEL values by their schema.
import { isIP } from "node:net";
import { CelScalar, celEnv, celFunc, celMethod, isCelError, parse, plan } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import type { Schema } from "./types.ts";

const { BOOL, INT, STRING } = CelScalar;

/** What Go's url.ParseRequestURI accepts (the Kubernetes `isURL`/`url` functions): an absolute URL or path. */
function parseRequestURI(text: string): { scheme: string } | undefined {
  if ([...text].some((char) => char < " " || char === "\x7f")) return undefined;
  const beforeQuery = text.split("?")[0];
  if (!/^(?:[^%]|%[0-9A-Fa-f]{2})*$/.test(beforeQuery)) return undefined;
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):(.*)$/s.exec(beforeQuery);
  if (!match) return beforeQuery.startsWith("/") ? { scheme: "" } : undefined;
  const rest = match[2];
  if (!rest.startsWith("/")) return undefined;
  if (rest.startsWith("//") && !validAuthority(rest.slice(2).split("/")[0])) return undefined;
  return { scheme: match[1].toLowerCase() };
}

// Go's parseAuthority: optional userinfo, then a host with an optional numeric port.
function validAuthority(authority: string): boolean {
  const at = authority.lastIndexOf("@");
  if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(authority.slice(0, Math.max(at, 0)))) return false;
  const host = authority.slice(at + 1);
  const hostEnd = host.startsWith("[") ? host.indexOf("]") + 1 : host.lastIndexOf(":");
  if (host.startsWith("[") && hostEnd === 0) return false;
  const port = hostEnd < 0 ? "" : host.slice(hostEnd);
  if (port !== "" && !/^:\d*$/.test(port)) return false;
  return /^[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"%]*$/.test(host);
}

// A URL value is carried as its string: the CRDs only ever call `url(s).getScheme()`.
const kubernetesLibrary = [
  celFunc("isURL", [STRING], BOOL, (text) => parseRequestURI(text) !== undefined),
  celFunc("url", [STRING], STRING, (text) => {
    if (parseRequestURI(text) === undefined) throw new Error(`URL parse error during conversion from string: ${text}`);
    return text;
  }),
  celMethod("getScheme", STRING, [], STRING, function () {
    return parseRequestURI(this)?.scheme ?? "";
  }),
  celFunc("isIP", [STRING], BOOL, (text) => !text.includes("%") && isIP(text) !== 0),
  // Go's strconv.ParseInt, with cel-go's message (Istio's tests look for it).
  celFunc("int", [STRING], INT, (text) => {
    const value = /^[+-]?\d+$/.test(text) ? BigInt(text) : undefined;
    if (value === undefined || value < -(2n ** 63n) || value >= 2n ** 63n) {
      throw new Error("type conversion error from 'string' to 'int'");
    }
    return value;
  }),
];

const env = celEnv({ variables: { self: CelScalar.DYN }, funcs: [...strings, ...kubernetesLibrary] });

export type CelOutcome = { value: unknown } | { error: string };
type Program = (self: unknown) => CelOutcome;

const programs = new Map<string, Program>();

/**
 * The compiled program for a rule. The CRD rules are fixed at build time (a test compiles all of them), so a
 * rule that does not parse is a bug in Sluice, not bad user input: it throws.
 */
export function compileRule(rule: string): Program {
  let program = programs.get(rule);
  if (!program) {
    const run = plan(env, parse(rule));
    program = (self) => {
      const result = run({ self: self as never });
      return isCelError(result) ? { error: result.message } : { value: result };
    };
    programs.set(rule, program);
  }
  return program;
}

/** Rules that compare with the previous object (`oldSelf`) only apply to updates; Sluice validates creates. */
export function isTransitionRule(rule: string): boolean {
  return /\boldSelf\b/.test(rule);
}

const CEL_RESERVED = new Set([
  "true",
  "false",
  "null",
  "in",
  "as",
  "break",
  "const",
  "continue",
  "else",
  "for",
  "function",
  "if",
  "import",
  "let",
  "loop",
  "package",
  "namespace",
  "return",
  "var",
  "void",
  "while",
]);

/** How Kubernetes exposes a property name to CEL: keywords become `__kw__`; `_`, `.`, `-`, `/` are spelled out. */
function celPropertyName(name: string): string {
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  return name
    .replaceAll("__", "__underscores__")
    .replaceAll(".", "__dot__")
    .replaceAll("-", "__dash__")
    .replaceAll("/", "__slash__");
}

/**
 * The CEL value of a JSON value, typed by its schema as Kubernetes does: integers (and int-or-string numbers)
 * become `int`, `number` fields `double`; object properties get CEL names; map keys stay as they are.
 */
export function toCelValue(value: unknown, schema: Schema | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => toCelValue(item, schema?.items));
  if (typeof value === "number") return schema?.type === "number" || !Number.isInteger(value) ? value : BigInt(value);
  if (typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>);
  const properties = schema?.properties;
  const additional = schema?.additionalProperties;
  if (typeof additional === "object") {
    return Object.fromEntries(entries.map(([key, item]) => [key, toCelValue(item, additional)]));
  }
  return Object.fromEntries(entries.map(([key, item]) => [celPropertyName(key), toCelValue(item, properties?.[key])]));
}
