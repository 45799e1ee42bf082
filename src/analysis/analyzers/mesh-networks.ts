// meshnetworks.MeshNetworksAnalyzer: a network endpoint's fromRegistry must be Mock, Kubernetes,
// External, or a cluster named by a remote secret (label istio/multiCluster=true).
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, labelsOf, specOf } from "../resource.ts";

const BUILT_IN_REGISTRIES = ["Mock", "Kubernetes", "External"];

export const meshNetworksAnalyzer: Analyzer = {
  name: "meshnetworks.MeshNetworksAnalyzer",
  description: "Check the validity of MeshNetworks in the cluster",
  inputs: [K.MeshNetworks, K.Secret],
  analyze(ctx) {
    const registries = new Set(BUILT_IN_REGISTRIES);
    for (const secret of ctx.list(K.Secret)) {
      if (labelsOf(secret)["istio/multiCluster"] !== "true") continue;
      for (const cluster of Object.keys(asRecord(secret.object.data))) registries.add(cluster);
    }
    for (const r of ctx.list(K.MeshNetworks)) {
      for (const [networkName, network] of Object.entries(asRecord(specOf(r).networks))) {
        for (const endpoint of asArray(asRecord(network).endpoints).map(asRecord)) {
          if (!("fromRegistry" in endpoint)) continue;
          const registry = asString(endpoint.fromRegistry);
          if (!registries.has(registry))
            ctx.report(newMessage(MESSAGES.UnknownMeshNetworksServiceRegistry, r, registry, networkName));
        }
      }
    }
  },
};
