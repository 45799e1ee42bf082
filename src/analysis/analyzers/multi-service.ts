// deployment.MultiServiceAnalyzer: a mesh Deployment must not be selected by Services that use the same
// port with different protocols, or that send different ports to the same target port.
import type { Analyzer } from "../analyzer.ts";
import { inMesh } from "../in-mesh.ts";
import { K } from "../kinds.ts";
import { selectorMatches } from "../labels.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, asStringMap, fullName, labelsOf, type Resource, specOf } from "../resource.ts";

const GATEWAY_MANAGED_LABEL = "gateway.istio.io/managed";
const WAYPOINT_CONTROLLER = "istio.io-mesh-controller";

export const multiServiceAnalyzer: Analyzer = {
  name: "deployment.MultiServiceAnalyzer",
  description: "Checks association between services and pods",
  inputs: [K.Service, K.Deployment, K.Namespace],
  analyze(ctx) {
    for (const deployment of ctx.list(K.Deployment)) {
      if (labelsOf(deployment)[GATEWAY_MANAGED_LABEL] === WAYPOINT_CONTROLLER || !inMesh(ctx, deployment)) continue;
      const templateLabels = asStringMap(asRecord(asRecord(specOf(deployment).template).metadata).labels);
      const services = ctx.list(K.Service).filter((service) => {
        const selector = asStringMap(specOf(service).selector);
        return (
          Object.keys(selector).length > 0 &&
          selectorMatches(selector, templateLabels) &&
          service.namespace === deployment.namespace
        );
      });
      checkProtocols(deployment, services, (m) => ctx.report(atField(m, "{.metadata.name}")));
      checkTargetPorts(deployment, services, (m) => ctx.report(atField(m, "{.metadata.name}")));
    }
  },
};

type Report = (m: ReturnType<typeof newMessage>) => void;

function portsOf(service: Resource): Record<string, unknown>[] {
  return asArray(specOf(service).ports).map(asRecord);
}

function checkProtocols(deployment: Resource, services: Resource[], report: Report): void {
  const byPort = new Map<number, Map<string, string[]>>();
  for (const service of services) {
    for (const port of portsOf(service)) {
      const number = Number(port.port ?? 0);
      const protocols = byPort.get(number) ?? new Map<string, string[]>();
      byPort.set(number, protocols);
      const protocol = asString(port.protocol) || "TCP";
      protocols.set(protocol, [...(protocols.get(protocol) ?? []), fullName(service)]);
    }
  }
  for (const [port, protocols] of byPort) {
    if (protocols.size < 2) continue;
    const names = [...protocols.values()].flat().sort();
    report(newMessage(MESSAGES.DeploymentAssociatedToMultipleServices, deployment, deployment.name, port, names));
  }
}

function checkTargetPorts(deployment: Resource, services: Resource[], report: Report): void {
  // target port → service port → the (last) Service using it
  const byTarget = new Map<string, Map<number, string>>();
  for (const service of services) {
    for (const port of portsOf(service)) {
      const number = Number(port.port ?? 0);
      let target = port.targetPort === undefined || port.targetPort === null ? "" : String(port.targetPort);
      if (target === "0" || target === "") target = String(number);
      const ports = byTarget.get(target) ?? new Map<number, string>();
      byTarget.set(target, ports);
      ports.set(number, fullName(service));
    }
  }
  for (const [target, ports] of byTarget) {
    if (ports.size < 2) continue;
    const names = [...ports.values()].sort();
    const numbers = [...ports.keys()].sort((a, b) => a - b).map(String);
    report(newMessage(MESSAGES.DeploymentConflictingPorts, deployment, deployment.name, names, target, numbers));
  }
}
