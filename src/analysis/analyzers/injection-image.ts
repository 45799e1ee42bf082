// injection.ImageAnalyzer: in namespaces with injection enabled, running istio-proxy containers must use
// the image the injector (istio-sidecar-injector[-<revision>] ConfigMap) would inject now.
import { parse } from "yaml";
import type { AnalysisContext, Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { selectorMatches } from "../labels.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import {
  annotationsOf,
  asArray,
  asRecord,
  asString,
  asStringMap,
  labelsOf,
  type Resource,
  specOf,
} from "../resource.ts";

const INJECTOR_CONFIGMAP = "istio-sidecar-injector";
const REVISION_LABEL = "istio.io/rev";
const PROXY_IMAGE_ANNOTATION = "sidecar.istio.io/proxyImage";
const PROXY_CONFIG_ANNOTATION = "proxy.istio.io/config";

export const injectionImageAnalyzer: Analyzer = {
  name: "injection.ImageAnalyzer",
  description: "Checks the image of auto-injection configured with the running proxies on pods",
  inputs: [K.Namespace, K.Pod, K.ConfigMap, K.MeshConfig, K.ProxyConfig],
  analyze(ctx) {
    const proxyImages = new Map<string, string>();
    for (const cm of ctx.list(K.ConfigMap)) {
      if (cm.name.startsWith(INJECTOR_CONFIGMAP)) proxyImages.set(cm.name, injectorProxyImage(cm));
    }
    if (proxyImages.size === 0) return;

    const injectedNamespaces = new Map<string, string>();
    const namespaces = new Map<string, Resource>();
    for (const ns of ctx.list(K.Namespace)) {
      namespaces.set(ns.name, ns);
      const labels = labelsOf(ns);
      if (REVISION_LABEL in labels) injectedNamespaces.set(ns.name, labels[REVISION_LABEL]);
      else if (labels["istio-injection"] === "enabled") injectedNamespaces.set(ns.name, "default");
    }

    const imageType = imageTypeResolver(ctx);
    const mismatched = new Map<string, string[]>();
    for (const pod of ctx.list(K.Pod)) {
      const revision = injectedNamespaces.get(pod.namespace);
      if (revision === undefined || annotationsOf(pod)[PROXY_IMAGE_ANNOTATION]) continue;
      const configMapName =
        revision === "" || revision === "default" ? INJECTOR_CONFIGMAP : `${INJECTOR_CONFIGMAP}-${revision}`;
      const proxyImage = proxyImages.get(configMapName);
      const variant = imageType(pod);
      const spec = specOf(pod);
      for (const container of [...asArray(spec.containers), ...asArray(spec.initContainers)].map(asRecord)) {
        if (container.name !== "istio-proxy") continue;
        if (proxyImage === undefined) break;
        const image = asString(container.image);
        if (image !== proxyImage && image !== `${proxyImage}-${variant}`) {
          mismatched.set(pod.namespace, [...(mismatched.get(pod.namespace) ?? []), pod.name]);
        }
      }
    }
    for (const [ns, pods] of mismatched) {
      ctx.report(newMessage(MESSAGES.PodsIstioProxyImageMismatchInNamespace, namespaces.get(ns), pods.sort()));
    }
  },
};

/** The proxy image of an injector ConfigMap's `values` (JSON): global.proxy.image, under hub and tag unless it has a '/'. */
function injectorProxyImage(cm: Resource): string {
  let values: unknown;
  try {
    values = JSON.parse(asString(asStringMap(cm.object.data).values));
  } catch {
    return "";
  }
  const global = asRecord(asRecord(values).global);
  const image = asString(asRecord(global.proxy).image);
  return image.includes("/") ? image : `${asString(global.hub)}/${image}:${asString(global.tag)}`;
}

/** util.EffectiveProxyConfigResolver.ImageType: mesh default, root ProxyConfig, namespace, workload, annotation. */
function imageTypeResolver(ctx: AnalysisContext): (pod: Resource) => string {
  const meshSpec = ctx.meshConfig();
  const rootNamespace = asString(meshSpec.rootNamespace) || "istio-system";
  const typeOf = (proxyConfig: unknown) => asString(asRecord(asRecord(proxyConfig).image).imageType);
  let rootType = "";
  const namespaceTypes = new Map<string, string>();
  const workloads: { namespacePrefix: string; labels: Record<string, string>; type: string }[] = [];
  for (const pc of ctx.list(K.ProxyConfig)) {
    const spec = specOf(pc);
    if (pc.namespace === rootNamespace) rootType = typeOf(spec);
    else if (spec.selector === undefined || spec.selector === null) namespaceTypes.set(pc.namespace, typeOf(spec));
    else {
      const labels = asStringMap(asRecord(spec.selector).matchLabels);
      workloads.push({ namespacePrefix: `${pc.namespace}/${pc.name}`, labels, type: typeOf(spec) });
    }
  }
  return (pod) => {
    let variant = typeOf(meshSpec.defaultConfig) || "";
    if (rootType) variant = rootType;
    const nsType = namespaceTypes.get(pod.namespace);
    if (nsType) variant = nsType;
    for (const w of workloads) {
      // Istio compares the ProxyConfig's "<namespace>/<name>" key by prefix with the pod's namespace.
      if (w.namespacePrefix.startsWith(pod.namespace) && selectorMatches(w.labels, labelsOf(pod)) && w.type)
        variant = w.type;
    }
    const annotation = annotationsOf(pod)[PROXY_CONFIG_ANNOTATION];
    if (annotation !== undefined) {
      try {
        const annotated = typeOf(parse(annotation));
        if (annotated) variant = annotated;
      } catch {
        // An unreadable annotation is ignored, as Istio does.
      }
    }
    return variant === "default" ? "" : variant;
  };
}
