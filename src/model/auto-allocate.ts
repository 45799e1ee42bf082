// Addresses for ServiceEntry hosts without any (Istio's IP autoallocation), which proxies capturing DNS
// use: the NDS name table answers them and outbound TCP listeners bind to them. With
// PILOT_ENABLE_IP_AUTOALLOCATE on (the default) they are those the IP autoallocation controller
// (controllers/ip-autoallocate.ts) recorded in the entry's status, which the registry reads, and an
// entry without any has none, as in istiod. Off, istiod's older in-memory allocation
// (serviceentry/auto_allocation.go) applies instead, for proxies that set DNS_AUTO_ALLOCATE: a slot
// in 240.240.0.0/16 by FNV-1a of `namespace/host` with double hashing on collision, and the
// matching 2001:2::f0f0:<slot> IPv6 address.
import { isIPv4, isIPv6 } from "node:net";
import type { Service } from "../registry/index.ts";
import { UNSPECIFIED_IP } from "../registry/index.ts";
import { compareStrings } from "./config-meta.ts";
import type { ProxyNode } from "./proxy.ts";

const MAX_IPS = 256 * 254;
/** The largest prime below MAX_IPS, for the second hash. */
const PRIME = 65011;

/**
 * Istio's nodeUsesAutoallocatedIPs: proxies that capture DNS, with PILOT_ENABLE_IP_AUTOALLOCATE on
 * (`ipAutoallocate`) or DNS_AUTO_ALLOCATE set.
 */
export function usesAutoAllocatedAddresses(proxy: Pick<ProxyNode, "metadata">, ipAutoallocate: boolean): boolean {
  return proxy.metadata.DNS_CAPTURE === true && (ipAutoallocate || proxy.metadata.DNS_AUTO_ALLOCATE === true);
}

/** Whether the in-memory allocation gives the host an address: no addresses, not wildcard, resolution not NONE. */
function allocatable(service: Service): boolean {
  return (
    service.registry === "External" &&
    service.defaultAddress === UNSPECIFIED_IP &&
    !service.hostname.startsWith("*") &&
    service.resolution !== "Passthrough"
  );
}

/** The in-memory allocation: the addresses (IPv4 then IPv6) of every allocatable service, by `namespace/hostname`. */
export function allocateAddresses(services: readonly Service[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const keys = [...new Set(services.filter(allocatable).map((s) => `${s.namespace}/${s.hostname}`))].sort(
    compareStrings,
  );
  const slots: (string | undefined)[] = new Array(MAX_IPS);
  for (const key of keys.slice(0, MAX_IPS)) {
    const hash = fnv1a32(key);
    let slot = hash % MAX_IPS;
    if (slots[slot] !== undefined) {
      const step = PRIME - (hash % PRIME);
      // Istio computes the probe in uint32 arithmetic (and modulo MAX_IPS - 1).
      for (let i = 1; ; i++) {
        slot = ((hash + Math.imul(i, step)) >>> 0) % (MAX_IPS - 1);
        if (slots[slot] === undefined) break;
      }
    }
    slots[slot] = key;
  }
  let x = 0;
  for (const key of slots) {
    x++;
    if (key === undefined) continue;
    // 240.240.<n>.0 is never handed out: the count skips it, and every later slot shifts by one.
    if (x % 255 === 0) x++;
    const third = Math.floor(x / 255);
    const fourth = x % 255;
    const v6 = third === 0 ? fourth.toString(16) : `${third.toString(16)}${fourth.toString(16)}`;
    out.set(key, [`240.240.${third}.${fourth}`, `2001:2::f0f0:${v6}`]);
  }
  return out;
}

/** The auto-allocated addresses of the families the proxy has (both for a dual-stack proxy). */
export function addressesForProxy(addresses: readonly string[], proxy: Pick<ProxyNode, "ipAddresses">): string[] {
  const v4 = proxy.ipAddresses.some((ip) => isIPv4(ip));
  const v6 = proxy.ipAddresses.some((ip) => isIPv6(ip));
  return addresses.filter((a) => (isIPv4(a) && v4) || (isIPv6(a) && v6));
}

function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}
