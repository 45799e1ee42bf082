// services.MultiClusterServiceAnalyzer: a Service present in several clusters must agree on headless or
// not, type, and ports. It only sees Services that carry a cluster (multi-cluster analysis).
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, fullName, type Resource, specOf } from "../resource.ts";

export const multiClusterServiceAnalyzer: Analyzer = {
  name: "services.MultiClusterServiceAnalyzer",
  description: "Check the validity of services in the multi-cluster environment",
  inputs: [K.Service],
  analyze(ctx) {
    const byName = new Map<string, Map<string, Resource>>();
    for (const service of ctx.list(K.Service)) {
      const cluster = service.origin.cluster ?? "";
      if (cluster === "") continue;
      const clusters = byName.get(fullName(service)) ?? new Map<string, Resource>();
      byName.set(fullName(service), clusters);
      clusters.set(cluster, service);
    }
    for (const clusters of byName.values()) {
      if (clusters.size < 2) continue;
      const { inconsistentClusters, reasons } = inconsistencies(clusters);
      if (inconsistentClusters.length === 0) continue;
      const first = [...clusters.values()][0];
      ctx.report(
        newMessage(
          MESSAGES.MultiClusterInconsistentService,
          first,
          first.name,
          first.namespace,
          inconsistentClusters,
          reasons.join("; "),
        ),
      );
    }
  },
};

function inconsistencies(clusters: Map<string, Resource>): { inconsistentClusters: string[]; reasons: string[] } {
  const inconsistent = new Set<string>();
  const reasons = new Set<string>();
  const [firstCluster, firstService] = [...clusters][0];
  const first = specOf(firstService);
  const headless = (spec: Record<string, unknown>) => spec.clusterIP === "None";
  let addedHeadless = false;
  for (const [cluster, service] of clusters) {
    const spec = specOf(service);
    if (!addedHeadless && headless(first) !== headless(spec)) {
      addedHeadless = true;
      for (const c of clusters.keys()) inconsistent.add(c);
      reasons.add("service has mixed mode like headless and clusterIP");
    }
    if (asString(first.type) !== asString(spec.type)) {
      inconsistent.add(cluster);
      reasons.add("service type is inconsistent");
    }
    if (portsKey(first) !== portsKey(spec)) {
      inconsistent.add(cluster);
      reasons.add("service ports are inconsistent");
    }
  }
  if (inconsistent.size > 0) inconsistent.add(firstCluster);
  return { inconsistentClusters: [...inconsistent], reasons: [...reasons].sort() };
}

/** The ports sorted by name, as a canonical string, so equal port lists compare equal. */
function portsKey(spec: Record<string, unknown>): string {
  const ports = asArray(spec.ports)
    .map(asRecord)
    .sort((a, b) => (asString(a.name) < asString(b.name) ? -1 : asString(a.name) > asString(b.name) ? 1 : 0));
  return JSON.stringify(ports.map((p) => Object.fromEntries(Object.entries(p).sort(([a], [b]) => (a < b ? -1 : 1)))));
}
