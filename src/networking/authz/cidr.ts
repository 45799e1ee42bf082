// An IP or CIDR value of a policy (ipBlocks, source.ip, destination.ip, ...) as an Envoy CidrRange,
// the way Istio converts it (Go netip): a bare address is a /32 or /128, a CIDR keeps its address
// bits unmasked, addresses print in their canonical form.
import { isIPv4, isIPv6 } from "node:net";
import { create } from "@bufbuild/protobuf";
import { core } from "../../api/index.ts";

/** The CidrRange of `value`, or why it is not an address or CIDR. */
export function cidrRange(value: string): core.CidrRange | { error: string } {
  if (value === "") return { error: "empty address" };
  const slash = value.indexOf("/");
  if (slash < 0) {
    const address = canonicalAddress(value, true);
    if (address === undefined) return { error: `ParseAddr(${JSON.stringify(value)}): invalid IP address` };
    return range(address, isIPv4(address) ? 32 : 128);
  }
  const address = canonicalAddress(value.slice(0, slash), false);
  const bitsText = value.slice(slash + 1);
  const bits = /^(0|[1-9][0-9]*)$/.test(bitsText) ? Number(bitsText) : Number.NaN;
  const maxBits = address !== undefined && isIPv4(address) ? 32 : 128;
  if (address === undefined || !(bits <= maxBits)) {
    return { error: `netip.ParsePrefix(${JSON.stringify(value)}): invalid prefix` };
  }
  return range(address, bits);
}

function range(addressPrefix: string, bits: number): core.CidrRange {
  return create(core.CidrRangeSchema, { addressPrefix, prefixLen: bits });
}

/** Go's netip.Addr String form, or undefined when `text` is not an address. */
function canonicalAddress(text: string, allowZone: boolean): string | undefined {
  if (isIPv4(text)) return text;
  const percent = text.indexOf("%");
  const zone = percent >= 0 ? text.slice(percent) : "";
  const bare = percent >= 0 ? text.slice(0, percent) : text;
  if ((zone !== "" && (!allowZone || zone === "%")) || !isIPv6(bare)) return undefined;
  // The WHATWG URL parser prints IPv6 in RFC 5952 form, as Go does, except that Go keeps an
  // IPv4-mapped address's dotted tail.
  const compressed = new URL(`http://[${bare}]`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (mapped) {
    const high = Number.parseInt(mapped[1], 16);
    const low = Number.parseInt(mapped[2], 16);
    return `::ffff:${high >> 8}.${high & 255}.${low >> 8}.${low & 255}${zone}`;
  }
  return compressed + zone;
}
