// The identity of a config object, the one used everywhere: by the store and its sources, by push
// requests and by the dependency checks that decide which proxies a change reaches.
import { kindKey, parseApiVersion } from "./kinds.ts";
import type { ConfigObject } from "./model.ts";

/** Identity of a config object: kind key ("group/Kind", see kindKey), namespace ("" when cluster-scoped), name. */
export interface ObjectKey {
  kind: string;
  namespace: string;
  name: string;
}

/** A set of object keys, deduplicated by keyString. */
export type ObjectKeySet = ReadonlyMap<string, ObjectKey>;

/** The key's one text form: "group/Kind namespace/name", or "group/Kind name" for a cluster-scoped object. */
export function keyString(key: ObjectKey): string {
  return `${key.kind} ${collectionKeyOf(key)}`;
}

/** How a collection of one kind keys its objects: "namespace/name", or "name" when cluster-scoped (krt's default). */
export function collectionKeyOf(key: Pick<ObjectKey, "namespace" | "name">): string {
  return key.namespace === "" ? key.name : `${key.namespace}/${key.name}`;
}

export function objectKeySet(keys: Iterable<ObjectKey>): ObjectKeySet {
  return new Map([...keys].map((k) => [keyString(k), k]));
}

/** The kind key of an object: "group/Kind". */
export function kindKeyOf(obj: ConfigObject): string {
  return kindKey(parseApiVersion(obj.apiVersion).group, obj.kind);
}

export function objectKeyOf(obj: ConfigObject): ObjectKey {
  return { kind: kindKeyOf(obj), namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" };
}
