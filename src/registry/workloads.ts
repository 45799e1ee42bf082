// Pods and WorkloadEntries as WorkloadInstances: what a workload contributes to any endpoint built
// from it (labels, identity, locality, network, tlsMode), following Istio's EndpointBuilder (kube) and
// convertWorkloadEntryToWorkloadInstance (serviceentry).
import type { V1ObjectReference, V1OwnerReference, V1PodSpec, V1PodStatus } from "@kubernetes/client-node";
import type { ConfigObject } from "../config/index.ts";
import { podSpecOf } from "../config/typed.ts";
import type { WorkloadEntrySpec } from "../config/types/index.ts";
import type { Collection, FetchContext, Index, Labels } from "../krt/index.ts";
import { copyWith, parseGoBool } from "../util/index.ts";
import type { ServiceEndpoint, WorkloadInstance } from "./model.ts";
import { LABEL_NETWORK, type NetworkOf } from "./networks.ts";

const LABEL_REGION = "topology.kubernetes.io/region";
const LABEL_ZONE = "topology.kubernetes.io/zone";
const LABEL_SUBZONE = "topology.istio.io/subzone";
const LABEL_CLUSTER = "topology.istio.io/cluster";
const LABEL_HOSTNAME = "kubernetes.io/hostname";
const LABEL_TLS_MODE = "security.istio.io/tlsMode";
const LABEL_LOCALITY = "topology.istio.io/locality";
const LABEL_LEGACY_LOCALITY = "istio-locality";
const LABEL_WORKLOAD_NAME = "service.istio.io/workload-name";
// Pre-GA node topology labels, still read when the GA ones are absent.
const LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region";
const LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone";
const ANNOTATION_AUTO_REGISTRATION_GROUP = "istio.io/autoRegistrationGroup";
const ANNOTATION_HEALTH_CHECKS = "proxy.istio.io/health-checks-enabled";

const TLS_MODE_ISTIO = "istio";
const TLS_MODE_DISABLED = "disabled";

/** What every workload conversion needs from the mesh. */
export interface WorkloadContext {
  trustDomain: string;
  clusterId: string;
  /** The network of a workload or address that does not name one. */
  networkOf: NetworkOf;
}

/** `spiffe://<trust domain>/ns/<ns>/sa/<sa>`, or "" without a service account. */
export function spiffeIdentity(trustDomain: string, namespace: string, serviceAccount: string): string {
  if (serviceAccount === "") return "";
  // Istio's sanitizeTrustDomain: '@' cannot appear in a SPIFFE trust domain.
  return `spiffe://${trustDomain.replaceAll("@", ".")}/ns/${namespace}/sa/${serviceAccount}`;
}

/** The locality a workload declares with a label; Kubernetes labels cannot hold '/', so '.' stands for it. */
function localityFromLabels(labels: Labels): string {
  const label = labels[LABEL_LOCALITY] ?? labels[LABEL_LEGACY_LOCALITY] ?? "";
  return label.includes("/") ? label : label.replaceAll(".", "/");
}

/** `region/zone/subzone` from a Node's topology labels, or "" when it has none. */
function nodeLocality(node: ConfigObject | undefined): string {
  const labels = node?.metadata.labels ?? {};
  const region = labels[LABEL_REGION] ?? labels[LABEL_REGION_BETA] ?? "";
  const zone = labels[LABEL_ZONE] ?? labels[LABEL_ZONE_BETA] ?? "";
  const subzone = labels[LABEL_SUBZONE] ?? "";
  return region === "" && zone === "" && subzone === "" ? "" : `${region}/${zone}/${subzone}`;
}

export function splitLocality(locality: string): { region: string; zone: string; subzone: string } {
  const [region = "", zone = "", subzone = ""] = locality.split("/");
  return { region, zone, subzone };
}

