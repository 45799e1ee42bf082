// conditions.ConditionAnalyzer: negative status conditions already on resources (waypoint binding,
// ztunnel/waypoint acceptance of AuthorizationPolicies, Gateway API acceptance and programming).
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, type Resource } from "../resource.ts";

const GATEWAY_API_NEGATIVE = { Accepted: "False", Programmed: "False", ResolvedRefs: "False" };
const WAYPOINT_NEGATIVE = { "istio.io/WaypointBound": "False" };

/** Kind → condition type → the status worth reporting, in Istio's order of kinds. */
const NEGATIVE_CONDITIONS: readonly [string, Readonly<Record<string, string>>][] = [
  [K.Service, WAYPOINT_NEGATIVE],
  [K.ServiceEntry, WAYPOINT_NEGATIVE],
  [K.WorkloadEntry, WAYPOINT_NEGATIVE],
  [K.AuthorizationPolicy, { ZtunnelAccepted: "False", WaypointAccepted: "False" }],
  [K.K8sGateway, GATEWAY_API_NEGATIVE],
  [K.HTTPRoute, GATEWAY_API_NEGATIVE],
  [K.GRPCRoute, GATEWAY_API_NEGATIVE],
];

export const conditionAnalyzer: Analyzer = {
  name: "conditions.ConditionAnalyzer",
  description: "Checks for negative status conditions on resources",
  inputs: NEGATIVE_CONDITIONS.map(([kind]) => kind),
  analyze(ctx) {
    for (const [kind, negative] of NEGATIVE_CONDITIONS) {
      for (const r of ctx.list(kind)) {
        for (const condition of conditionsOf(r)) {
          const type = asString(condition.type);
          const report = () =>
            ctx.report(
              newMessage(
                MESSAGES.NegativeConditionStatus,
                r,
                type,
                asString(condition.reason),
                asString(condition.message),
              ),
            );
          if ((negative[type] ?? "") === asString(condition.status)) report();
          if (kind === K.AuthorizationPolicy && type === "WaypointAccepted" && condition.reason === "PartiallyInvalid")
            report();
        }
      }
    }
  },
};

/** The status conditions; for routes, those of every parent. */
function conditionsOf(r: Resource): Record<string, unknown>[] {
  const status = asRecord(r.object.status);
  if (r.kind === K.HTTPRoute || r.kind === K.GRPCRoute) {
    return asArray(status.parents).flatMap((p) => asArray(asRecord(p).conditions).map(asRecord));
  }
  return asArray(status.conditions).map(asRecord);
}
