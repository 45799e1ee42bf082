// The network of an endpoint whose workload does not name one with the topology.istio.io/network label
// (Istio's kube Controller.Network after the label): the system namespace's topology.istio.io/network
// label (the cluster's default network), else meshNetworks: the network whose endpoints name this
// cluster `fromRegistry`, else one whose `fromCidr` holds the endpoint's IP.
import { BlockList, isIP } from "node:net";
import type { ConfigObject, MeshNetworks } from "../config/index.ts";
import type { Collection, FetchContext, Singleton } from "../krt/index.ts";

export const LABEL_NETWORK = "topology.istio.io/network";

/** The network of an address whose workload has no network label; "" when none applies. */
export type NetworkOf = (ctx: FetchContext, address: string) => string;

export interface NetworkSources {
  /** Namespaces, for the system namespace's network label. */
  namespaces?: Collection<ConfigObject>;
  /** Istio's system namespace (istiod's own). */
  systemNamespace: string;
  /** The mesh networks in force: a change re-assigns the networks that were taken from them. */
  meshNetworks: Singleton<MeshNetworks>;
  /** This registry's cluster: meshNetworks `fromRegistry` names it. */
  clusterId: string;
}

/** What an address's network is looked up in, made once for each MeshNetworks. */
interface CompiledNetworks {
  from: MeshNetworks | undefined;
  /** The network whose endpoints name this cluster `fromRegistry`; "" for none. */
  fromRegistry: string;
  byCidr: { name: string; ranges: BlockList }[];
}

function compileNetworks(meshNetworks: MeshNetworks | undefined, clusterId: string): CompiledNetworks {
  // Networks in name order, so that overlapping declarations resolve the same way every time.
  const networks = Object.entries(meshNetworks?.networks ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const fromRegistry =
    networks.find(([, network]) => network.endpoints?.some((e) => e.fromRegistry === clusterId))?.[0] ?? "";
  const byCidr = networks.flatMap(([name, network]) => {
    const cidrs = (network.endpoints ?? []).flatMap((e) => (e.fromCidr ? [e.fromCidr] : []));
    return cidrs.length === 0 ? [] : [{ name, ranges: cidrBlockList(cidrs) }];
  });
  return { from: meshNetworks, fromRegistry, byCidr };
}

export function networkOf(sources: NetworkSources): NetworkOf {
  const byName = sources.namespaces?.addIndex("registry/namespaces-by-name", (ns) =>
    ns.metadata.name ? [ns.metadata.name] : [],
  );
  let compiled = compileNetworks(sources.meshNetworks.get(), sources.clusterId);
  return (ctx, address) => {
    const systemNetwork = byName
      ? ctx.fetchIndex(byName, sources.systemNamespace)[0]?.metadata.labels?.[LABEL_NETWORK]
      : undefined;
    if (systemNetwork) return systemNetwork;
    // Fetched, so that the address's network is looked up again when the mesh networks change.
    const current = ctx.fetchOne(sources.meshNetworks.asCollection());
    if (compiled.from !== current) compiled = compileNetworks(current, sources.clusterId);
    if (compiled.fromRegistry !== "") return compiled.fromRegistry;
    const family = isIP(address);
    if (family === 0) return "";
    const type = family === 6 ? "ipv6" : "ipv4";
    return compiled.byCidr.find(({ ranges }) => ranges.check(address, type))?.name ?? "";
  };
}

/** The CIDRs as one BlockList (a CIDR without a prefix length is ignored, as Go's ParseCIDR rejects it). */
function cidrBlockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [ip = "", prefix] = cidr.split("/");
    const family = isIP(ip);
    if (family === 0 || prefix === undefined) continue;
    list.addSubnet(ip, Number(prefix), family === 6 ? "ipv6" : "ipv4");
  }
  return list;
}