/** Istio's AugmentLabels: the workload's labels plus topology labels endpoint subsets and policies match on. */
export function augmentLabels(
  labels: Labels,
  locality: string,
  clusterId: string,
  nodeName: string,
  network: string,
): Labels {
  const out: Record<string, string> = copyWith(labels);
  const { region, zone, subzone } = splitLocality(locality);
  if (region !== "") out[LABEL_REGION] = region;
  if (zone !== "") out[LABEL_ZONE] = zone;
  if (subzone !== "") out[LABEL_SUBZONE] = subzone;
  if (clusterId !== "") out[LABEL_CLUSTER] = clusterId;
  if (nodeName !== "") out[LABEL_HOSTNAME] = nodeName;
  if (network !== "" && !out[LABEL_NETWORK]) out[LABEL_NETWORK] = network;
  return out;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

export function isIpAddress(address: string): boolean {
  const v4 = IPV4.exec(address);
  if (v4) return v4.slice(1).every((octet) => Number(octet) <= 255);
  return address.includes(":") && /^[0-9a-fA-F:.]+$/.test(address);
}

/** Nodes by name: Node is cluster-scoped, so this does not depend on how the store keys it. */
export function nodesByName(nodes: Collection<ConfigObject>): Index<ConfigObject> {
  return nodes.addIndex("registry/nodes-by-name", (node) => (node.metadata.name ? [node.metadata.name] : []));
}

/** Istio's GetWorkloadMetaFromPod: the workload-name label, else the controller (a ReplicaSet's Deployment), else the pod. */
export function podWorkloadName(pod: ConfigObject): string {
  const labels = pod.metadata.labels ?? {};
  const named = labels[LABEL_WORKLOAD_NAME];
  if (named !== undefined) return named;
  const name = pod.metadata.name ?? "";
  if (!pod.metadata.generateName) return name;
  const owners = (pod.metadata.ownerReferences ?? []) as V1OwnerReference[];
  const controller = owners.find((o) => o.controller === true);
  if (!controller) return name;
  const hash = labels["pod-template-hash"];
  if (controller.kind === "ReplicaSet" && hash && controller.name.endsWith(`-${hash}`)) {
    return controller.name.slice(0, -(hash.length + 1));
  }
  return controller.name || name;
}

/** Named TCP container ports (first one of a name wins, as in Kubernetes), including native sidecars. */
export function podPortMap(spec: V1PodSpec | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  const sidecars = (spec?.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
  for (const container of [...(spec?.containers ?? []), ...sidecars]) {
    for (const port of container.ports ?? []) {
      if (!port.name || (port.protocol ?? "TCP") !== "TCP" || port.name in out) continue;
      out[port.name] = port.containerPort;
    }
  }
  return out;
}

/** Istio's shouldPodBeInEndpoints && IsPodReady. */
function podReady(pod: ConfigObject, status: V1PodStatus | undefined): boolean {
  if (status?.phase === "Failed" || status?.phase === "Succeeded") return false;
  if (!status?.podIP) return false;
  if (pod.metadata.deletionTimestamp) return false;
  return status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/** A Pod as a workload; locality comes from its Node unless the pod names one with a label. */
export function podWorkload(
  ctx: FetchContext,
  pod: ConfigObject,
  nodes: Index<ConfigObject>,
  mesh: WorkloadContext,
): WorkloadInstance {
  const spec = podSpecOf(pod);
  const status = pod.status as V1PodStatus | undefined;
  const labels = pod.metadata.labels ?? {};
  const namespace = pod.metadata.namespace ?? "";
  const nodeName = spec?.nodeName ?? "";
  let locality = localityFromLabels(labels);
  if (locality === "" && nodeName !== "") locality = nodeLocality(ctx.fetchIndex(nodes, nodeName)[0]);
  const address = status?.podIP ?? "";
  const network = labels[LABEL_NETWORK] || mesh.networkOf(ctx, address);
  // The API server defaults the service account; a pod read from a file may not carry it.
  const serviceAccount = spec?.serviceAccountName || spec?.serviceAccount || "default";
  return {
    kind: "Pod",
    name: pod.metadata.name ?? "",
    namespace,
    address,
    labels: augmentLabels(labels, locality, mesh.clusterId, nodeName, network),
    serviceAccount,
    identity: spiffeIdentity(mesh.trustDomain, namespace, serviceAccount),
    locality,
    clusterId: mesh.clusterId,
    network,
    tlsMode: labels[LABEL_TLS_MODE] ?? TLS_MODE_DISABLED,
    workloadName: podWorkloadName(pod),
    weight: 1,
    portMap: podPortMap(spec),
    ready: podReady(pod, status),
    dnsOnly: false,
    nodeName,
    ...(spec?.subdomain
      ? { podDns: { hostname: spec.hostname || (pod.metadata.name ?? ""), subdomain: spec.subdomain } }
      : {}),
  };
}

/** A WorkloadEntry's workload name: its auto-registration group, else its workload-name label, else its name. */
export function workloadEntryName(name: string, annotations: Labels, labels: Labels): string {
  return annotations[ANNOTATION_AUTO_REGISTRATION_GROUP] ?? labels[LABEL_WORKLOAD_NAME] ?? name;
}

/**
 * A WorkloadEntry spec (a WorkloadEntry object's, or one inline in a ServiceEntry) as a workload.
 * `meta` names the owning object; its namespace is also where the SPIFFE identity is minted.
 */
export function workloadEntryWorkload(
  ctx: FetchContext,
  entry: WorkloadEntrySpec,
  meta: { name: string; namespace: string; annotations: Labels; ready: boolean },
  mesh: WorkloadContext,
): WorkloadInstance {
  const labels = entry.labels ?? {};
  const address = entry.address ?? "";
  const serviceAccount = entry.serviceAccount ?? "";
  const locality = entry.locality || localityFromLabels(labels);
  const network = entry.network || labels[LABEL_NETWORK] || mesh.networkOf(ctx, address);
  // With a service account the workload runs a sidecar and takes mTLS, unless its label says otherwise.
  const tlsMode = labels[LABEL_TLS_MODE] ?? (serviceAccount !== "" ? TLS_MODE_ISTIO : TLS_MODE_DISABLED);
  return {
    kind: "WorkloadEntry",
    name: meta.name,
    namespace: meta.namespace,
    address,
    labels: augmentLabels(labels, locality, mesh.clusterId, "", network),
    serviceAccount,
    identity: spiffeIdentity(mesh.trustDomain, meta.namespace, serviceAccount),
    locality,
    clusterId: mesh.clusterId,
    network,
    tlsMode,
    workloadName: workloadEntryName(meta.name, meta.annotations, labels),
    weight: entry.weight || 1,
    portMap: { ...(entry.ports ?? {}) },
    ready: meta.ready,
    dnsOnly: address !== "" && !isIpAddress(address),
    nodeName: "",
  };
}

/** A WorkloadEntry object: its metadata labels override its spec labels (Istio's ConvertWorkloadEntry). */
export function workloadEntryObjectWorkload(
  ctx: FetchContext,
  entry: ConfigObject<WorkloadEntrySpec>,
  mesh: WorkloadContext,
): WorkloadInstance {
  const spec = entry.spec ?? {};
  const annotations = entry.metadata.annotations ?? {};
  return workloadEntryWorkload(
    ctx,
    { ...spec, labels: { ...(spec.labels ?? {}), ...(entry.metadata.labels ?? {}) } },
    {
      name: entry.metadata.name ?? "",
      namespace: entry.metadata.namespace ?? "",
      annotations,
      ready: workloadEntryHealthy(entry, annotations),
    },
    mesh,
  );
}

/**
 * With health checks on (the annotation as Go's ParseBool reads it), an entry is unhealthy until its
 * first Healthy condition says True (Istio's isHealthy).
 */
function workloadEntryHealthy(entry: ConfigObject, annotations: Labels): boolean {
  if (!parseGoBool(annotations[ANNOTATION_HEALTH_CHECKS] ?? "")) return true;
  const status = entry.status as { conditions?: { type?: string; status?: string }[] } | undefined;
  return status?.conditions?.find((c) => c.type === "Healthy")?.status === "True";
}

/** The workload key of the Pod an endpoint address points at, when it names one. */
export function podRefKey(ref: V1ObjectReference | undefined, namespace: string): string | undefined {
  if (ref?.kind !== "Pod" || !ref.name) return undefined;
  return `Pod/${ref.namespace || namespace}/${ref.name}`;
}

export function workloadKey(w: WorkloadInstance): string {
  return `${w.kind}/${w.namespace}/${w.name}`;
}

/** Where an endpoint sends traffic for one service port. */
export type EndpointTarget = Pick<
  ServiceEndpoint,
  "hostname" | "namespace" | "servicePort" | "servicePortName" | "address" | "port" | "health"
>;

/** An endpoint of `target`, carrying what `workload` says about who serves it (nothing when it is a bare address). */
export function endpointOf(
  ctx: FetchContext,
  target: EndpointTarget,
  workload: WorkloadInstance | undefined,
  mesh: WorkloadContext,
): ServiceEndpoint {
  const network = workload ? workload.network : mesh.networkOf(ctx, target.address);
  // Field by field, not `...target`: a spread followed by more fields gives each endpoint a hidden class
  // of its own on Node 20 (see util/copy-with.ts).
  return {
    hostname: target.hostname,
    namespace: target.namespace,
    servicePort: target.servicePort,
    servicePortName: target.servicePortName,
    address: target.address,
    port: target.port,
    health: target.health,
    labels: workload?.labels ?? augmentLabels({}, "", mesh.clusterId, "", network),
    serviceAccount: workload?.serviceAccount ?? "",
    identity: workload?.identity ?? "",
    locality: workload?.locality ?? "",
    clusterId: mesh.clusterId,
    network,
    tlsMode: workload?.tlsMode ?? TLS_MODE_DISABLED,
    workloadName: workload?.workloadName ?? "",
    workloadNamespace: workload?.namespace ?? target.namespace,
    workloadKind: workload?.kind ?? "",
    weight: workload?.weight ?? 1,
    ...(workload?.podDns ? { podDns: workload.podDns } : {}),
    ...(workload?.nodeName ? { nodeName: workload.nodeName } : {}),
  };
}
