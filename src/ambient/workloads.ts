// Pods, WorkloadEntries and ServiceEntries' endpoints as ztunnel's `istio.workload.Workload` (Istio's
// ambient podWorkloadBuilder, workloadEntryWorkloadBuilder and serviceEntryWorkloadBuilder,
// pilot/pkg/serviceregistry/ambient/workloads.go). Every Pod with an IP that has not terminated is a
// workload, in the mesh or not: ztunnel needs to know where any address leads. Which of them ztunnel
// reaches over HBONE is its tunnel protocol (the `networking.istio.io/tunnel` label or the CNI's
// `ambient.istio.io/redirection` annotation).

import { create } from "@bufbuild/protobuf";
import type { V1PodSpec, V1PodStatus } from "@kubernetes/client-node";
import { workloadapi } from "../api/index.ts";
import type { ConfigObject } from "../config/index.ts";
import { podSpecOf } from "../config/typed.ts";
import type { WorkloadEntrySpec } from "../config/types/index.ts";
import type { Labels } from "../krt/index.ts";
import { podPortMap, podWorkloadName, splitLocality } from "../registry/index.ts";
import { ipAddressBytes } from "./ip-bytes.ts";
import { ipString, packAddress, type ServiceInfo, type WorkloadInfo } from "./model.ts";
import { creationTime } from "./services.ts";

const LABEL_TUNNEL = "networking.istio.io/tunnel";
const ANNOTATION_REDIRECTION = "ambient.istio.io/redirection";
const NAME_LABELS = ["service.istio.io/canonical-name", "app.kubernetes.io/name", "app"];
const REVISION_LABELS = ["service.istio.io/canonical-revision", "app.kubernetes.io/version", "version"];

/** What a workload's conversion reads besides its object. */
export interface WorkloadContext {
  clusterId: string;
  /** The network of the cluster's workloads (the system namespace's topology.istio.io/network). */
  network: string;
  /** The mesh's trust domain; sent only when it is not the default `cluster.local` (ztunnel's default). */
  trustDomain: string;
  /** The services of its namespace that select it (a ServiceEntry endpoint's: its entry's). */
  services: readonly ServiceInfo[];
  /** The AuthorizationPolicy resource names that select it. */
  policies: readonly string[];
  /** The waypoint its traffic goes through. */
  waypoint?: workloadapi.GatewayAddress;
  /** How ztunnel reaches it when it is a waypoint's own pod with an inbound binding. */
  applicationTunnel?: { protocol: workloadapi.ApplicationTunnel_Protocol; port: number };
}

export interface PodContext extends WorkloadContext {
  /** The locality of the Pod's Node (its topology labels), when it has any. */
  locality: workloadapi.Locality | undefined;
}

export function podWorkloadInfo(pod: ConfigObject, context: PodContext): WorkloadInfo | undefined {
  const status = pod.status as V1PodStatus | undefined;
  if (status?.phase === "Failed" || status?.phase === "Succeeded") return undefined;
  const ips = status?.podIPs && status.podIPs.length > 0 ? status.podIPs.map((p) => p.ip) : [status?.podIP ?? ""];
  const addresses: Uint8Array[] = [];
  for (const ip of ips) {
    const bytes = ip ? ipAddressBytes(ip) : undefined;
    if (!bytes) return undefined;
    addresses.push(bytes);
  }
  const spec = podSpecOf(pod) ?? ({} as V1PodSpec);
  const name = pod.metadata.name ?? "";
  const namespace = pod.metadata.namespace ?? "";
  const labels = pod.metadata.labels ?? {};
  const annotations = pod.metadata.annotations ?? {};
  const ready = status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  const workloadName = podWorkloadName(pod);
  const containerPorts = podPortMap(spec);
  const services = workloadServices(context.services, (name) => containerPorts[name], "pod");
  const workload = create(workloadapi.WorkloadSchema, {
    uid: `${context.clusterId}//Pod/${namespace}/${name}`,
    name,
    namespace,
    addresses,
    network: context.network,
    tunnelProtocol: tunnelProtocol(labels, annotations),
    nativeTunnel: supportsHttpTunnel(labels),
    trustDomain: context.trustDomain === "cluster.local" ? "" : context.trustDomain,
    serviceAccount: spec.serviceAccountName ?? "",
    waypoint: context.waypoint,
    node: spec.nodeName ?? "",
    applicationTunnel: context.applicationTunnel,
    canonicalName: firstLabel(labels, NAME_LABELS) ?? workloadName,
    canonicalRevision: firstLabel(labels, REVISION_LABELS) ?? "latest",
    workloadType: workloadapi.WorkloadType.POD,
    workloadName,
    services,
    authorizationPolicies: [...context.policies],
    status:
      ready && !pod.metadata.deletionTimestamp
        ? workloadapi.WorkloadStatus.HEALTHY
        : workloadapi.WorkloadStatus.UNHEALTHY,
    clusterId: context.clusterId,
    locality: context.locality,
    networkMode: spec.hostNetwork ? workloadapi.NetworkMode.HOST_NETWORK : workloadapi.NetworkMode.STANDARD,
  });
  return {
    kind: "workload",
    name: workload.uid,
    aliases: addresses.map((a) => `${workload.network}/${ipString(a)}`),
    resource: packAddress({ case: "workload", value: workload }),
    workload,
    namespace,
    labels,
    serviceKeys: Object.keys(services),
    creationTime: creationTime(pod),
  };
}

