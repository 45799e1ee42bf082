// `sluice kube-inject`: the injector run offline over workload manifests, as istioctl kube-inject
// does (Istio's IntoResourceFile/IntoObject). The pod template of each workload is injected with the
// webhook's own code and the resulting JSON Patch applied to it; other objects pass through.
import { parseAllDocuments, stringify } from "yaml";
import type { ConfigObject, MeshConfig } from "../config/index.ts";
import { decodeConfigText } from "../config/index.ts";
import { asObject } from "../config/validation/common/index.ts";
import { injectPod } from "./inject/inject.ts";
import { applyPatch } from "./inject/jsonpatch.ts";
import { deployMetaFromPod, type ObjectMeta, type Pod, type PodSpec, type TypeMeta } from "./inject/pod.ts";
import { type InjectionPolicyConfig, injectRequired } from "./inject/policy.ts";
import type { InjectionSettings } from "./inject/settings.ts";

export interface KubeInjectOptions {
  mesh: MeshConfig;
  settings: InjectionSettings;
  /** Why a workload was left alone ("===> Skipping injection because ..."). */
  warn: (message: string) => void;
}

/** kube-inject injects unless the pod opts out; the namespace's policy and selectors are the cluster's business. */
const KUBE_INJECT_POLICY: InjectionPolicyConfig = {
  policy: "enabled",
  neverInjectSelector: [],
  alwaysInjectSelector: [],
};

/** Kinds whose `spec.template` is a pod template (Istio's injectScheme kinds). */
const POD_TEMPLATE_KINDS = new Set([
  "Deployment",
  "StatefulSet",
  "DaemonSet",
  "ReplicaSet",
  "ReplicationController",
  "Job",
  "DeploymentConfig",
]);

/**
 * Every document of one file's text, injected where it holds a workload, as YAML documents each ended
 * by `---`. A Kubernetes List stays a List, its items injected, as istioctl writes it.
 */
export function kubeInjectText(text: string, file: string, opts: KubeInjectOptions): string {
  let out = "";
  for (const doc of parseAllDocuments(text)) {
    if (doc.contents === null) continue;
    // Each document is decoded on its own by the config decoder (Kubernetes' YAML rules), with its lines
    // in place so that errors name the right one.
    const [start, , end] = doc.range;
    const lines = text.slice(0, start).split("\n").length - 1;
    const objects = decodeConfigText("\n".repeat(lines) + text.slice(start, end), file).map((decoded) => {
      if (!decoded.object) {
        throw new Error(`${decoded.position.file}:${decoded.position.line}: ${decoded.error ?? "cannot decode"}`);
      }
      return kubeInjectObject(decoded.object, opts);
    });
    const value: unknown = doc.errors.length === 0 ? doc.toJS() : undefined;
    const list = asObject(value);
    const isList = list !== undefined && String(list.kind).endsWith("List") && Array.isArray(list.items);
    for (const written of isList ? [{ ...list, items: objects }] : objects) {
      out += `${stringify(written, { sortMapEntries: true, lineWidth: 0, indentSeq: false })}---\n`;
    }
  }
  return out;
}

interface PodTemplateRef {
  metadata: ObjectMeta;
  spec: PodSpec;
  set: (metadata: ObjectMeta, spec: PodSpec) => void;
}

/** The object with its pod template injected; objects without one come back unchanged. */
export function kubeInjectObject(obj: ConfigObject, opts: KubeInjectOptions): ConfigObject {
  const out = structuredClone(obj);
  const template = podTemplateOf(out);
  if (!template) return out;
  const workload = { name: out.metadata.name ?? "", namespace: out.metadata.namespace ?? "" };
  // An empty pod template is injected as a pod without containers, as Istio's typed decoding reads it.
  const pod: Pod = {
    metadata: template.metadata ?? {},
    spec: { ...template.spec, containers: template.spec?.containers ?? [] },
  };
  const owner =
    out.kind === "Pod"
      ? deployMetaFromPod(pod)
      : { deploy: workload, typeMeta: { apiVersion: out.apiVersion, kind: out.kind } as TypeMeta };
  const name = template.metadata.name || workload.name;
  const fullName = workload.namespace ? `${workload.namespace}/${name}` : name;
  const what = out.kind ? `${out.kind} "${fullName}"` : `"${fullName}"`;
  if (pod.spec.hostNetwork) {
    opts.warn(`===> Skipping injection because ${what} has host networking enabled\n`);
    return out;
  }
  if (!injectRequired(KUBE_INJECT_POLICY, pod.spec, pod.metadata)) {
    opts.warn(`===> Skipping injection because ${what} has sidecar injection disabled\n`);
    return out;
  }
  // As istioctl, offline injection uses the sidecar template by default and adds no injectedAnnotations.
  const settings = { ...opts.settings, defaultTemplates: ["sidecar"], injectedAnnotations: {} };
  const { patch } = injectPod({ pod, mesh: opts.mesh, settings, owner });
  const injected = applyPatch(pod, patch);
  template.set(injected.metadata, injected.spec);
  return out;
}

function podTemplateOf(obj: ConfigObject): PodTemplateRef | undefined {
  // Arbitrary manifests from the command line, not admitted against any schema: read as the shapes injection
  // takes, as istioctl kube-inject decodes them (the kind decides which of these fields exists).
  const spec = obj.spec as { template?: Pod; jobTemplate?: { metadata?: ObjectMeta; spec?: { template?: Pod } } };
  if (obj.kind === "Pod") {
    return {
      metadata: obj.metadata as ObjectMeta,
      spec: obj.spec as PodSpec,
      set: (metadata, podSpec) => {
        obj.metadata = metadata;
        obj.spec = podSpec;
      },
    };
  }
  if (obj.kind === "CronJob" && spec?.jobTemplate?.spec?.template) {
    // As Istio does, a CronJob's labels and annotations go on its job template, not the pod template.
    const jobTemplate = spec.jobTemplate;
    const podTemplate = spec.jobTemplate.spec.template;
    return {
      metadata: jobTemplate.metadata ?? {},
      spec: podTemplate.spec,
      set: (metadata, podSpec) => {
        jobTemplate.metadata = metadata;
        podTemplate.spec = podSpec;
      },
    };
  }
  if (POD_TEMPLATE_KINDS.has(obj.kind) && spec?.template) {
    const podTemplate = spec.template;
    return {
      metadata: podTemplate.metadata ?? {},
      spec: podTemplate.spec,
      set: (metadata, podSpec) => {
        podTemplate.metadata = metadata;
        podTemplate.spec = podSpec;
      },
    };
  }
  return undefined;
}
