// virtualservice.ConflictingMeshGatewayHostsAnalyzer: VirtualServices bound to the mesh gateway must not
// claim the same host in the same scope (a host exported everywhere conflicts with every scope).
import { hostsMatch, MESH_GATEWAY } from "../../model/host.ts";
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asStringArray, fullName, type Resource, specOf } from "../resource.ts";
import { ALL_NAMESPACES, exportToScopes, scopedFqdn } from "../service-lookup.ts";

export const conflictingMeshGatewayHostsAnalyzer: Analyzer = {
  name: "virtualservice.ConflictingMeshGatewayHostsAnalyzer",
  description: "Checks if multiple virtual services associated with the mesh gateway have conflicting hosts",
  inputs: [K.VirtualService],
  analyze(ctx) {
    // "<scope>/<fqdn>" → the mesh VirtualServices claiming it.
    const hosts = new Map<string, Resource[]>();
    for (const vs of ctx.list(K.VirtualService)) {
      const spec = specOf(vs);
      const gateways = asStringArray(spec.gateways);
      if (gateways.length > 0 && !gateways.includes(MESH_GATEWAY)) continue;
      for (const scope of exportToScopes(asStringArray(spec.exportTo), vs.namespace)) {
        for (const host of asStringArray(spec.hosts)) {
          const key = scopedFqdn(scope, vs.namespace, host);
          hosts.set(key, [...(hosts.get(key) ?? []), vs]);
        }
      }
    }
    const reported = new Set<string>();
    for (const [key, claimants] of hosts) {
      const [scope, fqdn] = splitScoped(key);
      const all = scope === ALL_NAMESPACES ? claimants : [...claimants, ...exportedEverywhere(fqdn, hosts)];
      if (all.length < 2) continue;
      const names = all.map(fullName).sort().join(",");
      for (const vs of all) {
        if (reported.has(fullName(vs))) continue;
        reported.add(fullName(vs));
        ctx.report(
          atField(newMessage(MESSAGES.ConflictingMeshGatewayVirtualServiceHosts, vs, names, key), "{.metadata.name}"),
        );
      }
    }
  },
};

function splitScoped(key: string): [string, string] {
  const slash = key.indexOf("/");
  return [key.slice(0, slash), key.slice(slash + 1)];
}

/** The VirtualServices exported to all namespaces whose host matches `fqdn`. */
function exportedEverywhere(fqdn: string, hosts: Map<string, Resource[]>): Resource[] {
  return [...hosts].flatMap(([key, claimants]) => {
    const [scope, host] = splitScoped(key);
    return scope === ALL_NAMESPACES && hostsMatch(fqdn, host) ? claimants : [];
  });
}
