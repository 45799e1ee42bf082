// applicationUID.Analyzer: application pods and containers must not run as UID 1337, the proxy's.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, isIstioControlPlane, podSpecOf, type Resource } from "../resource.ts";

const PROXY_UID = 1337;
const EXEMPT_CONTAINERS = new Set(["istio-proxy", "istio-operator"]);

export const appUidAnalyzer: Analyzer = {
  name: "applicationUID.Analyzer",
  description: "Checks invalid application UID",
  inputs: [K.Pod, K.Deployment],
  analyze(ctx) {
    for (const r of [...ctx.list(K.Pod), ...ctx.list(K.Deployment)]) {
      if (isIstioControlPlane(r)) continue;
      if (runsAsProxyUid(r)) ctx.report(newMessage(MESSAGES.InvalidApplicationUID, r));
    }
  },
};

/** The pod, or one of its application containers, runs as the proxy's UID. */
function runsAsProxyUid(r: Resource): boolean {
  const spec = podSpecOf(r);
  const runsAsProxy = (securityContext: unknown) => asRecord(securityContext).runAsUser === PROXY_UID;
  return (
    runsAsProxy(spec.securityContext) ||
    asArray(spec.containers)
      .map(asRecord)
      .some((c) => !EXEMPT_CONTAINERS.has(String(c.name ?? "")) && runsAsProxy(c.securityContext))
  );
}
