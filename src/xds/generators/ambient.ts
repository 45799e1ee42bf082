// The ambient types: WDS `Address` and `Workload` (Istio's WorkloadGenerator) and `Authorization`
// (its WorkloadRBACGenerator), pilot/pkg/xds/workload.go. With ambient on (PILOT_ENABLE_AMBIENT) the
// addresses come from the ambient index: a wildcard subscriber (ztunnel's default) is sent every
// workload and service when it asks, then only the addresses each push names; an on-demand subscriber
// is sent what the names it asks for stand for (a workload by uid or `network/ip`, a service by
// `namespace/hostname` or VIP, with the workloads behind it). With ambient off, as istiod's
// NoopAmbientIndexes, a request is answered with no resources and pushes send nothing, except that
// Authorization answers again when an AuthorizationPolicy changed.
import { anyPack } from "@bufbuild/protobuf/wkt";
import type { AddressInfo, AmbientIndex, WorkloadInfo } from "../../ambient/index.ts";
import { workloadapi } from "../../api/index.ts";
import { kindKey } from "../../config/index.ts";
import type { PushRequest } from "../../model/index.ts";
import type { DeltaGenerateResult, Generator, WatchedResource, XdsResource } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { isProxyRequest } from "./needs-push.ts";

const AUTHORIZATION_POLICY = kindKey("security.istio.io", "AuthorizationPolicy");

/** What the WDS generator reads of the ambient index. */
export type AddressSource = Pick<AmbientIndex, "all" | "addressInformation">;

/** Address and Workload: from `index` when ambient is on, else none (istiod's empty index). */
export function workloadGenerator(index: AddressSource | undefined): Generator {
  if (!index) {
    return {
      generate(_proxy, _watched, req) {
        return isProxyRequest(req) ? { resources: [] } : undefined;
      },
    };
  }
  return {
    generate(proxy, watched, req) {
      const result = this.generateDeltas?.(proxy, watched, req);
      return result && { resources: result.resources, logDetails: result.logDetails };
    },
    generateDeltas(_proxy, watched, req) {
      return addressDeltas(index, watched, req);
    },
  };
}

function addressDeltas(
  index: AddressSource,
  watched: WatchedResource,
  req: PushRequest,
): DeltaGenerateResult | undefined {
  const isRequest = isProxyRequest(req);
  const updated = req.addressesUpdated;
  // Only a proxy's own request and pushes naming addresses concern WDS (not even full pushes).
  if (!isRequest && (!updated || updated.size === 0)) return undefined;
  if (watched.wildcard && isRequest) {
    // A complete answer: whatever the proxy holds and is not here has gone.
    return { resources: resourcesOf(index.all(), watched.typeUrl), removed: [] };
  }
  let names: Iterable<string> = updated ?? [];
  if (!watched.wildcard) {
    names = isRequest ? watched.resourceNames : [...(updated ?? [])].filter((n) => watched.resourceNames.has(n));
  }
  const { found, missing } = index.addressInformation(names);
  if (!isRequest && found.length === 0 && missing.length === 0) return undefined;
  return {
    resources: resourcesOf(found, watched.typeUrl),
    removed: missing,
    logDetails: { incremental: true },
  };
}

/** Addresses as Address resources, or (the Workload type) the workloads among them as Workloads. */
function resourcesOf(infos: readonly AddressInfo[], typeUrl: string): XdsResource[] {
  if (typeUrl !== TypeUrl.Workload) return infos.map((info) => ({ name: info.name, resource: info.resource }));
  return infos
    .filter((info): info is WorkloadInfo => (info as WorkloadInfo).kind === "workload")
    .map((info) => ({ name: info.name, resource: anyPack(workloadapi.WorkloadSchema, info.workload) }));
}

/** Authorization (Istio's WorkloadRBACGenerator over an empty index). */
export const workloadAuthorizationGenerator: Generator = {
  generate(_proxy, _watched, req) {
    const policyChanged = [...req.configsUpdated.values()].some((k) => k.kind === AUTHORIZATION_POLICY);
    return req.forced || isProxyRequest(req) || policyChanged ? { resources: [] } : undefined;
  },
};
