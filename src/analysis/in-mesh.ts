// Whether a workload is in the mesh, as Istio's analyzers decide (analyzers/util/in_mesh.go): it has an
// istio-proxy container with an image, or sidecar.istio.io/inject says so (label, then annotation), or
// its Namespace is labelled istio-injection=enabled.
import type { AnalysisContext } from "./analyzer.ts";
import { K } from "./kinds.ts";
import { asArray, asRecord, asString, asStringMap, labelsOf, podSpecOf, type Resource } from "./resource.ts";

const INJECT = "sidecar.istio.io/inject";

export function inMesh(ctx: AnalysisContext, r: Resource): boolean {
  const spec = podSpecOf(r);
  const template = asRecord(asRecord(r.object.spec).template);
  const metadata = r.object.kind === "Deployment" ? asRecord(template.metadata) : asRecord(r.object.metadata);
  const containers =
    r.object.kind === "Deployment"
      ? asArray(spec.containers)
      : [...asArray(spec.containers), ...asArray(spec.initContainers)];
  const proxy = containers.map(asRecord).find((c) => c.name === "istio-proxy");
  if (proxy && asString(proxy.image) !== "") return true;
  const labels = asStringMap(metadata.labels);
  if (INJECT in labels) return labels[INJECT] === "true";
  const annotations = asStringMap(metadata.annotations);
  if (INJECT in annotations) return annotations[INJECT] === "true";
  const namespace = ctx.find(K.Namespace, "", r.namespace);
  return namespace !== undefined && labelsOf(namespace)["istio-injection"] === "enabled";
}
