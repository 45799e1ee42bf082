// Istio's XfccAuthenticator (security/pkg/server/ca/authenticate/xfcc_authenticator.go): a gateway on
// a trusted network (TRUSTED_GATEWAY_CIDR, or loopback) terminates the client's mTLS and forwards the
// client certificate's names in Envoy's `x-forwarded-client-cert` header; the identities are each
// element's URI and DNS SANs and subject CN. The header is parsed as github.com/alecholmes/xfccparser does.
import { BlockList, isIP } from "node:net";
import { isLoopback } from "./address.ts";
import type { AuthContext, Authenticator, Caller } from "./authenticator.ts";

export const XFCC_HEADER = "x-forwarded-client-cert";

/** TRUSTED_GATEWAY_CIDR: comma-separated; empty means none (and no XFCC authenticator). */
export function parseTrustedGatewayCidrs(value: string | undefined): string[] {
  return value ? value.split(",") : [];
}

export class XfccAuthenticator implements Authenticator {
  readonly name = "XfccAuthenticator";
  readonly #trusted: BlockList[];

  /** Entries that are not `address/bits` never match (Istio's isInRange). */
  constructor(trustedCidrs: readonly string[]) {
    this.#trusted = trustedCidrs.flatMap((cidr) => {
      const list = cidrBlockList(cidr);
      return list ? [list] : [];
    });
  }

  authenticate(ctx: AuthContext): Caller | Error {
    const header = ctx.header(XFCC_HEADER) ?? "";
    if (ctx.remoteAddress === "" || header === "") {
      return new Error(`caller from ${ctx.remoteAddress} does not have Xfcc header`);
    }
    if (!this.isTrusted(ctx.remoteAddress)) {
      return new Error(
        `caller from ${ctx.remoteAddress} is not in the trusted network. XfccAuthenticator can not be used`,
      );
    }
    const certs = parseXfcc(header);
    if (certs instanceof Error) return new Error(`error in parsing xfcc header: ${certs.message}`);
    if (certs.length === 0) return new Error("xfcc header does not have at least one client certs");
    const identities: string[] = [];
    for (const cert of certs) {
      identities.push(...cert.uri, ...cert.dns);
      if (cert.subjectCommonName !== undefined) identities.push(cert.subjectCommonName);
    }
    return { identities, authenticator: this.name };
  }

  /** Inside a trusted CIDR, or loopback. An IPv4-mapped peer counts as its IPv4 address (Go's listener reports it so). */
  isTrusted(remoteAddress: string): boolean {
    const ip = hostOf(remoteAddress);
    if (ip === undefined) return false;
    const family = isIP(ip);
    if (family === 0) return false;
    const type = family === 4 ? "ipv4" : "ipv6";
    return this.#trusted.some((list) => list.check(ip, type)) || isLoopback(ip);
  }
}

/** A BlockList holding one `address/bits` of one family, or undefined when it does not parse. */
function cidrBlockList(cidr: string): BlockList | undefined {
  const slash = cidr.indexOf("/");
  if (slash === -1) return undefined;
  const address = cidr.slice(0, slash);
  const bitsText = cidr.slice(slash + 1);
  const family = isIP(address);
  const bits = Number(bitsText);
  if (family === 0 || !/^\d+$/.test(bitsText) || bits > (family === 4 ? 32 : 128)) return undefined;
  const list = new BlockList();
  list.addSubnet(address, bits, family === 4 ? "ipv4" : "ipv6");
  return list;
}

/**
 * The IP of `ip:port` or `[ip]:port` (Go's SplitHostPort), also grpc-js's unbracketed `v6:port`;
 * undefined without a port.
 */
function hostOf(address: string): string | undefined {
  const bracketed = /^\[([^\]]+)\]:\d+$/.exec(address);
  if (bracketed) return bracketed[1];
  const colon = address.lastIndexOf(":");
  if (colon <= 0 || !/^\d+$/.test(address.slice(colon + 1))) return undefined;
  const host = address.slice(0, colon);
  // `a:b:port` is only an address with a port when the rest is an IPv6 address (grpc-js's form).
  return host.includes(":") && isIP(host) !== 6 ? undefined : host;
}

/** One element of the header: one client certificate. */
export interface XfccCert {
  by?: string;
  hash?: string;
  cert?: string;
  chain?: string;
  uri: string[];
  dns: string[];
  /** The subject's CN; "" when a subject without CN is given; undefined without a subject. */
  subjectCommonName?: string;
}

type Token = { type: "string"; value: string } | { type: "char"; value: "=" | ";" | "," };

const SEPARATORS = "=;,";

