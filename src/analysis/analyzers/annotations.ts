// annotations.K8sAnalyzer: Istio annotations on Namespaces, Services, Pods and Deployments that are
// unknown, deprecated, on the wrong kind of resource, or have an invalid value. annotations.AlphaAnalyzer
// (not in the default set): Istio annotations whose feature is still alpha.
import { annotationValueError } from "../../webhooks/inject/annotations.ts";
import type { AnalysisContext, Analyzer } from "../analyzer.ts";
import { ISTIO_ANNOTATIONS } from "../annotations-table.ts";
import { K } from "../kinds.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { annotationsOf, asArray, asRecord, labelsOf, type Resource, specOf } from "../resource.ts";

const ANNOTATED_KINDS = [K.Namespace, K.Service, K.Pod, K.Deployment];

// Set by Istio itself, never by users.
const ALWAYS_IGNORED = new Set(["sidecar.istio.io/status", "gateway.istio.io/controller-version", "istio.io/rev"]);
// istio-cni sets these on every pod it handles; they are only the user's when istio-init runs.
const CNI_DEFAULTS = new Set([
  "sidecar.istio.io/interceptionMode",
  "traffic.sidecar.istio.io/includeInboundPorts",
  "traffic.sidecar.istio.io/excludeInboundPorts",
  "traffic.sidecar.istio.io/includeOutboundIPRanges",
]);
const INJECT = "sidecar.istio.io/inject";
const DEPRECATION_DETAILS: Readonly<Record<string, string>> = {
  [INJECT]: ` in favor of the "sidecar.istio.io/inject" label`,
};

/** An annotation in an *istio.io domain, or the one other annotation Istio documents. */
function isIstioAnnotation(name: string): boolean {
  return name === "kubernetes.io/ingress.class" || name.split("/")[0].endsWith("istio.io");
}

function forEachAnnotated(ctx: AnalysisContext, check: (r: Resource, name: string, value: string) => void): void {
  for (const kind of ANNOTATED_KINDS) {
    for (const r of ctx.list(kind)) {
      for (const [name, value] of Object.entries(annotationsOf(r))) {
        if (isIstioAnnotation(name)) check(r, name, String(value ?? ""));
      }
    }
  }
}

export const k8sAnnotationsAnalyzer: Analyzer = {
  name: "annotations.K8sAnalyzer",
  description: "Checks for misplaced and invalid Istio annotations in Kubernetes resources",
  inputs: ANNOTATED_KINDS,
  analyze(ctx) {
    forEachAnnotated(ctx, (r, name, value) => {
      if (ALWAYS_IGNORED.has(name)) return;
      const info = ISTIO_ANNOTATIONS.get(name);
      if (!info) {
        ctx.report(atField(newMessage(MESSAGES.UnknownAnnotation, r, name), `{.metadata.annotations.${name}}`));
        return;
      }
      // The deprecated inject annotation is fine next to the inject label.
      if (info.deprecated && !(name === INJECT && INJECT in labelsOf(r))) {
        ctx.report(
          atField(
            newMessage(MESSAGES.DeprecatedAnnotation, r, name, DEPRECATION_DETAILS[name] ?? ""),
            `{.metadata.annotations.${name}}`,
          ),
        );
      }
      if (info.resources.includes("Any")) return;
      const kindName = String(r.object.kind);
      if (!info.resources.includes(kindName)) {
        ctx.report(
          atField(
            newMessage(MESSAGES.MisplacedAnnotation, r, name, info.resources.join(", ")),
            `{.metadata.annotations.${name}}`,
          ),
        );
        return;
      }
      const error = annotationValueError(name, value);
      if (error !== undefined)
        ctx.report(atField(newMessage(MESSAGES.InvalidAnnotation, r, name, error), `{.metadata.annotations.${name}}`));
    });
  },
};

export const alphaAnnotationsAnalyzer: Analyzer = {
  name: "annotations.AlphaAnalyzer",
  description: "Checks for alpha Istio annotations in Kubernetes resources",
  inputs: ANNOTATED_KINDS,
  analyze(ctx) {
    forEachAnnotated(ctx, (r, name) => {
      const info = ISTIO_ANNOTATIONS.get(name);
      if (info?.featureStatus !== "Alpha" || ALWAYS_IGNORED.has(name)) return;
      if (r.kind === K.Pod && CNI_DEFAULTS.has(name) && !hasIstioInit(r)) return;
      ctx.report(atField(newMessage(MESSAGES.AlphaAnnotation, r, name), `{.metadata.annotations.${name}}`));
    });
  },
};

function hasIstioInit(pod: Resource): boolean {
  return asArray(specOf(pod).initContainers).some((c) => asRecord(c).name === "istio-init");
}
