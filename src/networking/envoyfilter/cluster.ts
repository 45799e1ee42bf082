// CLUSTER patches (Istio's envoyfilter/cluster_patch.go): REMOVE drops a matching generated cluster,
// MERGE and MERGE_AND_REPLACE_LIST merge into it (a transport socket of the same name merged payload
// into payload), ADD appends clusters.
import { clone } from "@bufbuild/protobuf";
import { cluster } from "../../api/index.ts";
import { parseClusterName } from "../cluster/names.ts";
import { type Marks, patchResource } from "./guard.ts";
import { typeMismatch } from "./listener.ts";
import { isMergeOperation, listMerge, mergeAnyWithAny, mergeMessage } from "./merge.ts";
import type { Patch, PatchContext } from "./patch.ts";
import { contextMatches, type PatchSet } from "./patch-set.ts";
import { envoyFilterStatus } from "./status.ts";

/**
 * Istio's clusterMatch: a name matches exactly; otherwise the `direction|port|subset|host` parts, the
 * host of an inbound cluster being any of the services behind it (`inboundHosts`).
 */
function clusterMatch(c: cluster.Cluster, patch: Patch, inboundHosts: readonly string[]): boolean {
  const match = patch.match.cluster;
  if (!match) return true;
  if (match.name) return match.name === c.name;
  const parsed = parseClusterName(c.name);
  const hosts = parsed?.direction === "inbound" && inboundHosts.length > 0 ? inboundHosts : [parsed?.hostname ?? ""];
  if (match.subset && match.subset !== (parsed?.subset ?? "")) return false;
  if (match.service && !hosts.includes(match.service)) return false;
  return !match.portNumber || match.portNumber === (parsed?.port ?? 0);
}

/**
 * A patch's transport socket merges into the cluster's socket of the same name (or the matching
 * entry of transport_socket_matches, without which the patch's socket is dropped); a socket with
 * another name replaces the cluster's. False when the patch has no transport socket.
 */
function mergeTransportSocket(c: cluster.Cluster, patch: Patch): boolean {
  const socket = (patch.value as cluster.Cluster).transportSocket;
  if (!socket) return false;
  let target = c.transportSocket;
  if (c.transportSocketMatches.length > 0) {
    target = c.transportSocketMatches.find((m) => m.transportSocket?.name === socket.name)?.transportSocket;
    if (!target) return true;
  } else if (target && target.name !== socket.name) {
    target = undefined;
  }
  if (!target) {
    c.transportSocket = clone(cluster.ClusterSchema, patch.value as cluster.Cluster).transportSocket;
    return true;
  }
  if (target.configType.case === "typedConfig" && socket.configType.case === "typedConfig") {
    const merged = mergeAnyWithAny(target.configType.value, socket.configType.value, listMerge(patch.operation));
    if (merged) target.configType = { case: "typedConfig", value: merged };
    else {
      envoyFilterStatus.error(
        typeMismatch(
          patch,
          socket.configType.value.typeUrl,
          target.configType.value.typeUrl,
          "patch.value.transportSocket",
        ),
      );
    }
  }
  return true;
}

function patchCluster(
  context: PatchContext,
  set: PatchSet,
  c: cluster.Cluster,
  inboundHosts: readonly string[],
  marks: Marks,
): cluster.Cluster | undefined {
  for (const patch of set.of("CLUSTER")) {
    const applies = contextMatches(patch, context) && clusterMatch(c, patch, inboundHosts);
    if (patch.operation === "REMOVE" && applies) {
      marks.mark(patch, true);
      return undefined;
    }
    if (!isMergeOperation(patch.operation) || !applies) {
      marks.mark(patch, false);
      continue;
    }
    if (!mergeTransportSocket(c, patch)) {
      mergeMessage(cluster.ClusterSchema, c, patch.value as cluster.Cluster, listMerge(patch.operation));
    }
    marks.mark(patch, true);
  }
  return c;
}

/** The generated cluster after MERGE/REMOVE patches for `context`; undefined when removed. */
export function applyClusterPatches(
  context: PatchContext,
  set: PatchSet,
  c: cluster.Cluster,
  inboundHosts: readonly string[] = [],
): cluster.Cluster | undefined {
  const key = `${context}|${inboundHosts.join(",")}`;
  return patchResource(cluster.ClusterSchema, c, set, ["CLUSTER"], key, (subset, target, marks) =>
    patchCluster(context, subset, target, inboundHosts, marks),
  );
}

/** Istio's InsertedClusters: ADD patches for `context`; one for ANY adds only to outbound and gateways. */
export function insertedClusters(context: PatchContext, set: PatchSet): cluster.Cluster[] {
  const added: cluster.Cluster[] = [];
  for (const patch of set.of("CLUSTER")) {
    if (patch.operation !== "ADD") continue;
    if (patch.context === "ANY" && context !== "SIDECAR_OUTBOUND" && context !== "GATEWAY") continue;
    const applies = contextMatches(patch, context);
    envoyFilterStatus.record(patch, applies);
    if (applies) added.push(clone(cluster.ClusterSchema, patch.value as cluster.Cluster));
  }
  return added;
}
