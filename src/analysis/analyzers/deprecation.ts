// deprecation.DeprecationAnalyzer: removed Istio CRDs (rbac.istio.io) and deprecated fields of
// VirtualServices (fault.delay.percent) and Sidecars (outboundTrafficPolicy.egressProxy).
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, specOf } from "../resource.ts";

const REMOVED_CRDS = [
  ["rbac.istio.io", "ClusterRbacConfig"],
  ["rbac.istio.io", "RbacConfig"],
  ["rbac.istio.io", "ServiceRole"],
  ["rbac.istio.io", "ServiceRoleBinding"],
];

export const deprecationAnalyzer: Analyzer = {
  name: "deprecation.DeprecationAnalyzer",
  description: "Checks for deprecated Istio types and fields",
  inputs: [K.VirtualService, K.Sidecar, K.CustomResourceDefinition],
  analyze(ctx) {
    for (const vs of ctx.list(K.VirtualService)) {
      for (const rule of asArray(specOf(vs).http).map(asRecord)) {
        if (Number(asRecord(asRecord(rule.fault).delay).percent ?? 0) > 0) {
          const detail = "HTTPRoute.fault.delay.percent is deprecated; use HTTPRoute.fault.delay.percentage";
          ctx.report(newMessage(MESSAGES.Deprecated, vs, detail));
        }
      }
    }
    for (const sidecar of ctx.list(K.Sidecar)) {
      const egressProxy = asRecord(specOf(sidecar).outboundTrafficPolicy).egressProxy;
      if (egressProxy !== undefined && egressProxy !== null) {
        ctx.report(newMessage(MESSAGES.Deprecated, sidecar, "OutboundTrafficPolicy.EgressProxy ignored"));
      }
    }
    for (const crd of ctx.list(K.CustomResourceDefinition)) {
      const spec = specOf(crd);
      const group = asString(spec.group);
      const kind = asString(asRecord(spec.names).kind);
      for (const [removedGroup, removedKind] of REMOVED_CRDS) {
        if (group === removedGroup && kind === removedKind) {
          ctx.report(newMessage(MESSAGES.Deprecated, crd, `Custom resource type ${group} ${kind} is removed`));
        }
      }
    }
  },
};
