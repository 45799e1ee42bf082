// What the ambient index holds: each workload and service as the `istio.workload.Address` ztunnel is
// sent (Istio's model.WorkloadInfo and model.ServiceInfo), encoded once when it is built, with what
// the index and the other collections need to find it (its resource name, its addresses, its labels).
import { create } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { packAny, type security, workloadapi } from "../api/index.ts";
import type { Labels } from "../krt/index.ts";

/** A workload or a service, as WDS sends it. */
export interface AddressInfo {
  /** The resource name: a workload's uid, a service's `namespace/hostname`. */
  readonly name: string;
  /** `network/ip` of each of its addresses (a service's CIDR addresses as `network/ip/length`). */
  readonly aliases: readonly string[];
  /** The `istio.workload.Address` (its Workload or Service), packed once and shared by every push. */
  readonly resource: Any;
}

export interface WorkloadInfo extends AddressInfo {
  readonly kind: "workload";
  readonly workload: workloadapi.Workload;
  readonly namespace: string;
  readonly labels: Labels;
  /** The `namespace/hostname` of each service it serves (the keys of `workload.services`). */
  readonly serviceKeys: readonly string[];
  /** Its object's creationTimestamp in ms (0 when unknown): a waypoint lists its workloads oldest first. */
  readonly creationTime: number;
}

export interface ServiceInfo extends AddressInfo {
  readonly kind: "service";
  readonly service: workloadapi.Service;
  readonly namespace: string;
  /** The workload labels it selects; null when it selects by none (its endpoints come otherwise). */
  readonly selector: Labels | null;
  /** Service port → the target port name the Service gives (Kubernetes `targetPort: http`), when named. */
  readonly targetPortNames: Readonly<Record<number, string>>;
  /** Service port → its name: a ServiceEntry's workloads (and a WorkloadEntry's services) map ports by it. */
  readonly portNames: Readonly<Record<number, string>>;
  /** The object it comes from: a Kubernetes Service, or a ServiceEntry (one info per host). */
  readonly source: { readonly kind: "Service" | "ServiceEntry"; readonly name: string };
  /** Its object's creation time (ms since the epoch, 0 when unknown): the oldest of one hostname wins. */
  readonly creationTime: number;
  /** The `namespace/name` of the waypoint it is bound to, if any. */
  readonly waypointKey?: string;
}

/** Why an object is not bound as it asks (Istio's model.StatusMessage): a condition's reason and message. */
export interface StatusMessage {
  reason: string;
  message: string;
}

/** A security policy ztunnel enforces, as WDS's Authorization sends it (Istio's WorkloadAuthorization). */
export interface PolicyInfo {
  /** The resource name: `namespace/name` of the Authorization. */
  readonly name: string;
  readonly namespace: string;
  /**
   * The workload labels it selects workloads by (an AuthorizationPolicy's selector); undefined for a
   * policy workloads reference otherwise (namespace and mesh-wide ones, and the PeerAuthentication-derived).
   */
  readonly selector: Labels | undefined;
  readonly authorization: security.Authorization;
  /** The Authorization, packed once and shared by every push. */
  readonly resource: Any;
}

/** The text form of IP bytes, as Go's netip prints it (IPv6 in RFC 5952 form, as the URL parser writes it). */
export function ipString(bytes: Uint8Array): string {
  if (bytes.length === 4) return bytes.join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return new URL(`http://[${groups.join(":")}]`).hostname.slice(1, -1);
}

/** The Address wrapping `value`, packed in an Any. */
export function packAddress(type: workloadapi.Address["type"]): Any {
  return packAny(workloadapi.AddressSchema, create(workloadapi.AddressSchema, { type }));
}

/** Whether two packed resources hold the same bytes (compared in place: no copy). */
export function sameResource(a: Any, b: Any): boolean {
  return Buffer.compare(a.value, b.value) === 0;
}
