// Peer addresses as Go's net/netip sees them.
import { BlockList, isIPv4, isIPv6 } from "node:net";

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** Go's IP.IsLoopback: 127.0.0.0/8 (IPv4-mapped too) and ::1. */
export function isLoopback(ip: string): boolean {
  if (isIPv4(ip)) return LOOPBACK.check(ip, "ipv4");
  return isIPv6(ip) && LOOPBACK.check(ip, "ipv6");
}
