// The proxy config a pod's proxy gets (Istio's EffectiveProxyConfig): the mesh's defaultConfig, then
// the ProxyConfig resources (the root namespace's, the pod's namespace's, the first whose selector
// matches the pod), then the pod's `proxy.istio.io/config` annotation, each over the one before.
import {
  type ConfigObject,
  Findings,
  type MeshConfig,
  mergeProxyConfig,
  type ProxyConfig,
  type ProxyConfigSpec,
} from "../../config/index.ts";
import { decodeYaml } from "../../config/mesh-decode.ts";
import type { JsonObject } from "../../config/validation/common/index.ts";
import type { ObjectMeta } from "./pod.ts";

export const PROXY_CONFIG_ANNOTATION = "proxy.istio.io/config";

/** A ProxyConfig resource (the Istio kind; `ProxyConfig` here is the mesh's proxy settings it overlays). */
type ProxyConfigResource = ConfigObject<ProxyConfigSpec>;

/** A ProxyConfig resource's fields in MeshConfig.ProxyConfig terms. */
function asProxyConfigOverlay(spec: ProxyConfigSpec): JsonObject {
  const out: JsonObject = {};
  if (spec.concurrency !== undefined) out.concurrency = spec.concurrency;
  if (spec.environmentVariables !== undefined) out.proxyMetadata = spec.environmentVariables;
  if (spec.image !== undefined) out.image = spec.image;
  return out;
}

/** Oldest first, then by namespace and name (Istio's sortConfigByCreationTime). */
function byCreation(a: ConfigObject, b: ConfigObject): number {
  const time = (o: ConfigObject) => o.metadata.creationTimestamp ?? "";
  const key = (o: ConfigObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;
  return time(a).localeCompare(time(b)) || key(a).localeCompare(key(b));
}

export function effectiveProxyConfig(
  mesh: MeshConfig,
  resources: readonly ProxyConfigResource[],
  pod: ObjectMeta,
): ProxyConfig {
  const sorted = [...resources].sort(byCreation);
  const inNamespace = (namespace: string) => sorted.filter((r) => r.metadata.namespace === namespace);
  const specOf = (r: ProxyConfigResource) => r.spec ?? {};
  const namespaceWide = (namespace: string) => inNamespace(namespace).find((r) => specOf(r).selector === undefined);
  const labels = pod.labels ?? {};
  const namespace = pod.namespace ?? "";
  const rootNamespace = mesh.rootNamespace ?? "istio-system";

  let config: ProxyConfig = mesh.defaultConfig ?? {};
  const overlays: (ProxyConfigResource | undefined)[] = [namespaceWide(rootNamespace)];
  if (namespace !== rootNamespace) overlays.push(namespaceWide(namespace));
  overlays.push(
    inNamespace(namespace).find((r) => {
      const match = specOf(r).selector?.matchLabels ?? {};
      const keys = Object.keys(match);
      return keys.length > 0 && keys.every((k) => labels[k] === match[k]);
    }),
  );
  for (const overlay of overlays) if (overlay) config = mergeProxyConfig(config, asProxyConfigOverlay(specOf(overlay)));
  const annotation = pod.annotations?.[PROXY_CONFIG_ANNOTATION];
  if (annotation !== undefined) {
    const out = new Findings("");
    const decoded = decodeYaml(annotation, "ProxyConfig", out);
    if (out.ok) config = mergeProxyConfig(config, decoded);
  }
  return config;
}
