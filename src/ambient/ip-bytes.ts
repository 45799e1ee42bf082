// IP addresses and CIDR blocks as the bytes WDS carries them in (Go's netip.Addr.AsSlice): 4 bytes for
// IPv4, 16 for IPv6 (an IPv4-mapped IPv6 address stays 16), read exactly as netip parses them.
import { isIPv4, isIPv6 } from "node:net";

/** An address and the prefix length of the block it starts (the address's own bits are kept unmasked). */
export interface IpBlockBytes {
  address: Uint8Array;
  length: number;
}

/** Go's netip.ParseAddr(text).AsSlice(): a dotted quad, or IPv6 with an optional non-empty zone (dropped). */
export function ipAddressBytes(text: string): Uint8Array | undefined {
  if (isIPv4(text)) return Uint8Array.from(text.split(".").map(Number));
  const percent = text.indexOf("%");
  if (percent >= 0 && percent === text.length - 1) return undefined;
  const bare = percent < 0 ? text : text.slice(0, percent);
  return isIPv6(bare) ? ipv6Bytes(bare) : undefined;
}

/** Go's netip.ParsePrefix: an address without a zone, `/`, and a decimal length without leading zeros. */
export function ipPrefixBytes(text: string): IpBlockBytes | undefined {
  const slash = text.lastIndexOf("/");
  if (slash < 0) return undefined;
  const addressText = text.slice(0, slash);
  const bitsText = text.slice(slash + 1);
  if (addressText.includes("%") || !/^(0|[1-9][0-9]*)$/.test(bitsText)) return undefined;
  const address = ipAddressBytes(addressText);
  const length = Number(bitsText);
  if (address === undefined || length > address.length * 8) return undefined;
  return { address, length };
}

/** Istio's reading of a policy's IP value: a CIDR block when it has a `/`, else a single address. */
export function ipBlockBytes(text: string): IpBlockBytes | undefined {
  if (text.includes("/")) return ipPrefixBytes(text);
  const address = ipAddressBytes(text);
  return address && { address, length: address.length * 8 };
}

/**
 * Istio's reading of a ServiceEntry address (parseCidrOrIP): a CIDR block masked to its first address,
 * else a single address as a block of its full length.
 */
export function ipCidrBytes(text: string): IpBlockBytes | undefined {
  const block = ipBlockBytes(text);
  if (!block) return undefined;
  const address = block.address.map((byte, i) => {
    const kept = Math.min(8, Math.max(0, block.length - 8 * i));
    return byte & (0xff << (8 - kept)) & 0xff;
  });
  return { address, length: block.length };
}

/** The 16 bytes of an IPv6 address `isIPv6` accepts (no zone): groups around one `::`, maybe a dotted tail. */
function ipv6Bytes(text: string): Uint8Array {
  const words = (part: string): number[] =>
    part === ""
      ? []
      : part.split(":").flatMap((group) => {
          if (!group.includes(".")) return [Number.parseInt(group, 16)];
          const [a, b, c, d] = group.split(".").map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const gap = text.indexOf("::");
  const head = words(gap < 0 ? text : text.slice(0, gap));
  const tail = gap < 0 ? [] : words(text.slice(gap + 2));
  const all = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  all.forEach((word, i) => {
    bytes[2 * i] = word >> 8;
    bytes[2 * i + 1] = word & 0xff;
  });
  return bytes;
}
