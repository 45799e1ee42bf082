// Cluster names as Istio builds them (pilot/pkg/model/service.go BuildSubsetKey, BuildInboundSubsetKey,
// BuildDNSSrvSubsetKey) and the names of the clusters every proxy gets (pilot/pkg/networking/util).

import { type Memos, NameMemo, objectTable } from "../../util/index.ts";

export const BLACKHOLE_CLUSTER = "BlackHoleCluster";
export const PASSTHROUGH_CLUSTER = "PassthroughCluster";
export const INBOUND_PASSTHROUGH_CLUSTER = "InboundPassthroughCluster";
/** The dynamic forward proxy cluster of MeshConfig outboundTrafficPolicy ALLOW_ANY_DYNAMIC_DNS. */
export const ALLOW_ANY_DYNAMIC_DNS_CLUSTER = "AllowAnyDynamicDNSCluster";

// Every push names the same clusters, in clusters, EDS and routes: the names are kept (in `memos`).
const OUTBOUND_NAMES = objectTable(
  "cluster/outboundNames",
  () => new NameMemo((hostname, subset, port) => `outbound|${port}|${subset}|${hostname}`),
);
const SNI_DNAT_NAMES = objectTable(
  "cluster/sniDnatNames",
  () => new NameMemo((hostname, subset, port) => `outbound_.${port}_.${subset}_.${hostname}`),
);

/** `outbound|<port>|<subset>|<host>`: the name of an outbound cluster and of its EDS resource. */
export function outboundClusterName(memos: Memos, port: number, subset: string, hostname: string): string {
  return memos.object(OUTBOUND_NAMES).get(hostname, subset, port);
}

/** `inbound|<port>||`: the cluster of a sidecar's inbound port. */
export function inboundClusterName(port: number): string {
  return `inbound|${port}||`;
}

/**
 * `outbound_.<port>_.<subset>_.<host>` (no subset: `outbound_.9080_._.<host>`): the SNI of Istio mTLS,
 * and the SNI-DNAT cluster name on gateways.
 */
export function sniDnatClusterName(memos: Memos, port: number, subset: string, hostname: string): string {
  return memos.object(SNI_DNAT_NAMES).get(hostname, subset, port);
}

export interface ParsedClusterName {
  direction: "outbound" | "inbound" | "inbound-vip";
  port: number;
  subset: string;
  hostname: string;
}

/** Splits an `outbound|…`, `inbound|…` or `inbound-vip|…` name (Istio's ParseSubsetKey); undefined for other names. */
export function parseClusterName(name: string): ParsedClusterName | undefined {
  // Every route's tracing operation parses its cluster name: positions of the 3 separators, no split.
  const first = name.indexOf("|");
  const direction = name.slice(0, first);
  if (direction !== "outbound" && direction !== "inbound" && direction !== "inbound-vip") return undefined;
  const second = name.indexOf("|", first + 1);
  const third = second === -1 ? -1 : name.indexOf("|", second + 1);
  if (third === -1 || name.includes("|", third + 1)) return undefined;
  const port = name.slice(first + 1, second);
  if (!/^\d+$/.test(port)) return undefined;
  return { direction, port: Number(port), subset: name.slice(second + 1, third), hostname: name.slice(third + 1) };
}
