// The objects of a live cluster for `sluice analyze --use-kube` and `sluice x describe`: every kind
// asked for, listed once across all namespaces (a kind the cluster does not serve is skipped), and the
// mesh config and networks from istiod's ConfigMap (`istio` in the Istio namespace, keys `mesh` and
// `meshNetworks`).
import type { Logger } from "pino";
import { type ConfigObject, KINDS, type KindInfo, kindKey, makeKind } from "../config/index.ts";
import type { KubeClient } from "../sources/kube/client.ts";
import { KubeApiError } from "../sources/kube/client.ts";
import { groupVersion, resourcePath } from "../sources/kube/paths.ts";
import { K } from "./kinds.ts";

/** Kinds analyzers read that the config registry does not list (it holds what the mesh serves from). */
export const EXTRA_CLUSTER_KINDS: readonly KindInfo[] = [
  makeKind("kubernetes", "apps", "Deployment", ["v1"]),
  makeKind("kubernetes", "admissionregistration.k8s.io", "MutatingWebhookConfiguration", ["v1"], {
    clusterScoped: true,
  }),
  makeKind("kubernetes", "admissionregistration.k8s.io", "ValidatingWebhookConfiguration", ["v1"], {
    clusterScoped: true,
  }),
  makeKind("kubernetes", "apiextensions.k8s.io", "CustomResourceDefinition", ["v1"], { clusterScoped: true }),
];

export interface ClusterConfig {
  objects: ConfigObject[];
  /** The `mesh` and `meshNetworks` texts of the istio ConfigMap, when present. */
  meshConfig?: string;
  meshNetworks?: string;
}

/** Lists every kind in `inputs` (group/Kind keys) from the cluster; `log` gets a debug line per list. */
export async function readCluster(
  client: KubeClient,
  inputs: ReadonlySet<string>,
  istioNamespace: string,
  log?: Logger,
): Promise<ClusterConfig> {
  const objects: ConfigObject[] = [];
  let meshConfig: string | undefined;
  let meshNetworks: string | undefined;
  for (const kind of [...KINDS, ...EXTRA_CLUSTER_KINDS]) {
    const key = kindKey(kind.group, kind.kind);
    if (!inputs.has(key) && key !== K.ConfigMap) continue;
    const listed = await listKind(client, kind);
    log?.debug({ kind: key, items: listed.length }, "listed from the cluster");
    if (inputs.has(key))
      objects.push(...(key === K.ConfigMap ? listed.filter((cm) => isIstioConfigMap(cm, istioNamespace)) : listed));
    if (key === K.ConfigMap) {
      const istio = listed.find((cm) => cm.metadata.namespace === istioNamespace && cm.metadata.name === "istio");
      const data = (istio?.data ?? {}) as Record<string, string>;
      meshConfig = data.mesh;
      meshNetworks = data.meshNetworks;
    }
  }
  return { objects, meshConfig, meshNetworks };
}

async function listKind(client: KubeClient, kind: KindInfo): Promise<ConfigObject[]> {
  let list: unknown;
  try {
    list = await client.request("GET", resourcePath({ kind, version: kind.preferredVersion }));
  } catch (err) {
    // The cluster does not serve this kind (its CRD is not installed).
    if (err instanceof KubeApiError && err.code === 404) return [];
    throw err;
  }
  const items = ((list ?? {}) as { items?: ConfigObject[] }).items ?? [];
  // List items carry no apiVersion and kind.
  return items.map((item) => ({
    ...item,
    apiVersion: groupVersion(kind.group, kind.preferredVersion),
    kind: kind.kind,
  }));
}

// Leader election records are ConfigMaps too; they say nothing about the mesh.
const LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader";

/** istioctl reads only Istio's ConfigMaps: in the Istio namespace, named istio*. */
function isIstioConfigMap(cm: ConfigObject, istioNamespace: string): boolean {
  const meta = cm.metadata;
  return (
    meta.namespace === istioNamespace &&
    (meta.name ?? "").startsWith("istio") &&
    !(LEADER_ANNOTATION in (meta.annotations ?? {}))
  );
}
