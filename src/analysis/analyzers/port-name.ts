// service.PortNameAnalyzer: Service ports must name their protocol (<protocol>[-suffix] or appProtocol);
// an ExternalName Service gets its own message, and a port named "tcp" is wrong there too.
import { kubePortProtocol } from "../../registry/kube.ts";
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, isIstioControlPlane, labelsOf, specOf } from "../resource.ts";

const GATEWAY_MANAGED_LABEL = "gateway.istio.io/managed";
// Services that Istio's Gateway API controllers create for their gateways.
const MANAGED_GATEWAY_CONTROLLERS = new Set([
  "istio.io-gateway-controller",
  "istio.io-mesh-controller",
  "istio.io-eastwest-controller",
]);

export const portNameAnalyzer: Analyzer = {
  name: "service.PortNameAnalyzer",
  description: "Checks the port names associated with each service",
  inputs: [K.Service],
  analyze(ctx) {
    for (const service of ctx.list(K.Service)) {
      if (isIstioControlPlane(service)) continue;
      if (MANAGED_GATEWAY_CONTROLLERS.has(labelsOf(service)[GATEWAY_MANAGED_LABEL] ?? "")) continue;
      const spec = specOf(service);
      const externalName = spec.type === "ExternalName";
      for (const [i, port] of asArray(spec.ports).map(asRecord).entries()) {
        const name = asString(port.name);
        const number = Number(port.port ?? 0);
        const appProtocol = typeof port.appProtocol === "string" ? port.appProtocol : undefined;
        const unsupported =
          kubePortProtocol(number, name, asString(port.protocol), appProtocol) === "UnsupportedProtocol";
        if (!unsupported && !(name === "tcp" && externalName)) continue;
        const m = externalName
          ? newMessage(MESSAGES.ExternalNameServiceTypeInvalidPortName, service)
          : newMessage(
              MESSAGES.PortNameIsNotUnderNamingConvention,
              service,
              name,
              number,
              String(port.targetPort ?? 0),
            );
        ctx.report(atField(m, `{.spec.ports[${i}].port}`));
      }
    }
  },
};
