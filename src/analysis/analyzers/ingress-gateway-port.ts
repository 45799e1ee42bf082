// gateway.IngressGatewayPortAnalyzer: a Gateway's selector must match pods, and every server port must
// be a (target) port of a TCP Service port of a Service selecting those pods.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { firstSelectorKey, selectorMatches, selectorString } from "../labels.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asStringMap, labelsOf, specOf } from "../resource.ts";
import { intValue } from "./service-ports.ts";

export const ingressGatewayPortAnalyzer: Analyzer = {
  name: "gateway.IngressGatewayPortAnalyzer",
  description: "Checks a gateway's ports against the gateway's Kubernetes service ports",
  inputs: [K.Gateway, K.Pod, K.Service],
  analyze(ctx) {
    for (const gateway of ctx.list(K.Gateway)) {
      const selector = asStringMap(specOf(gateway).selector);
      // Target ports of the Services' TCP ports, and service port → first target port.
      const servicePorts = new Set<number>();
      const portMapping = new Map<number, number>();
      let matchedPods = 0;
      for (const pod of ctx.list(K.Pod)) {
        const podLabels = labelsOf(pod);
        if (!selectorMatches(selector, podLabels)) continue;
        matchedPods++;
        for (const service of ctx.list(K.Service)) {
          if (service.namespace !== pod.namespace) continue;
          const spec = specOf(service);
          if (!selectorMatches(asStringMap(spec.selector), podLabels)) continue;
          for (const item of asArray(spec.ports)) {
            const port = asRecord(item);
            if (port.protocol !== "TCP") continue;
            const number = Number(port.port ?? 0);
            const target = intValue(port.targetPort);
            if (target === 0) {
              servicePorts.add(number);
              continue;
            }
            servicePorts.add(target);
            if (!portMapping.has(number)) portMapping.set(number, target);
          }
        }
      }
      if (matchedPods === 0) {
        ctx.report(
          atField(
            newMessage(MESSAGES.ReferencedResourceNotFound, gateway, "selector", selectorString(selector)),
            `{.spec.selector.${firstSelectorKey(selectorString(selector))}}`,
          ),
        );
        continue;
      }
      for (const server of asArray(specOf(gateway).servers)) {
        const port = asRecord(server).port;
        if (port === undefined || port === null) continue;
        const number = Number(asRecord(port).number ?? 0);
        if (servicePorts.has(number) || portMapping.has(number)) continue;
        ctx.report(
          atField(
            newMessage(MESSAGES.GatewayPortNotDefinedOnService, gateway, number, selectorString(selector)),
            `{.spec.selector.${firstSelectorKey(selectorString(selector))}}`,
          ),
        );
      }
    }
  },
};
