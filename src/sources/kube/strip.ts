// What the kube source keeps of an object, as istiod's informer transforms do
// (pkg/config/schema/kubeclient stripUnusedFields, pkg/kube StripPodUnusedFields and
// StripNodeUnusedFields): managedFields never, and of Pods and Nodes only what the registry reads.
// On a mesh of 10,000 Pods this is most of the memory the cluster's objects take.
import type { ConfigObject } from "../../config/index.ts";
import { copyWith } from "../../util/index.ts";

/** Istio's proxy overrides annotation: never read from the cache, and it can be large. */
const PROXY_OVERRIDES = "proxy.istio.io/overrides";

type Json = Record<string, unknown>;
const record = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(record) : []);

/**
 * `obj` without what no part of the control plane reads; objects from JSON only (no prototypes kept).
 * Copies are made with copyWith, not spreads: the store keeps (and freezes) them all.
 */
export function stripUnusedFields(obj: ConfigObject): ConfigObject {
  const { managedFields: _, ...metadata } = obj.metadata as ConfigObject["metadata"] & { managedFields?: unknown };
  if (obj.apiVersion === "v1" && obj.kind === "Pod") return stripPod(obj, metadata);
  if (obj.apiVersion === "v1" && obj.kind === "Node") return stripNode(obj, metadata);
  return "managedFields" in obj.metadata ? copyWith(obj, { metadata }) : obj;
}

/** Of the spec, the container ports (and native sidecars with ports) and the fields naming where the pod runs. */
function stripPod(pod: ConfigObject, metadata: ConfigObject["metadata"]): ConfigObject {
  const { [PROXY_OVERRIDES]: _, ...annotations } = metadata.annotations ?? {};
  const spec = record(pod.spec);
  const containers = list(spec.containers)
    .filter((c) => list(c.ports).length > 0)
    .map((c) => ({ ports: c.ports }));
  const initContainers = list(spec.initContainers)
    .filter((c) => c.restartPolicy === "Always" && list(c.ports).length > 0)
    .map((c) => ({ ports: c.ports, restartPolicy: c.restartPolicy }));
  const strippedSpec: Json = { containers };
  if (initContainers.length > 0) strippedSpec.initContainers = initContainers;
  for (const key of ["serviceAccountName", "nodeName", "hostNetwork", "hostname", "subdomain"]) {
    if (spec[key] !== undefined) strippedSpec[key] = spec[key];
  }
  const { initContainerStatuses: _init, containerStatuses: _containers, ...status } = record(pod.status);
  // `metadata` is the strip's own copy (managedFields left out): its annotations are replaced in place.
  if (metadata.annotations) metadata.annotations = annotations;
  return copyWith(pod, {
    metadata,
    spec: strippedSpec,
    ...(pod.status ? { status } : {}),
  });
}

/** Of a Node, its labels and addresses are what the registry reads (locality, NodePort gateways). */
function stripNode(node: ConfigObject, withoutManagedFields: ConfigObject["metadata"]): ConfigObject {
  const { annotations: _a, ownerReferences: _o, ...metadata } = withoutManagedFields;
  const { allocatable: _al, capacity: _c, images: _i, conditions: _co, ...status } = record(node.status);
  return copyWith(node, { metadata, ...(node.status ? { status } : {}) });
}
