// IP addresses, CIDR blocks and unix domain socket paths, as Go's net/netip parses them.
import { isIPv4, isIPv6 } from "node:net";
import type { Findings } from "../findings.ts";
import { report } from "./report.ts";

/** Go netip.ParseAddr: a dotted quad without leading zeros, or IPv6 (zone and embedded IPv4 allowed). */
export function isIpAddress(s: string): boolean {
  return isIPv4(s) || isIPv6(s);
}

export function ipAddressError(s: string): string | undefined {
  return isIpAddress(s) ? undefined : `${s} is not a valid IP`;
}

/** Go netip.ParsePrefix: address (no zone) and a decimal prefix length within the address size. */
export function isIpPrefix(s: string): boolean {
  const slash = s.lastIndexOf("/");
  if (slash < 0) return false;
  const addr = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (addr.includes("%") || !/^(0|[1-9][0-9]{0,2})$/.test(bits)) return false;
  const size = isIPv4(addr) ? 32 : isIPv6(addr) ? 128 : 0;
  return size > 0 && Number(bits) <= size;
}

/** Istio's ValidateIPSubnet: a CIDR block when the value has one `/`, else an IP address. */
export function ipSubnetError(s: string): string | undefined {
  if (s.split("/").length === 2) return isIpPrefix(s) ? undefined : `${s} is not a valid CIDR block`;
  return ipAddressError(s);
}

/** The scheme of a unix domain socket address (binds, endpoints): `unix:///path` or `unix://@abstract`. */
export const UNIX_PREFIX = "unix://";

/** Istio's ValidateUnixAddress, on the path after `unix://`: absolute file path or `@abstract`. */
export function unixAddressError(path: string): string | undefined {
  if (path === "") return "unix address must not be empty";
  if (path.startsWith("@")) return undefined;
  return path.startsWith("/") && !path.endsWith("/") ? undefined : `${path} is not an absolute path to a file`;
}

export function validateIpAddress(s: string, out: Findings): boolean {
  return report(out, ipAddressError(s));
}

export function validateIpSubnet(s: string, out: Findings): boolean {
  return report(out, ipSubnetError(s));
}

export function validateUnixAddress(path: string, out: Findings): boolean {
  return report(out, unixAddressError(path));
}

/** Go's net.SplitHostPort: `host:port` or `[host]:port`, with Go's error text (`address <a>: ...`). */
export function splitHostPort(address: string): { host: string; port: string } | { error: string } {
  const fail = (why: string) => ({ error: address === "" ? why : `address ${address}: ${why}` });
  const colon = address.lastIndexOf(":");
  if (colon < 0) return fail("missing port in address");
  let host: string;
  let rest = 0;
  if (address.startsWith("[")) {
    const end = address.indexOf("]");
    if (end < 0) return fail("missing ']' in address");
    if (end + 1 === address.length) return fail("missing port in address");
    if (end + 1 !== colon)
      return fail(address[end + 1] === ":" ? "too many colons in address" : "missing port in address");
    host = address.slice(1, end);
    rest = end + 1;
  } else {
    host = address.slice(0, colon);
    if (host.includes(":")) return fail("too many colons in address");
  }
  if (address.slice(address.startsWith("[") ? 1 : 0).includes("[")) return fail("unexpected '[' in address");
  if (address.slice(rest).includes("]")) return fail("unexpected ']' in address");
  return { host, port: address.slice(colon + 1) };
}
