// The address pools of the IP autoallocation controller (Istio's ipallocate prefixUse): a prefix whose
// addresses are handed out in order from its first after the prefix address, each used address
// recorded with the ServiceEntry ("namespace/name") that holds it. The search starts after the last
// address handed out and wraps to the start once; freeing an address below that point moves the
// search back to it, so freed addresses are used again first.
import { isIPv4, isIPv6 } from "node:net";

/** An address as a number, with its family. */
interface Ip {
  readonly v6: boolean;
  readonly value: bigint;
}

/**
 * The address `text` names in Go's netip.Addr.String form (IPv6 per RFC 5952, an IPv4-mapped IPv6
 * address as IPv4, as Unmap makes it), or undefined when it is not an address.
 */
export function canonicalIp(text: string): string | undefined {
  const ip = parseIp(text);
  return ip && formatIp(ip);
}

function parseIp(text: string): Ip | undefined {
  if (isIPv4(text)) return { v6: false, value: v4Value(text) };
  if (!isIPv6(text)) return undefined;
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const groups = (part: string | undefined) => (part ? part.split(":") : []);
  // A dotted IPv4 tail stands for the last two groups.
  const words = (list: string[]) =>
    list.flatMap((g) => (g.includes(".") ? [(v4Value(g) >> 16n) & 0xffffn, v4Value(g) & 0xffffn] : [BigInt(`0x${g}`)]));
  const high = words(groups(head));
  const low = words(groups(tail));
  const all = tail === undefined ? high : [...high, ...new Array(8 - high.length - low.length).fill(0n), ...low];
  const value = all.reduce((acc, word) => (acc << 16n) | word, 0n);
  return value >> 32n === 0xffffn ? { v6: false, value: value & 0xffffffffn } : { v6: true, value };
}

function v4Value(text: string): bigint {
  return text.split(".").reduce((acc, octet) => (acc << 8n) | BigInt(octet), 0n);
}

function formatIp({ v6, value }: Ip): string {
  if (!v6) return [24n, 16n, 8n, 0n].map((shift) => (value >> shift) & 0xffn).join(".");
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => ((value >> shift) & 0xffffn).toString(16));
  // The URL parser writes IPv6 in RFC 5952 form, as Go does (a mapped address never gets here).
  return new URL(`http://[${groups.join(":")}]`).hostname.slice(1, -1);
}

export class AddressPool {
  readonly v6: boolean;
  readonly #first: bigint;
  readonly #network: bigint;
  readonly #mask: bigint;
  readonly #max: bigint;
  /** Used addresses (canonical text) and their owners. */
  readonly #used = new Map<string, string>();
  /** Where the next search starts; may lie outside the prefix (then it starts at the first address). */
  #next: bigint;

  /** `prefix` as "address/bits"; throws when it is not one (istiod refuses to start then). */
  constructor(prefix: string) {
    const slash = prefix.indexOf("/");
    const ip = slash > 0 ? parseIp(prefix.slice(0, slash)) : undefined;
    const bitsText = prefix.slice(slash + 1);
    const width = ip?.v6 ? 128n : 32n;
    if (!ip || !/^(0|[1-9][0-9]*)$/.test(bitsText) || BigInt(bitsText) > width) {
      throw new Error(`invalid IP prefix ${prefix}`);
    }
    this.v6 = width === 128n;
    this.#max = (1n << width) - 1n;
    this.#mask = this.#max ^ ((1n << (width - BigInt(bitsText))) - 1n);
    this.#network = ip.value & this.#mask;
    // Go's prefix.Addr().Next(): the address after the one written, not after the masked network.
    this.#first = ip.value + 1n;
    this.#next = this.#first;
  }

  /** Whether `address` (canonical text of this pool's family) lies in the prefix. */
  contains(address: string): boolean {
    const ip = parseIp(address);
    return ip !== undefined && ip.v6 === this.v6 && this.#within(ip.value);
  }

  /** The next free address, now used by `owner`; undefined when the prefix is exhausted. */
  allocateNext(owner: string): string | undefined {
    let n = this.#next;
    let looped = false;
    if (!this.#within(n)) {
      looped = true;
      n = this.#first;
    }
    while (this.#used.has(this.#text(n))) {
      n++;
      if (!this.#within(n)) {
        if (looped) return undefined;
        looped = true;
        n = this.#first;
      }
    }
    const address = this.#text(n);
    this.#used.set(address, owner);
    this.#next = n + 1n;
    return address;
  }

  /**
   * Records `address` as used by `owner` unless it is outside the prefix or already used; true when
   * another owner holds it (a conflict).
   */
  markUsed(address: string, owner: string): boolean {
    if (!this.contains(address)) return false;
    const holder = this.#used.get(address);
    if (holder === undefined) this.#used.set(address, owner);
    return holder !== undefined && holder !== owner;
  }

  /** Frees `address` if `owner` holds it; the next search starts there when that is earlier. */
  free(address: string, owner: string): void {
    if (this.#used.get(address) !== owner) return;
    this.#used.delete(address);
    const value = parseIp(address)?.value ?? 0n;
    if (!this.#within(this.#next) || value < this.#next) this.#next = value;
  }

  #within(value: bigint): boolean {
    return value <= this.#max && (value & this.#mask) === this.#network;
  }

  #text(value: bigint): string {
    return formatIp({ v6: this.v6, value });
  }
}
