// How krt reads an object's key, namespace, labels and selector when the collection is not told.
// Defaults cover strings, Kubernetes-style objects (`metadata`) and plain derived objects that carry
// `namespace` / `labels` / `selector` fields; anything else passes its own accessor.

export type Labels = Readonly<Record<string, string>>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isLabels(value: unknown): value is Labels {
  return isRecord(value) && Object.values(value).every((v) => typeof v === "string");
}

/** `ns/name` for namespaced objects, `name` for cluster-scoped ones, the string itself for strings. */
export function defaultKeyOf(item: unknown): string {
  if (typeof item === "string") return item;
  if (isRecord(item) && isRecord(item.metadata) && typeof item.metadata.name === "string") {
    const namespace = item.metadata.namespace;
    return typeof namespace === "string" && namespace !== ""
      ? `${namespace}/${item.metadata.name}`
      : item.metadata.name;
  }
  throw new Error(`krt: cannot derive a key for ${JSON.stringify(item)}; give the collection a keyOf`);
}

export function defaultNamespaceOf(item: unknown): string | undefined {
  if (!isRecord(item)) return undefined;
  if (isRecord(item.metadata) && typeof item.metadata.namespace === "string") return item.metadata.namespace;
  return typeof item.namespace === "string" ? item.namespace : undefined;
}

export function defaultLabelsOf(item: unknown): Labels | undefined {
  if (!isRecord(item)) return undefined;
  if (isRecord(item.metadata) && isLabels(item.metadata.labels)) return item.metadata.labels;
  return isLabels(item.labels) ? item.labels : undefined;
}

/**
 * The labels an object selects workloads by: a top-level `selector`, a Kubernetes Service's `spec.selector`,
 * an Istio policy's `spec.selector.matchLabels`, or a ServiceEntry's `spec.workloadSelector.labels`.
 */
export function defaultSelectorOf(item: unknown): Labels | undefined {
  if (!isRecord(item)) return undefined;
  if (isLabels(item.selector)) return item.selector;
  const spec = item.spec;
  if (!isRecord(spec)) return undefined;
  if (isLabels(spec.selector)) return spec.selector;
  if (isRecord(spec.selector) && isLabels(spec.selector.matchLabels)) return spec.selector.matchLabels;
  if (isRecord(spec.workloadSelector) && isLabels(spec.workloadSelector.labels)) return spec.workloadSelector.labels;
  return undefined;
}

/** True when every entry of `wanted` is in `labels` (an empty `wanted` is contained in anything). */
export function labelsContain(labels: Labels | undefined, wanted: Labels): boolean {
  // Keys, not entries: this runs for each service of a proxy's namespace, for each proxy.
  for (const name of Object.keys(wanted)) {
    if (labels?.[name] !== wanted[name]) return false;
  }
  return true;
}
