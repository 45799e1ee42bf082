// Go's net/url parsing (url.Parse and url.ParseRequestURI), as far as Istio's RequestAuthentication
// (jwksUri) and WasmPlugin (url) validators depend on it: which strings fail, with Go's error text.
import { goQuote } from "./common/format.ts";

export interface GoUrl {
  /** Lower-cased scheme; empty when the URL has none. */
  scheme: string;
  /** The port after the host (`u.Port()`), empty when absent. */
  port: string;
}

/** Go url.Parse (`viaRequest` false) or url.ParseRequestURI (true). Errors read `parse "<url>": <reason>`. */
export function parseGoUrl(raw: string, viaRequest: boolean): GoUrl | { error: string } {
  let text = raw;
  let fragment: string | undefined;
  if (!viaRequest) {
    const hash = raw.indexOf("#");
    if (hash >= 0) {
      text = raw.slice(0, hash);
      fragment = raw.slice(hash + 1);
    }
  }
  const parsed = parseReference(text, viaRequest);
  if ("error" in parsed) return { error: `parse ${goQuote(text)}: ${parsed.error}` };
  const fragmentError = fragment === undefined ? undefined : escapeError(fragment);
  if (fragmentError !== undefined) return { error: `parse ${goQuote(raw)}: ${fragmentError}` };
  return parsed;
}

function parseReference(raw: string, viaRequest: boolean): GoUrl | { error: string } {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: Go rejects ASCII control bytes.
  if (/[\x00-\x1f\x7f]/.test(raw)) return { error: "net/url: invalid control character in URL" };
  if (raw === "" && viaRequest) return { error: "empty url" };
  if (raw === "*") return { scheme: "", port: "" };
  const split = splitScheme(raw);
  if ("error" in split) return split;
  const scheme = split.scheme.toLowerCase();
  let rest = split.rest;
  const question = rest.indexOf("?");
  if (question >= 0) rest = rest.slice(0, question);
  if (!rest.startsWith("/")) {
    if (scheme !== "") return { scheme, port: "" };
    if (viaRequest) return { error: "invalid URI for request" };
    if (rest.split("/")[0].includes(":")) return { error: "first path segment in URL cannot contain colon" };
  }
  let port = "";
  if ((scheme !== "" || (!viaRequest && !rest.startsWith("///"))) && rest.startsWith("//")) {
    const slash = rest.indexOf("/", 2);
    const authority = slash >= 0 ? rest.slice(2, slash) : rest.slice(2);
    rest = slash >= 0 ? rest.slice(slash) : "";
    const host = parseAuthority(authority);
    if ("error" in host) return host;
    port = host.port;
  }
  const pathError = escapeError(rest);
  return pathError === undefined ? { scheme, port } : { error: pathError };
}

// A scheme is a letter followed by letters, digits, `+`, `-` or `.`, ended by `:`.
function splitScheme(raw: string): { scheme: string; rest: string } | { error: string } {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return { scheme: "", rest: raw };
      continue;
    }
    if (c === ":") {
      if (i === 0) return { error: "missing protocol scheme" };
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    }
    return { scheme: "", rest: raw };
  }
  return { scheme: "", rest: raw };
}

function parseAuthority(authority: string): { port: string } | { error: string } {
  const at = authority.lastIndexOf("@");
  const host = at >= 0 ? authority.slice(at + 1) : authority;
  let port = "";
  if (host.startsWith("[")) {
    const close = host.lastIndexOf("]");
    if (close < 0) return { error: "missing ']' in host" };
    const colonPort = host.slice(close + 1);
    if (!/^(:[0-9]*)?$/.test(colonPort)) return { error: `invalid port ${goQuote(colonPort)} after host` };
    port = colonPort.slice(1);
  } else {
    const colon = host.lastIndexOf(":");
    if (colon >= 0) {
      const colonPort = host.slice(colon);
      if (!/^:[0-9]*$/.test(colonPort)) return { error: `invalid port ${goQuote(colonPort)} after host` };
      port = colonPort.slice(1);
    }
    const bad = [...host].find((c) => c.charCodeAt(0) < 0x80 && !/[a-zA-Z0-9\-_.~!$&'()*+,;=:[\]<>"%]/.test(c));
    if (bad !== undefined) return { error: `invalid character ${goQuote(bad)} in host name` };
  }
  const hostEscape = escapeError(host);
  if (hostEscape !== undefined) return { error: hostEscape };
  if (at >= 0 && !/^[a-zA-Z0-9\-._:~!$&'()*+,;=%@]*$/.test(authority.slice(0, at))) {
    return { error: "net/url: invalid userinfo" };
  }
  return { port };
}

/** Go's unescape: every `%` must start a two-hex-digit escape. */
function escapeError(s: string): string | undefined {
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== "%") continue;
    if (!/^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
      return `invalid URL escape ${goQuote(s.slice(i, i + 3))}`;
    }
    i += 2;
  }
  return undefined;
}
