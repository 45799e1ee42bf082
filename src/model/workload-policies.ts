// Which policies of a kind attach to a workload (Istio's WorkloadPolicyMatcher, for
// RequestAuthentication, AuthorizationPolicy, Telemetry, WasmPlugin): those of the root
// namespace and of the workload's namespace, oldest first. A policy with targetRef(s) attaches
// only to the Gateway API gateway it names, in its own namespace; otherwise its selector (none:
// every workload) must match the workload's labels.
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
}

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

  /** The policies attaching to `workload`: root namespace first, then the workload's namespace. */
  forWorkload(workload: PolicyWorkload): T[] {
    const namespaces = [...new Set([this.rootNamespace, workload.namespace])];
    return namespaces.flatMap((ns) =>
      this.inNamespace(ns).filter((policy) => attaches(policy, this.attachmentOf(policy), workload)),
    );
  }
}

function attaches(policy: ConfigObject, attachment: PolicyAttachment, workload: PolicyWorkload): boolean {
  const refs = attachment.targetRefs;
  if (refs.length === 0) return labelsContain(workload.labels, attachment.selector ?? {});
  // Only Gateway references are read (Service references attach to waypoints, which are not modeled).
  if (namespaceOf(policy) !== workload.namespace) return false;
  const gatewayName = workload.labels[GATEWAY_NAME_LABEL];
  return refs.some(
    (ref) =>
      ref.kind === "Gateway" &&
      (ref.group ?? "gateway.networking.k8s.io") === "gateway.networking.k8s.io" &&
      (ref.namespace || workload.namespace) === workload.namespace &&
      ref.name === gatewayName,
  );
}
