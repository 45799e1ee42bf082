// HTTP header names and values: match keys, CORS names, header operations and Envoy's
// `%VARIABLE%` value syntax.
import type { Findings } from "../findings.ts";
import { goQuote } from "./format.ts";
import { report } from "./report.ts";

const TCHAR_NAME = /^[!#$%&'*+\-.^_`|~A-Za-z0-9]+$/;
const STRICT_NAME = /^[-_A-Za-z0-9]+$/;
const PROBE_NAME = /^[-A-Za-z0-9]+$/;
const PSEUDO_HEADERS = new Set([":method", ":scheme", ":authority", ":path", ":status"]);
const JWT_CLAIM_PREFIX = "@request.auth.claims";

function headerNameError(name: string, pattern: RegExp): string | undefined {
  if (name === "") return "header name cannot be empty";
  return pattern.test(name) ? undefined : `header name ${name} is not a valid header name`;
}

/** Header names Istio accepts in most places: letters, digits, `-` and `_`. */
export function strictHeaderNameError(name: string): string | undefined {
  return headerNameError(name, STRICT_NAME);
}

/** Probe header names follow Kubernetes: no underscore. */
export function probeHeaderNameError(name: string): string | undefined {
  return headerNameError(name, PROBE_NAME);
}

/** CORS allow/expose header names: `*` or an RFC 7230 token. */
export function corsHeaderNameError(name: string): string | undefined {
  return name === "*" ? undefined : headerNameError(name, TCHAR_NAME);
}

/** `@request.auth.claims.<name>` or `@request.auth.claims[<a>][<b>]` (prefix case-insensitive). */
export function isJwtClaimHeader(name: string): boolean {
  if (!name.toLowerCase().startsWith(JWT_CLAIM_PREFIX)) return false;
  const rest = name.slice(JWT_CLAIM_PREFIX.length);
  return (rest.startsWith(".") && rest.length > 1) || (rest.startsWith("[") && rest.endsWith("]") && rest.length > 2);
}

/** Keys of `headers` / `withoutHeaders` matches: a JWT claim, a pseudo-header or a token. */
export function matchHeaderNameError(name: string): string | undefined {
  if (name === "") return "header name cannot be empty";
  if (isJwtClaimHeader(name) || PSEUDO_HEADERS.has(name)) return undefined;
  return headerNameError(name, TCHAR_NAME);
}

function isInternalHeader(name: string): boolean {
  return name.startsWith(":") || name.toLowerCase() === "host";
}

function isAuthorityHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return lower === ":authority" || lower === "host";
}

/** Request `add`/`set` names: no pseudo-headers except the authority (checked elsewhere). */
export function requestHeaderSetNameError(name: string): string | undefined {
  if (name === "") return "header name cannot be empty";
  return isInternalHeader(name) && !isAuthorityHeader(name)
    ? `invalid header ${goQuote(name)}: header cannot have ":" prefix`
    : undefined;
}

/** Request `remove` and every response operation: neither Host nor pseudo-headers. */
export function headerOperationNameError(name: string): string | undefined {
  if (name === "") return "header name cannot be empty";
  if (name.toLowerCase() === "host") return `invalid header ${goQuote(name)}: cannot set Host header`;
  return name.startsWith(":") ? `invalid header ${goQuote(name)}: header cannot have ":" prefix` : undefined;
}

// Control characters other than tab are not allowed in header values.
function hasForbiddenValueChar(value: string): boolean {
  for (const ch of value) {
    const code = ch.charCodeAt(0);
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true;
  }
  return false;
}

/** Header values for add/set: no control characters and well-formed `%VAR%` / `%VAR(args)%` expressions. */
export function headerValueError(value: string): string | undefined {
  if (hasForbiddenValueChar(value)) return `header value configuration ${value} is invalid`;
  const syntax = envoyFormatError(value);
  return syntax ? `header value configuration: ${syntax}` : undefined;
}

export function validateHeaderValue(value: string, out: Findings): boolean {
  return report(out, headerValueError(value));
}

/** Where the scanner of a header value is: in literal text, in a variable, or in its arguments. */
type FormatState =
  | "literal"
  | "variableName"
  | "argsStart"
  | "beforeString"
  | "inString"
  | "afterString"
  | "beforeArgsEnd"
  | "beforeVariableEnd";

/** The syntax Envoy's header parser accepts; returns its error text or undefined. Only ' ' is whitespace. */
function envoyFormatError(value: string): string | undefined {
  const prefix = "invalid header configuration.";
  let state: FormatState = "literal";
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    const isLast = i === value.length - 1;
    switch (state) {
      case "literal":
        if (ch !== "%") break;
        if (isLast) return `${prefix} Un-escaped %`;
        if (value[i + 1] === "%") i++;
        else state = "variableName";
        break;
      case "variableName":
        if (ch === "%") state = "literal";
        else if (ch === "(") state = "argsStart";
        break;
      case "argsStart":
        // `[` opens a JSON string array; anything else starts one raw argument.
        if (ch === "[") state = "beforeString";
        else if (ch !== " ") state = "inString";
        break;
      case "beforeString":
        if (ch === '"') state = "inString";
        else if (ch !== " ") return `${prefix} Expecting '"'`;
        break;
      case "inString":
        if (ch === "\\") {
          if (isLast) return `${prefix} Un-terminated backslash in JSON string`;
          i++;
        } else if (ch === ")") state = "beforeVariableEnd";
        else if (ch === '"') state = "afterString";
        break;
      case "afterString":
        if (ch === ",") state = "beforeString";
        else if (ch === "]") state = "beforeArgsEnd";
        else if (ch !== " ") return `${prefix} Expecting ',', ']', or whitespace`;
        break;
      case "beforeArgsEnd":
        if (ch === ")") state = "beforeVariableEnd";
        else if (ch !== " ") return `${prefix} Expecting ')' or whitespace after '{}', but found '{}'`;
        break;
      case "beforeVariableEnd":
        if (ch === "%") state = "literal";
        else if (ch !== " ") return `${prefix} Expecting '%' or whitespace after`;
        break;
    }
  }
  return state === "literal" ? undefined : `${prefix} Un-terminated variable expression '${value}'`;
}
