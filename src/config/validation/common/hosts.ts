// Hostname rules (Istio's host/name and agent FQDN/wildcard checks) and namespace/host pairs.
import type { Findings } from "../findings.ts";
import { goAtoi, goQuote } from "./format.ts";
import { isIpAddress } from "./net.ts";
import { report } from "./report.ts";

const DNS1123_LABEL = /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/;
const WILDCARD_LABEL = /^(\*|(\*|\*-)?[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)$/;
const MAX_DOMAIN_LENGTH = 255;
const MAX_LABEL_LENGTH = 63;

/** A DNS-1123 label; unlike Kubernetes, Istio allows uppercase. */
export function isDns1123Label(s: string): boolean {
  return s.length <= MAX_LABEL_LENGTH && DNS1123_LABEL.test(s);
}

/** `*`, `*foo`, `*-foo` or a DNS-1123 label. */
export function isWildcardLabel(s: string): boolean {
  return s.length <= MAX_LABEL_LENGTH && WILDCARD_LABEL.test(s);
}

function domainPreconditionError(domain: string): string | undefined {
  if (Buffer.byteLength(domain, "utf8") > MAX_DOMAIN_LENGTH) {
    return `domain name ${goQuote(domain)} too long (max ${MAX_DOMAIN_LENGTH})`;
  }
  if (domain.length === 0) return "empty domain name not allowed";
  return undefined;
}

// Every label must be a DNS-1123 label (a trailing dot is fine) and the top-level one not all digits.
function domainLabelsError(domain: string): string | undefined {
  const labels = domain.split(".");
  const tld = labels[labels.length - 1];
  if (goAtoi(tld) !== undefined) {
    return `domain name ${goQuote(domain)} invalid (top level domain ${goQuote(tld)} cannot be all-numeric)`;
  }
  for (let i = 0; i < labels.length; i++) {
    const isTrailingEmpty = i === labels.length - 1 && labels[i] === "";
    if (!isTrailingEmpty && !isDns1123Label(labels[i])) {
      return `domain name ${goQuote(domain)} invalid (label ${goQuote(labels[i])} invalid)`;
    }
  }
  return undefined;
}

/** Istio's ValidateFQDN: a dotted name of DNS-1123 labels (a single label is fine, `*` is not). */
export function fqdnError(host: string): string | undefined {
  return domainPreconditionError(host) ?? domainLabelsError(host);
}

/**
 * Istio's ValidateWildcardDomain: the first label may be a wildcard label. Errors in the rest quote
 * only the rest (`foo.*.com` → `domain name "*.com" ...`), as Istio does.
 */
export function wildcardDomainError(domain: string): string | undefined {
  const pre = domainPreconditionError(domain);
  if (pre) return pre;
  const dot = domain.indexOf(".");
  const first = dot < 0 ? domain : domain.slice(0, dot);
  if (!isWildcardLabel(first)) return `domain name ${goQuote(domain)} invalid (label ${goQuote(first)} invalid)`;
  return dot < 0 ? undefined : domainLabelsError(domain.slice(dot + 1));
}

/** `*` alone and `*.` prefixes are the only wildcards Istio allows in most host fields. */
export function partialWildcardError(host: string): string | undefined {
  return host.includes("*") && host.length !== 1 && !host.startsWith("*.")
    ? `partial wildcard ${goQuote(host)} not allowed`
    : undefined;
}

/**
 * Hosts of a VirtualService bound to a gateway: with `sni`, Istio's internal
 * `outbound_.<PORT>_._.<HOSTNAME>` SNI form is allowed; otherwise the wildcard-domain rule.
 */
export function gatewayBoundVirtualServiceHostError(sni: boolean, domain: string): string | undefined {
  const pre = domainPreconditionError(domain);
  if (pre) return pre;
  if (sni && domain.startsWith("outbound_")) {
    const parts = domain.split("_");
    if (parts.length < 4) {
      return `domain name ${domain} invalid, should follow 'outbound_.<PORT>_._.<HOSTNAME>' format`;
    }
    const port = trimDots(parts[1]);
    const hostname = trimDots(parts[3]);
    if (!/[0-9]/.test(port)) return outboundSniLabelError(domain, port);
    if (!/[a-zA-Z]/.test(hostname)) return outboundSniLabelError(domain, hostname);
    return undefined;
  }
  return wildcardDomainError(domain);
}

function outboundSniLabelError(domain: string, label: string): string {
  return `domain name ${goQuote(domain)} invalid (label ${goQuote(label)} invalid). should follow outbound_.<PORT>_._.<HOSTNAME> format`;
}

function trimDots(s: string): string {
  return s.replace(/^\.+|\.+$/g, "");
}

/** Reports `fqdnError` on `out`; true when the host is valid. */
export function validateFqdn(host: string, out: Findings): boolean {
  return report(out, fqdnError(host));
}

/** Reports `wildcardDomainError` on `out`; true when the domain is valid. */
export function validateWildcardDomain(domain: string, out: Findings): boolean {
  return report(out, wildcardDomainError(domain));
}

/** Which resource a `namespace/host` entry belongs to: the rules differ slightly. */
export type HostOwner = "gateway" | "sidecar";

/**
 * Istio's ValidateNamespaceSlashWildcardHostname: Gateway server hosts and Sidecar egress hosts.
 * `gatewaySemantics` (Gateway API–derived gateways) also allows the `~` namespace in a gateway.
 */
export function validateNamespaceHost(host: string, owner: HostOwner, gatewaySemantics: boolean, out: Findings): void {
  const slash = host.indexOf("/");
  if (slash < 0 && owner === "sidecar") {
    out.error("host must be of form namespace/dnsName");
    return;
  }
  const dnsName = slash < 0 ? host : host.slice(slash + 1);
  if (slash >= 0) {
    const namespace = host.slice(0, slash);
    if (namespace === "" || dnsName === "") out.error("config namespace and dnsName in host entry cannot be empty");
    if (owner === "sidecar") {
      const ns = namespace.startsWith("~") ? namespace.slice(1) : namespace;
      if (ns !== "" && ns !== "*" && ns !== "." && !isDns1123Label(ns)) {
        out.error(`invalid namespace value ${goQuote(namespace)} in sidecar`);
      }
    } else {
      const allowed =
        namespace === "*" || namespace === "." || isDns1123Label(namespace) || (gatewaySemantics && namespace === "~");
      if (!allowed) out.error(`invalid namespace value ${goQuote(namespace)} in gateway`);
    }
  }
  if (dnsName !== "*" && !dnsName.includes(".")) out.error("short names (non FQDN) are not allowed");
  const domainError = wildcardDomainError(dnsName);
  if (domainError) {
    // Istio appends the error for sidecars unconditionally and again (for everyone) unless the host is an IP.
    if (owner === "sidecar") out.error(domainError);
    if (!isIpAddress(dnsName)) out.error(domainError);
  }
  report(out, partialWildcardError(dnsName));
}