/** What identifies an entry's workload: a WorkloadEntry, or a ServiceEntry's endpoint. */
export interface EntryIdentity {
  uid: string;
  name: string;
  namespace: string;
  /** A WorkloadEntry's labels (its spec's under its metadata's); a ServiceEntry's own for its endpoints. */
  labels: Labels;
  annotations: Labels;
  workloadName: string;
  /** The WorkloadEntry's or ServiceEntry's creationTimestamp in ms. */
  creationTime: number;
}

/**
 * A WorkloadEntry, or a ServiceEntry's endpoint, as a workload: always healthy, reached at its IP, or
 * by `hostname` when its address is not one; its weight as its capacity.
 */
export function entryWorkloadInfo(
  entry: WorkloadEntrySpec,
  identity: EntryIdentity,
  context: WorkloadContext,
): WorkloadInfo {
  const addressText = entry.address ?? "";
  const address = ipAddressBytes(addressText);
  const network = entry.network || context.network;
  const services = workloadServices(context.services, (name) => entry.ports?.[name], "entry");
  const { region, zone, subzone } = splitLocality(entry.locality ?? "");
  const workload = create(workloadapi.WorkloadSchema, {
    uid: identity.uid,
    name: identity.name,
    namespace: identity.namespace,
    addresses: address ? [address] : [],
    hostname: address ? "" : addressText,
    network,
    tunnelProtocol: tunnelProtocol(identity.labels, identity.annotations),
    nativeTunnel: supportsHttpTunnel(identity.labels),
    trustDomain: context.trustDomain === "cluster.local" ? "" : context.trustDomain,
    serviceAccount: entry.serviceAccount ?? "",
    waypoint: context.waypoint,
    applicationTunnel: context.applicationTunnel,
    canonicalName: firstLabel(identity.labels, NAME_LABELS) ?? identity.workloadName,
    canonicalRevision: firstLabel(identity.labels, REVISION_LABELS) ?? "latest",
    workloadType: workloadapi.WorkloadType.POD,
    workloadName: identity.workloadName,
    services,
    authorizationPolicies: [...context.policies],
    status: workloadapi.WorkloadStatus.HEALTHY,
    clusterId: context.clusterId,
    locality:
      region === "" && zone === "" && subzone === ""
        ? undefined
        : create(workloadapi.LocalitySchema, { region, zone, subzone }),
    ...(entry.weight ? { capacity: entry.weight } : {}),
  });
  return {
    kind: "workload",
    name: workload.uid,
    aliases: address ? [`${network}/${ipString(address)}`] : [],
    resource: packAddress({ case: "workload", value: workload }),
    workload,
    namespace: identity.namespace,
    labels: identity.labels,
    serviceKeys: Object.keys(services),
    creationTime: identity.creationTime,
  };
}

/**
 * The ports of each service a workload serves, by `namespace/hostname`, its target ports resolved by
 * the workload's named ports (`portOf`): a Service's named target port must be one (else the port is
 * left out); a ServiceEntry's port name, when the workload has it, overrides the target port, and so
 * does a Service's port name for an entry (WorkloadEntries name ports as ServiceEntries do).
 */
function workloadServices(
  services: readonly ServiceInfo[],
  portOf: (name: string) => number | undefined,
  workload: "pod" | "entry",
): Record<string, workloadapi.PortList> {
  const out: Record<string, workloadapi.PortList> = {};
  for (const info of services) {
    const ports: workloadapi.Port[] = [];
    for (const port of info.service.ports) {
      const targetName = info.targetPortNames[port.servicePort];
      const portName = info.portNames[port.servicePort] ?? "";
      let targetPort = port.targetPort;
      if (targetName !== undefined) {
        const found = portOf(targetName);
        if (found === undefined) continue;
        targetPort = found;
      } else if (portName !== "" && (info.source.kind === "ServiceEntry" || workload === "entry")) {
        targetPort = portOf(portName) ?? targetPort;
      }
      ports.push(create(workloadapi.PortSchema, { servicePort: port.servicePort, targetPort }));
    }
    out[info.name] = create(workloadapi.PortListSchema, { ports });
  }
  return out;
}

function supportsHttpTunnel(labels: Labels): boolean {
  return (labels[LABEL_TUNNEL] ?? "").split(",").includes("http");
}

/** HBONE for a Pod the CNI enrolled in ambient, or one that terminates HBONE itself; otherwise none. */
function tunnelProtocol(labels: Labels, annotations: Labels): workloadapi.TunnelProtocol {
  if (annotations[ANNOTATION_REDIRECTION] === "enabled" || supportsHttpTunnel(labels))
    return workloadapi.TunnelProtocol.HBONE;
  return workloadapi.TunnelProtocol.NONE;
}

function firstLabel(labels: Labels, keys: readonly string[]): string | undefined {
  for (const key of keys) if (key in labels) return labels[key];
  return undefined;
}

/** A Node's locality from its topology labels, or undefined when it has none. */
export function nodeLocality(node: ConfigObject | undefined): workloadapi.Locality | undefined {
  const labels = node?.metadata.labels ?? {};
  const region = labels["topology.kubernetes.io/region"] ?? "";
  const zone = labels["topology.kubernetes.io/zone"] ?? "";
  const subzone = labels["topology.istio.io/subzone"] ?? "";
  if (region === "" && zone === "" && subzone === "") return undefined;
  return create(workloadapi.LocalitySchema, { region, zone, subzone });
}
