// The whole install: the CRDs shipped in manifests/crds/ (Istio's and the Gateway API's), the control
// plane's objects, its namespace first; as YAML for --dry-run, or applied to a cluster by server-side
// apply, each object in turn, so that a re-run updates what an earlier one made.
import { readdirSync, readFileSync } from "node:fs";
import { parse, stringify } from "yaml";
import type { KubeClient } from "../sources/kube/index.ts";
import { type KubeObject, renderControlPlane } from "./render.ts";
import type { Values } from "./values.ts";

/** The CRDs, beside the default values (src/install/ and dist/bundle/ are both two levels down). */
const CRD_DIR_URL = new URL("../../manifests/crds/", import.meta.url);

/** Who owns the fields `sluice install` sets (server-side apply's field manager). */
export const FIELD_MANAGER = "sluice-install";

export function readCrds(): KubeObject[] {
  return readdirSync(CRD_DIR_URL)
    .filter((file) => file.endsWith(".yaml"))
    .sort()
    .map((file) => parse(readFileSync(new URL(file, CRD_DIR_URL), "utf8")) as KubeObject);
}

/** Every object of the install in the order it is applied; without the CRDs when `crds` is false. */
export function installObjects(values: Values, crds = true): KubeObject[] {
  return [...(crds ? readCrds() : []), ...renderControlPlane(values)];
}

/** The objects as one YAML stream. */
export function manifestText(objects: readonly KubeObject[]): string {
  return objects.map((object) => `---\n${stringify(object, { lineWidth: 0 })}`).join("");
}

/** The plural and scope of every kind the install renders. */
const RESOURCES: Readonly<Record<string, { plural: string; namespaced: boolean }>> = {
  CustomResourceDefinition: { plural: "customresourcedefinitions", namespaced: false },
  Namespace: { plural: "namespaces", namespaced: false },
  ServiceAccount: { plural: "serviceaccounts", namespaced: true },
  ClusterRole: { plural: "clusterroles", namespaced: false },
  ClusterRoleBinding: { plural: "clusterrolebindings", namespaced: false },
  Role: { plural: "roles", namespaced: true },
  RoleBinding: { plural: "rolebindings", namespaced: true },
  ConfigMap: { plural: "configmaps", namespaced: true },
  Deployment: { plural: "deployments", namespaced: true },
  Service: { plural: "services", namespaced: true },
  PodDisruptionBudget: { plural: "poddisruptionbudgets", namespaced: true },
  HorizontalPodAutoscaler: { plural: "horizontalpodautoscalers", namespaced: true },
  MutatingWebhookConfiguration: { plural: "mutatingwebhookconfigurations", namespaced: false },
  ValidatingWebhookConfiguration: { plural: "validatingwebhookconfigurations", namespaced: false },
};

/** The object's API path (its name last). */
export function objectPath(object: KubeObject): string {
  const resource = RESOURCES[object.kind];
  if (!resource) throw new Error(`${object.kind} ${object.metadata.name}: not a kind sluice install applies`);
  const base = object.apiVersion.includes("/") ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
  const namespace = resource.namespaced ? `/namespaces/${encodeURIComponent(object.metadata.namespace ?? "")}` : "";
  return `${base}${namespace}/${resource.plural}/${encodeURIComponent(object.metadata.name)}`;
}

/** A line naming the object, as kubectl does: `kind/name` (namespace/kind/name when namespaced). */
export function objectRef(object: KubeObject): string {
  const ns = object.metadata.namespace ? `${object.metadata.namespace}/` : "";
  return `${ns}${object.kind}/${object.metadata.name}`;
}

/**
 * Applies each object by server-side apply (forcing: the install owns the fields it sets, taking them
 * from an earlier manager), telling `onApplied` of each; the first refusal stops it, naming the object.
 */
export async function applyObjects(
  client: KubeClient,
  objects: readonly KubeObject[],
  onApplied: (object: KubeObject) => void = () => {},
): Promise<void> {
  for (const object of objects) {
    const path = `${objectPath(object)}?fieldManager=${FIELD_MANAGER}&force=true`;
    try {
      await client.patch(path, object, "application/apply-patch+yaml");
    } catch (err) {
      throw new Error(`applying ${objectRef(object)}: ${(err as Error).message}`);
    }
    onApplied(object);
  }
}
