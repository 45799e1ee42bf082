// The parts of a Kubernetes Pod that injection reads and writes, as plain JSON (what arrives in an
// AdmissionReview and what kube-inject reads from YAML). Every type keeps the fields it does not name.
import type { JsonObject } from "../../config/validation/common/index.ts";

export type { JsonObject };

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  controller?: boolean;
  [key: string]: unknown;
}

export interface ContainerPort {
  name?: string;
  hostPort?: number;
  containerPort: number;
  protocol?: string;
  hostIP?: string;
  [key: string]: unknown;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: JsonObject;
  [key: string]: unknown;
}

/** An HTTP GET or TCP action; `port` is a number or a named container port. */
export interface PortAction {
  port?: number | string;
  path?: string;
  host?: string;
  scheme?: string;
  [key: string]: unknown;
}

export interface Probe {
  httpGet?: PortAction;
  tcpSocket?: PortAction;
  grpc?: { port: number; service?: string | null; [key: string]: unknown };
  timeoutSeconds?: number;
  [key: string]: unknown;
}

export interface LifecycleHandler {
  httpGet?: PortAction;
  tcpSocket?: PortAction;
  [key: string]: unknown;
}

export interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  [key: string]: unknown;
}

export interface Container {
  name: string;
  image?: string;
  args?: string[];
  ports?: ContainerPort[];
  env?: EnvVar[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: LifecycleHandler; postStart?: LifecycleHandler; [key: string]: unknown };
  securityContext?: SecurityContext;
  restartPolicy?: string;
  volumeMounts?: { name: string; mountPath: string; [key: string]: unknown }[];
  [key: string]: unknown;
}

export interface Volume {
  name: string;
  [key: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  hostNetwork?: boolean;
  serviceAccountName?: string;
  nodeName?: string;
  imagePullSecrets?: { name: string }[];
  [key: string]: unknown;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  [key: string]: unknown;
}

export interface TypeMeta {
  apiVersion: string;
  kind: string;
}

/** The workload a pod belongs to: its name and namespace (Istio's DeploymentMeta). */
export interface DeployMeta {
  name: string;
  namespace: string;
}

export const PROXY_CONTAINER = "istio-proxy";
export const INIT_CONTAINER = "istio-init";
export const VALIDATION_CONTAINER = "istio-validation";
export const CORE_DUMP_CONTAINER = "enable-core-dump";

export function findContainer(name: string, containers: readonly Container[] | undefined): Container | undefined {
  return containers?.find((c) => c.name === name);
}

/** The proxy container, as a regular container or a native sidecar (init container). */
export function findSidecar(pod: Pod): Container | undefined {
  return findContainer(PROXY_CONTAINER, pod.spec.containers) ?? findContainer(PROXY_CONTAINER, pod.spec.initContainers);
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

// Kubernetes' CronJob names its Jobs "<cronjob>-<scheduled time in minutes>".
const CRONJOB_JOB_NAME = /^(.+)-\d{8,10}$/;

/** Istio's GetDeployMetaFromPod: the workload behind a pod from its controller reference. */
export function deployMetaFromPod(pod: Pod): { deploy: DeployMeta; typeMeta: TypeMeta } {
  const meta = pod.metadata;
  const deploy = { name: meta.name ?? "", namespace: meta.namespace ?? "" };
  const typeMeta = { apiVersion: "v1", kind: "Pod" };
  const controller = meta.generateName ? meta.ownerReferences?.find((ref) => ref.controller === true) : undefined;
  if (controller) {
    typeMeta.apiVersion = controller.apiVersion;
    typeMeta.kind = controller.kind;
    deploy.name = controller.name;
    const labels = meta.labels ?? {};
    const hash = labels["pod-template-hash"] ?? "";
    const rolloutHash = labels["rollouts-pod-template-hash"] ?? "";
    const cronJob = CRONJOB_JOB_NAME.exec(controller.name);
    if (controller.kind === "ReplicaSet" && hash !== "" && controller.name.endsWith(hash)) {
      deploy.name = controller.name.slice(0, -(hash.length + 1));
      typeMeta.kind = "Deployment";
    } else if (controller.kind === "ReplicaSet" && rolloutHash !== "" && controller.name.endsWith(rolloutHash)) {
      deploy.name = controller.name.slice(0, -(rolloutHash.length + 1));
      typeMeta.kind = "Rollout";
      typeMeta.apiVersion = "v1alpha1";
    } else if (controller.kind === "ReplicationController" && labels.deploymentconfig) {
      deploy.name = labels.deploymentconfig;
      typeMeta.kind = "DeploymentConfig";
    } else if (controller.kind === "Job" && cronJob) {
      deploy.name = cronJob[1];
      typeMeta.kind = "CronJob";
      typeMeta.apiVersion = "batch/v1";
    }
  }
  if (deploy.name === "") deploy.name = meta.name ?? "";
  return { deploy, typeMeta };
}
