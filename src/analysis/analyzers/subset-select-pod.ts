// destinationrule.SubsetSelectPodAnalyzer: a DestinationRule's host must be a known service, and each
// subset's labels (with the service's workload selector) must select some pod; pods carry the topology
// labels of their node, as endpoints do.
import { augmentLabels } from "../../registry/workloads.ts";
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { selectorMatches } from "../labels.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import {
  asArray,
  asRecord,
  asString,
  asStringArray,
  asStringMap,
  labelsOf,
  type Resource,
  specOf,
} from "../resource.ts";
import { destinationHost, serviceHostMap } from "../service-lookup.ts";

const LABEL_REGION = "topology.kubernetes.io/region";
const LABEL_ZONE = "topology.kubernetes.io/zone";
const LABEL_SUBZONE = "topology.istio.io/subzone";

export const subsetSelectPodAnalyzer: Analyzer = {
  name: "destinationrule.SubsetSelectPodAnalyzer",
  description: "Checks if pods are selected by subsets in destination rules.",
  inputs: [K.DestinationRule, K.Pod, K.Service, K.ServiceEntry, K.Node],
  analyze(ctx) {
    const services = serviceHostMap(ctx);
    const nodeLabels = new Map(ctx.list(K.Node).map((node) => [node.name, labelsOf(node)]));
    const subsets: { rule: Resource; name: string; selector: Record<string, string>; matched: boolean }[] = [];
    for (const rule of ctx.list(K.DestinationRule)) {
      const spec = specOf(rule);
      const host = asString(spec.host);
      const service = destinationHost(rule.namespace, asStringArray(spec.exportTo), host, services);
      if (!service) {
        ctx.report(newMessage(MESSAGES.UnknownDestinationRuleHost, rule, host));
        continue;
      }
      for (const subset of asArray(spec.subsets).map(asRecord)) {
        const selector = { ...service.workloadSelectorLabels, ...asStringMap(subset.labels) };
        subsets.push({ rule, name: asString(subset.name), selector, matched: false });
      }
    }
    for (const pod of ctx.list(K.Pod)) {
      const nodeName = asString(specOf(pod).nodeName);
      const node = nodeLabels.get(nodeName);
      const labels = augmentLabels(labelsOf(pod), node ? nodeLocality(node) : "", "", nodeName, "");
      for (const subset of subsets)
        if (!subset.matched && selectorMatches(subset.selector, labels)) subset.matched = true;
    }
    for (const subset of subsets) {
      if (!subset.matched)
        ctx.report(newMessage(MESSAGES.DestinationRuleSubsetNotSelectPods, subset.rule, subset.name));
    }
  },
};

/** Istio's LocalityToString of a node's GA topology labels. */
function nodeLocality(labels: Record<string, string>): string {
  return [labels[LABEL_REGION] ?? "", labels[LABEL_ZONE] ?? "", labels[LABEL_SUBZONE] ?? ""]
    .join("/")
    .replace(/\/+$/, "");
}
