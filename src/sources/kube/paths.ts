// REST paths of the Kubernetes API for the registry's kinds: /api/v1/... for the core group,
// /apis/{group}/{version}/... for the others; namespaced kinds may be listed across all namespaces.
import type { KindInfo } from "../../config/index.ts";

/** "v1" for the core group, "group/version" otherwise: an object's apiVersion. */
export function groupVersion(group: string, version: string): string {
  return group === "" ? version : `${group}/${version}`;
}

/** The discovery root of a group version: /api/v1 or /apis/{group}/{version}. */
function groupVersionPath(group: string, version: string): string {
  return group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
}

export interface ResourceLocation {
  kind: KindInfo;
  version: string;
  /** Absent: the collection across all namespaces (or a cluster-scoped kind). */
  namespace?: string;
  name?: string;
  subresource?: "status";
}

export function resourcePath(at: ResourceLocation): string {
  let path = groupVersionPath(at.kind.group, at.version);
  if (at.kind.namespaced && at.namespace !== undefined) path += `/namespaces/${encodeURIComponent(at.namespace)}`;
  path += `/${at.kind.plural}`;
  if (at.name !== undefined) path += `/${encodeURIComponent(at.name)}`;
  if (at.subresource) path += `/${at.subresource}`;
  return path;
}
