// Kubernetes' strategic merge patch, for Pods (how Istio lays an injection template over a pod) and
// the kinds a Gateway's deployment is made of (how the Gateway deployment controller lays overlays).
// Maps merge key by key (null deletes), lists of containers, volumes, env, ports, ... merge by their
// merge key, every other list is replaced. Element order is the API machinery's: items named in the
// patch come in patch order, before the items only the pod has, except that two items both already
// in the pod keep the pod's order.
import { asObject, type JsonObject } from "../../config/validation/common/index.ts";

interface MergeSchema {
  /** Lists merged by a key field; the others are replaced whole. */
  lists?: Record<string, { key: string; item?: MergeSchema }>;
  /** Nested objects whose own lists have merge keys. */
  fields?: Record<string, MergeSchema>;
}

const CONTAINER: MergeSchema = {
  lists: {
    ports: { key: "containerPort" },
    env: { key: "name" },
    volumeMounts: { key: "mountPath" },
    volumeDevices: { key: "devicePath" },
  },
};

const POD_SPEC: MergeSchema = {
  lists: {
    containers: { key: "name", item: CONTAINER },
    initContainers: { key: "name", item: CONTAINER },
    ephemeralContainers: { key: "name", item: CONTAINER },
    volumes: { key: "name" },
    imagePullSecrets: { key: "name" },
    hostAliases: { key: "ip" },
    topologySpreadConstraints: { key: "topologyKey" },
    resourceClaims: { key: "name" },
    schedulingGates: { key: "name" },
  },
};

const METADATA: MergeSchema = { lists: { ownerReferences: { key: "uid" } } };

const POD: MergeSchema = { fields: { metadata: METADATA, spec: POD_SPEC } };

/** The pod with `patch` (a partial Pod) merged in; neither argument is modified. */
export function strategicMergePod<T extends object>(pod: T, patch: JsonObject): T {
  return mergeMap(pod as JsonObject, patch, POD) as T;
}

/** The merge keys of the kinds a Gateway's deployment is made of (HPA metrics and PDBs have none). */
const KIND_SCHEMAS: Readonly<Record<string, MergeSchema>> = {
  Deployment: { fields: { metadata: METADATA, spec: { fields: { template: POD } } } },
  Service: { fields: { metadata: METADATA, spec: { lists: { ports: { key: "port" } } } } },
  ServiceAccount: {
    fields: { metadata: METADATA },
    lists: { secrets: { key: "name" }, imagePullSecrets: { key: "name" } },
  },
  HorizontalPodAutoscaler: { fields: { metadata: METADATA } },
  PodDisruptionBudget: { fields: { metadata: METADATA } },
};

/** `object` (of one of the kinds above) with `patch` merged in; neither argument is modified. */
export function strategicMergeObject(object: JsonObject, patch: JsonObject): JsonObject {
  const schema = KIND_SCHEMAS[String(object.kind)];
  if (!schema) throw new Error(`no strategic merge schema for kind ${String(object.kind)}`);
  return mergeMap(object, patch, schema);
}

function mergeMap(original: JsonObject, patch: JsonObject, schema: MergeSchema | undefined): JsonObject {
  const out: JsonObject = { ...original };
  for (const [key, patchValue] of Object.entries(patch)) {
    if (patchValue === null || patchValue === undefined) {
      delete out[key];
      continue;
    }
    const current = out[key];
    const list = schema?.lists?.[key];
    if (list && Array.isArray(patchValue)) {
      const merged = mergeList(Array.isArray(current) ? current : [], patchValue, list.key, list.item);
      // Kubernetes omits empty lists (a template's `initContainers: []` adds nothing).
      if (merged.length > 0) out[key] = merged;
      else delete out[key];
      continue;
    }
    const currentObject = asObject(current);
    const patchObject = asObject(patchValue);
    out[key] =
      currentObject && patchObject
        ? mergeMap(currentObject, patchObject, schema?.fields?.[key])
        : withoutNulls(structuredClone(patchValue));
  }
  return out;
}

function mergeList(original: unknown[], patch: unknown[], key: string, itemSchema: MergeSchema | undefined): unknown[] {
  if (patch.length === 0) return original;
  const keyOf = (item: unknown) => asObject(item)?.[key];
  const merged = [...original];
  for (const patchItem of patch) {
    const patchObject = asObject(patchItem) ?? {};
    const index = merged.findIndex((item) => keyOf(item) === patchObject[key]);
    if (index >= 0) merged[index] = mergeMap(asObject(merged[index]) ?? {}, patchObject, itemSchema);
    else merged.push(withoutNulls(structuredClone(patchObject)));
  }
  const patchKeys = patch.map(keyOf);
  const originalKeys = original.map(keyOf);
  const patchItems = merged
    .filter((item) => patchKeys.includes(keyOf(item)))
    .sort((a, b) => patchKeys.indexOf(keyOf(a)) - patchKeys.indexOf(keyOf(b)));
  const serverOnly = merged.filter((item) => !patchKeys.includes(keyOf(item)));
  // mergeSortedSlice: a pod-only item goes first only when both items are in the pod and it is earlier.
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < patchItems.length) {
    if (j >= patchItems.length) out.push(serverOnly[i++]);
    else if (i >= serverOnly.length) out.push(patchItems[j++]);
    else {
      const left = originalKeys.indexOf(keyOf(serverOnly[i]));
      const right = originalKeys.indexOf(keyOf(patchItems[j]));
      if (left >= 0 && right >= 0 && left < right) out.push(serverOnly[i++]);
      else out.push(patchItems[j++]);
    }
  }
  return out;
}

/** A value with its null map entries dropped, as decoding into Go structs drops them. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  const obj = asObject(value);
  if (!obj) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) if (v !== null && v !== undefined) out[k] = withoutNulls(v);
  return out;
}
