// Listener addresses and names (`<bind>_<port>`, IPv6 not bracketed), and the sniffing timeout.
import { BlockList, isIP, isIPv4 } from "node:net";
import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema } from "@bufbuild/protobuf/wkt";
import { type core, listener } from "../../api/index.ts";
import type { ProxyNode } from "../../model/index.ts";
import { toDuration } from "../duration.ts";
import { socketAddressMessage } from "./message.ts";
import type { ListenerEnv } from "./types.ts";

export function listenerName(bind: string, port: number): string {
  return `${bind}_${port}`;
}

export function socketAddress(address: string, port: number): core.Address {
  return socketAddressMessage(address, port);
}

/** `0.0.0.0`, or `::` for a proxy with only IPv6 addresses. */
export function wildcardAddress(proxy: ProxyNode): string {
  return proxy.ipAddresses.some((ip) => isIPv4(ip)) ? "0.0.0.0" : "::";
}

/** Addresses that are not global unicast in Go's sense (IP.IsGlobalUnicast). */
const NOT_GLOBAL_UNICAST = new BlockList();
NOT_GLOBAL_UNICAST.addAddress("0.0.0.0");
NOT_GLOBAL_UNICAST.addAddress("255.255.255.255");
NOT_GLOBAL_UNICAST.addSubnet("127.0.0.0", 8);
NOT_GLOBAL_UNICAST.addSubnet("169.254.0.0", 16);
NOT_GLOBAL_UNICAST.addSubnet("224.0.0.0", 4);
NOT_GLOBAL_UNICAST.addAddress("::", "ipv6");
NOT_GLOBAL_UNICAST.addAddress("::1", "ipv6");
NOT_GLOBAL_UNICAST.addSubnet("fe80::", 10, "ipv6");
NOT_GLOBAL_UNICAST.addSubnet("ff00::", 8, "ipv6");

/** An IP that is neither unspecified, loopback, link-local, multicast nor broadcast. */
export function isGlobalUnicast(ip: string): boolean {
  const family = isIP(ip);
  return family !== 0 && !NOT_GLOBAL_UNICAST.check(ip, family === 4 ? "ipv4" : "ipv6");
}

/** `127.0.0.1`, or `::1` for a proxy with only IPv6 addresses. */
export function localhostAddress(proxy: ProxyNode): string {
  return proxy.ipAddresses.some((ip) => isIPv4(ip)) ? "127.0.0.1" : "::1";
}

/** MeshConfig protocolDetectionTimeout (Istio's default 0s: wait for the client's first bytes forever). */
export function protocolDetectionTimeout(env: ListenerEnv): Duration {
  return toDuration(env.mesh.protocolDetectionTimeout ?? "0s") ?? create(DurationSchema, {});
}

/**
 * Node metadata INBOUND_/OUTBOUND_LISTENER_EXACT_BALANCE: spread accepted connections exactly
 * over Envoy's worker threads.
 */
export function connectionBalance(
  proxy: ProxyNode,
  direction: "inbound" | "outbound",
): listener.Listener_ConnectionBalanceConfig | undefined {
  const exact =
    direction === "inbound"
      ? proxy.metadata.INBOUND_LISTENER_EXACT_BALANCE
      : proxy.metadata.OUTBOUND_LISTENER_EXACT_BALANCE;
  if (!exact) return undefined;
  return create(listener.Listener_ConnectionBalanceConfigSchema, {
    balanceType: { case: "exactBalance", value: create(listener.Listener_ConnectionBalanceConfig_ExactBalanceSchema) },
  });
}
