// Which policies of a kind attach to a workload (Istio's WorkloadPolicyMatcher, for
// RequestAuthentication, AuthorizationPolicy, Telemetry, WasmPlugin): those of the root
// namespace and of the workload's namespace, oldest first. A policy with targetRef(s) attaches
// only to the Gateway API gateway it names, in its own namespace; otherwise its selector (none:
// every workload) must match the workload's labels. A waypoint, asking for the policies of one of
// its services, takes only targeted policies: those naming its Gateway, the service (from the
// service's namespace), or the `istio-waypoint` GatewayClass (from the root namespace).
import type { ConfigObject } from "../config/index.ts";
import type { Selector, TargetRef } from "../config/types/index.ts";
import { labelsContain } from "../krt/index.ts";
import { compareByCreationTime, namespaceOf } from "./config-meta.ts";
import { appendTo } from "./multimap.ts";

/** The pod label naming the Gateway API gateway a deployment serves. */
export const GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";

export interface WorkloadPolicySpec {
  selector?: Selector;
  targetRef?: TargetRef;
  targetRefs?: TargetRef[];
}

export interface PolicyWorkload {
  namespace: string;
  labels: Readonly<Record<string, string>>;
  /** A waypoint proxy (Istio's IsWaypoint), with the service whose policies are asked for, if any. */
  waypoint?: { service?: PolicyService };
}

/** A service policies may target (Istio's ServiceInfoForPolicyMatcher). */
export interface PolicyService {
  /** The name of the Service or ServiceEntry object. */
  name: string;
  namespace: string;
  registry: "Kubernetes" | "External";
}

/** The GatewayClass of Istio's waypoints: root namespace policies naming it attach to every waypoint. */
const WAYPOINT_GATEWAY_CLASS = "istio-waypoint";
const GATEWAY_API_GROUP = "gateway.networking.k8s.io";

/** How a policy says where it attaches. */
export interface PolicyAttachment {
  /** Labels the workload must have; undefined or empty selects every workload. */
  selector?: Readonly<Record<string, string>>;
  targetRefs: readonly TargetRef[];
}

/** The attachment of the kinds that use `selector`, `targetRef` and `targetRefs`. */
export function policyAttachment(policy: ConfigObject<WorkloadPolicySpec>): PolicyAttachment {
  const spec = policy.spec ?? {};
  return {
    selector: spec.selector?.matchLabels,
    targetRefs: [...(spec.targetRef ? [spec.targetRef] : []), ...(spec.targetRefs ?? [])],
  };
}

export class WorkloadPolicyIndex<T extends ConfigObject> {
  private readonly byNamespace = new Map<string, T[]>();

  constructor(
    configs: readonly T[],
    private readonly rootNamespace: string,
    private readonly attachmentOf: (policy: T) => PolicyAttachment,
  ) {
    for (const config of [...configs].sort(compareByCreationTime)) {
      const namespace = namespaceOf(config);
      appendTo(this.byNamespace, namespace, config);
    }
  }

  /** Every policy in `namespace`, oldest first. */
  inNamespace(namespace: string): readonly T[] {
    return this.byNamespace.get(namespace) ?? [];
  }

  /**
   * The policies attaching to `workload`: root namespace first, then the workload's namespace, then
   * (a waypoint's service) the service's.
   */
  forWorkload(workload: PolicyWorkload): T[] {
    const service = workload.waypoint?.service;
    const namespaces = [...new Set([this.rootNamespace, workload.namespace, ...(service ? [service.namespace] : [])])];
    return namespaces.flatMap((ns) =>
      this.inNamespace(ns).filter((policy) =>
        attaches(namespaceOf(policy), this.attachmentOf(policy), workload, this.rootNamespace),
      ),
    );
  }
}

function attaches(
  policyNamespace: string,
  attachment: PolicyAttachment,
  workload: PolicyWorkload,
  rootNamespace: string,
): boolean {
  const refs = attachment.targetRefs;
  // A waypoint never takes a policy by its selector.
  if (refs.length === 0) return !workload.waypoint && labelsContain(workload.labels, attachment.selector ?? {});
  const gatewayName = workload.labels[GATEWAY_NAME_LABEL];
  if (gatewayName === undefined) return false;
  return refs.some((ref) => {
    if (workload.waypoint && waypointTargeted(ref, policyNamespace, workload.waypoint.service, rootNamespace)) {
      return true;
    }
    return (
      policyNamespace === workload.namespace &&
      ref.kind === "Gateway" &&
      (ref.group ?? GATEWAY_API_GROUP) === GATEWAY_API_GROUP &&
      (ref.namespace || workload.namespace) === workload.namespace &&
      ref.name === gatewayName
    );
  });
}

/** A waypoint's own targets: its service (Service or ServiceEntry, from its namespace), or Istio's waypoint class. */
function waypointTargeted(
  ref: TargetRef,
  policyNamespace: string,
  service: PolicyService | undefined,
  rootNamespace: string,
): boolean {
  const group = ref.group ?? "";
  if (ref.kind === "GatewayClass" && group === GATEWAY_API_GROUP) {
    return policyNamespace === rootNamespace && ref.name === WAYPOINT_GATEWAY_CLASS;
  }
  if (!service || ref.name !== service.name || policyNamespace !== service.namespace) return false;
  if (ref.kind === "Service" && (group === "" || group === "core")) return service.registry === "Kubernetes";
  if (ref.kind === "ServiceEntry" && group === "networking.istio.io") return service.registry === "External";
  return false;
}
