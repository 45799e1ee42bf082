// The objects analyzers read: one per config object, with the kind it belongs to and where it came from.
import type { ConfigObject } from "../config/index.ts";
import { kindKey, parseApiVersion } from "../config/index.ts";

export interface Origin {
  file?: string;
  /** 1-based line of the document. */
  line?: number;
  /** The cluster the object was read from, in a multi-cluster analysis. */
  cluster?: string;
  /** Field path ("{.spec.gateways[0]}") → line, when read from a YAML file (see field-lines.ts). */
  fieldLines?: ReadonlyMap<string, number>;
}

export interface Resource {
  /** `group/Kind` (see kinds.ts). */
  kind: string;
  object: ConfigObject;
  namespace: string;
  name: string;
  origin: Origin;
  /** `<Kind> <namespace>/<name>`, or `<Kind> <name>` without a namespace (istioctl's convention). */
  friendlyName: string;
  /** Istio's sort key: Kind/name/namespace. */
  comparator: string;
}

export function resourceKind(object: ConfigObject): string {
  return kindKey(parseApiVersion(String(object.apiVersion ?? "")).group, String(object.kind ?? ""));
}

export function newResource(object: ConfigObject, origin: Origin = {}, kind = resourceKind(object)): Resource {
  const namespace = object.metadata?.namespace ?? "";
  const name = object.metadata?.name ?? "";
  const kindName = String(object.kind ?? "");
  return {
    kind,
    object,
    namespace,
    name,
    origin,
    friendlyName: namespace ? `${kindName} ${namespace}/${name}` : `${kindName} ${name}`,
    comparator: `${kindName}/${name}/${namespace}`,
  };
}

/** The namespace a resource belongs to; a Namespace's is its own name (Istio's Origin.Namespace). */
export function originNamespace(r: Resource): string {
  return r.object.kind === "Namespace" && r.kind === "/Namespace" ? r.name : r.namespace;
}

export function labelsOf(r: Resource): Record<string, string> {
  return r.object.metadata?.labels ?? {};
}

export function annotationsOf(r: Resource): Record<string, string> {
  return r.object.metadata?.annotations ?? {};
}

/** The object's spec as a plain record (analyzers read fields defensively: input is unvalidated). */
export function specOf(r: Resource): Record<string, unknown> {
  const spec = r.object.spec;
  return isRecord(spec) ? spec : {};
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function asRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string {
  return typeof value === "string" ? value : "";
}

export function asStringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(asRecord(value))) out[k] = v === null || v === undefined ? "" : String(v);
  return out;
}

/** Istio's resource.FullName string: "namespace/name", or the name alone without a namespace. */
export function fullName(r: Resource): string {
  return r.namespace ? `${r.namespace}/${r.name}` : r.name;
}

/** Istio's resource.NewShortOrFullName: "ns/name" as given, a bare name in `namespace`. */
export function shortOrFullName(namespace: string, name: string): { namespace: string; name: string } {
  const slash = name.indexOf("/");
  return slash < 0 ? { namespace, name } : { namespace: name.slice(0, slash), name: name.slice(slash + 1) };
}

/** resource.FullName.String() of a namespace and name. */
export function joinFullName(ref: { namespace: string; name: string }): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}

export function asStringArray(value: unknown): string[] {
  return asArray(value).map((v) => (typeof v === "string" ? v : String(v ?? "")));
}

/** Istio's util.IsIstioControlPlane: an `istio` label, or `release: istio`. */
export function isIstioControlPlane(r: Resource): boolean {
  const labels = labelsOf(r);
  return "istio" in labels || labels.release === "istio";
}

/** The pod spec of a Pod, or of a Deployment's pod template. */
export function podSpecOf(r: Resource): Record<string, unknown> {
  const spec = specOf(r);
  return r.object.kind === "Deployment" ? asRecord(asRecord(spec.template).spec) : spec;
}
