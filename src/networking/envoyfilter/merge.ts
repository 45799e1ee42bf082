// Istio's proto merge for patches (pkg/proto/merge): a field set in the patch overwrites a scalar,
// merges into a message, replaces a map entry, and appends to a list (MERGE) or replaces the list
// (MERGE_AND_REPLACE_LIST). Durations are replaced whole. An Any merges as a message (its type URL
// and bytes replaced); mergeAnyWithAny merges the typed payloads.
import { clone, type DescMessage, type Message } from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import type { Any } from "@bufbuild/protobuf/wkt";
import { packAny, registry, unpackAny } from "../../api/index.ts";
import type { Operation } from "./patch.ts";

export type ListMerge = "append" | "replace";

export function isMergeOperation(operation: Operation): boolean {
  return operation === "MERGE" || operation === "MERGE_AND_REPLACE_LIST";
}

export function listMerge(operation: Operation): ListMerge {
  return operation === "MERGE_AND_REPLACE_LIST" ? "replace" : "append";
}

const DURATION = "google.protobuf.Duration";

function cloneReflect(message: ReflectMessage): ReflectMessage {
  return reflect(message.desc, clone(message.desc, message.message));
}

function mergeReflect(dst: ReflectMessage, src: ReflectMessage, lists: ListMerge): void {
  for (const field of src.fields) {
    if (!src.isSet(field)) continue;
    switch (field.fieldKind) {
      case "list": {
        const target = dst.get(field);
        if (lists === "replace") target.clear();
        for (const item of src.get(field)) {
          target.add(field.listKind === "message" ? cloneReflect(item as ReflectMessage) : item);
        }
        break;
      }
      case "map": {
        const target = dst.get(field);
        for (const [key, value] of src.get(field)) {
          target.set(key, field.mapKind === "message" ? cloneReflect(value as ReflectMessage) : value);
        }
        break;
      }
      case "message": {
        const value = src.get(field);
        if (!dst.isSet(field) || field.message.typeName === DURATION) dst.set(field, cloneReflect(value));
        else mergeReflect(dst.get(field), value, lists);
        break;
      }
      default:
        dst.set(field, src.get(field));
    }
  }
}

/** Merges `src` into `dst` in place. */
export function mergeMessage<T extends Message>(schema: DescMessage, dst: T, src: T, lists: ListMerge): void {
  mergeReflect(reflect(schema, dst), reflect(schema, src), lists);
}

/**
 * Istio's MergeAnyWithAny: both payloads decoded, `src` merged into `dst`, packed again. Undefined
 * when either type is not in the registry or the types differ.
 */
export function mergeAnyWithAny(dst: Any, src: Any, lists: ListMerge): Any | undefined {
  const target = unpackAny(dst);
  const patch = unpackAny(src);
  if (!target || !patch || target.$typeName !== patch.$typeName) return undefined;
  const schema = registry.getMessage(target.$typeName);
  if (!schema) return undefined;
  mergeMessage(schema, target, patch, lists);
  return packAny(schema, target);
}