/**
 * xfccparser's lexer: `=`, `;` and `,` separate; `"..."` quotes (inside, `\"` is a quote, and `\,`
 * and `\\` are kept escaped for the subject's own parse); outside quotes `\` escapes a separator or a
 * backslash. Anything else after `\` is an error.
 */
function lex(text: string): Token[] | Error {
  const tokens: Token[] = [];
  let buf = "";
  let quoting = false;
  let escaping = false;
  for (const char of text) {
    if (escaping) {
      if (char === "\\") buf += quoting ? "\\\\" : "\\";
      else if (quoting && char === '"') buf += char;
      else if (quoting && char === ",") buf += "\\,";
      else if (!quoting && SEPARATORS.includes(char)) buf += char;
      else return new Error(`invalid escape character \`${char}\``);
      escaping = false;
    } else if (char === "\\") escaping = true;
    else if (char === '"') {
      if (quoting) {
        tokens.push({ type: "string", value: buf });
        buf = "";
      }
      quoting = !quoting;
    } else if (!quoting && SEPARATORS.includes(char)) {
      if (buf.length > 0) tokens.push({ type: "string", value: buf });
      buf = "";
      tokens.push({ type: "char", value: char as "=" | ";" | "," });
    } else buf += char;
  }
  if (quoting) return new Error("string missing end quote");
  if (escaping) return new Error("string missing escape");
  if (buf.length > 0) tokens.push({ type: "string", value: buf });
  return tokens;
}

/**
 * `key=value` pairs separated by `separator`; with `;` (the header) in groups separated by `,` (one
 * per certificate). Every group needs at least one pair and every pair a value.
 */
function parsePairs(tokens: Token[], separator: ";" | ","): [string, string][][] | Error {
  const groups: [string, string][][] = [];
  let i = 0;
  const next = () => tokens[i];
  while (i < tokens.length) {
    const group: [string, string][] = [];
    for (;;) {
      const key = tokens[i];
      const eq = tokens[i + 1];
      const value = tokens[i + 2];
      if (key?.type !== "string" || eq?.type !== "char" || eq.value !== "=" || value?.type !== "string") {
        return new Error(`unexpected token at ${i} (expected <key>=<value>)`);
      }
      group.push([key.value, value.value]);
      i += 3;
      const sep = next();
      if (sep?.type === "char" && sep.value === separator) i++;
      else break;
    }
    groups.push(group);
    const sep = next();
    if (sep === undefined) break;
    if (separator === "," || sep.type !== "char" || sep.value !== ",") {
      return new Error(`unexpected token at ${i}`);
    }
    i++;
    if (i === tokens.length) return new Error("unexpected end after ','");
  }
  return groups;
}

const SUBJECT_KEYS = new Set(["C", "O", "OU", "CN", "SERIALNUMBER", "L", "ST", "STREET", "POSTALCODE"]);

/** xfccparser's ParseSubject, reduced to the CN Istio reads; "" for an empty subject (none). */
function subjectCommonName(subject: string): string | undefined | Error {
  if (subject === "") return undefined;
  const tokens = lex(subject);
  if (tokens instanceof Error) return new Error(`invalid subject: ${tokens.message}`);
  const groups = parsePairs(tokens, ",");
  if (groups instanceof Error) return new Error(`invalid subject: ${groups.message}`);
  let cn = "";
  for (const [key, value] of groups.flat()) {
    if (!SUBJECT_KEYS.has(key)) return new Error(`unknown subject DN \`${key}\``);
    if (key === "CN") cn = value;
  }
  return cn;
}

/** xfccparser's ParseXFCCHeader: one entry per client certificate, in header order. */
export function parseXfcc(header: string): XfccCert[] | Error {
  if (header === "") return [];
  const tokens = lex(header);
  if (tokens instanceof Error) return new Error(`invalid header format: ${tokens.message}`);
  const groups = parsePairs(tokens, ";");
  if (groups instanceof Error) return new Error(`invalid header format: ${groups.message}`);
  const certs: XfccCert[] = [];
  for (const [index, group] of groups.entries()) {
    const cert: XfccCert = { uri: [], dns: [] };
    for (const [key, value] of group) {
      switch (key) {
        case "By":
          cert.by = value;
          break;
        case "Hash":
          cert.hash = value;
          break;
        case "Cert":
          cert.cert = value;
          break;
        case "Chain":
          cert.chain = value;
          break;
        case "Subject": {
          const cn = subjectCommonName(value);
          if (cn instanceof Error) return new Error(`invalid subject in client cert ${index}: ${cn.message}`);
          cert.subjectCommonName = cn;
          break;
        }
        case "URI":
          cert.uri.push(value);
          break;
        case "DNS":
          cert.dns.push(value);
          break;
        default:
          return new Error(`unknown field ${key} in client cert ${index}`);
      }
    }
    certs.push(cert);
  }
  return certs;
}
