// Reading config object metadata: namespace, name, and the order Istio gives configs when several
// compete: oldest first, then by name, then namespace (sortConfigByCreationTime). A missing
// creationTimestamp counts as the oldest.
import type { ConfigObject } from "../config/index.ts";
import { compareStrings } from "../util/index.ts";

export function creationTime(obj: ConfigObject): number {
  const t = Date.parse(obj.metadata.creationTimestamp ?? "");
  return Number.isNaN(t) ? 0 : t;
}

export function compareByCreationTime(a: ConfigObject, b: ConfigObject): number {
  return (
    creationTime(a) - creationTime(b) ||
    compareStrings(a.metadata.name ?? "", b.metadata.name ?? "") ||
    compareStrings(a.metadata.namespace ?? "", b.metadata.namespace ?? "")
  );
}

export function sortByCreationTime<T extends ConfigObject>(configs: readonly T[]): T[] {
  return [...configs].sort(compareByCreationTime);
}

export { compareStrings };

export function namespaceOf(obj: ConfigObject): string {
  return obj.metadata.namespace ?? "";
}

export function nameOf(obj: ConfigObject): string {
  return obj.metadata.name ?? "";
}
