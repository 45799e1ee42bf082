// The ambient types: WDS `Address` and `Workload` (Istio's WorkloadGenerator) and `Authorization`
// (its WorkloadRBACGenerator), pilot/pkg/xds/workload.go. With ambient on (PILOT_ENABLE_AMBIENT) both
// come from the ambient index. Addresses: a wildcard subscriber (ztunnel's default) is sent every
// workload and service when it asks, then only the addresses each push names; an on-demand subscriber
// is sent what the names it asks for stand for (a workload by uid or `network/ip`, a service by
// `namespace/hostname` or VIP, with the workloads behind it). Authorizations: every policy on a
// request or a forced push, then the policies each push names by AuthorizationPolicy key (the index
// names its PeerAuthentication-derived ones so too), and those of them gone. With ambient off, as
// istiod's NoopAmbientIndexes, a request is answered with no resources and pushes send nothing, except
// that Authorization answers again when an AuthorizationPolicy changed.
import { anyPack } from "@bufbuild/protobuf/wkt";
import type { AddressInfo, AmbientIndex, PolicyInfo, WorkloadInfo } from "../../ambient/index.ts";
import { workloadapi } from "../../api/index.ts";
import { type ProxyNode, PUSH_KINDS, type PushRequest } from "../../model/index.ts";
import type { DeltaGenerateResult, Generator, WatchedResource, XdsResource } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { isProxyRequest } from "./needs-push.ts";

/** What the WDS generator reads of the ambient index. */
export type AddressSource = Pick<AmbientIndex, "all" | "addressInformation" | "additionalSubscriptions">;

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
    generateDeltas(proxy, watched, req) {
      return addressDeltas(index, proxy, watched, req);
    },
  };
}

function addressDeltas(
  index: AddressSource,
  proxy: ProxyNode,
  watched: WatchedResource,
  req: PushRequest,
): DeltaGenerateResult | undefined {
  const isRequest = isProxyRequest(req);
  const updated = req.addressesUpdated;
  // Only a proxy's own request and pushes naming addresses concern WDS (not even full pushes).
  if (!isRequest && (!updated || updated.size === 0)) return undefined;
  if (watched.wildcard) {
    // A request gets a complete answer (what the proxy holds and is not here has gone); a push, the
    // addresses it names and the removal of those gone.
    if (isRequest) return { resources: resourcesOf(index.all(), watched.typeUrl), removed: [] };
    const { found, missing } = index.addressInformation(updated ?? []);
    return { resources: resourcesOf(found, watched.typeUrl), removed: missing, logDetails: { incremental: true } };
  }
  return onDemandDeltas(index, proxy, watched, isRequest, updated);
}

/**
 * An on-demand subscriber (Istio's generateDeltasOndemand): a request gets what the names it holds
 * stand for, a push what it names of them; either with the workloads it is kept subscribed to besides
 * (additionalSubscriptions), each address with its `network/ip` aliases, so that a name asked for by
 * IP is answered by the workload or service it names.
 */
function onDemandDeltas(
  index: AddressSource,
  proxy: ProxyNode,
  watched: WatchedResource,
  isRequest: boolean,
  updated: ReadonlySet<string> | undefined,
): DeltaGenerateResult | undefined {
  const subscribed = watched.resourceNames;
  const names = new Set(isRequest ? subscribed : [...(updated ?? [])].filter((n) => subscribed.has(n)));
  for (const name of index.additionalSubscriptions(proxy.metadata.NODE_NAME ?? "", names, subscribed)) names.add(name);
  if (names.size === 0)
    return isRequest ? { resources: [], removed: [], logDetails: { incremental: true } } : undefined;
  const { found, missing } = index.addressInformation(names);
  const aliases = new Set(found.flatMap((info) => info.aliases));
  return {
    resources: resourcesOf(found, watched.typeUrl, true),
    removed: missing.filter((name) => !aliases.has(name)),
    subscribe: found.map((info) => info.name).filter((name) => !subscribed.has(name)),
    logDetails: { incremental: true },
  };
}

/**
 * Addresses as Address resources, or (the Workload type) the workloads among them as Workloads; with
 * their `network/ip` aliases for an on-demand subscriber.
 */
function resourcesOf(infos: readonly AddressInfo[], typeUrl: string, withAliases = false): XdsResource[] {
  const named = (info: AddressInfo, resource: XdsResource["resource"]): XdsResource =>
    withAliases ? { name: info.name, resource, aliases: info.aliases } : { name: info.name, resource };
  if (typeUrl !== TypeUrl.Workload) return infos.map((info) => named(info, info.resource));
  return infos
    .filter((info): info is WorkloadInfo => (info as WorkloadInfo).kind === "workload")
    .map((info) => named(info, anyPack(workloadapi.WorkloadSchema, info.workload)));
}

/** What the Authorization generator reads of the ambient index. */
export type PolicySource = Pick<AmbientIndex, "policyInformation">;

/** Authorization: from `index` when ambient is on, else none (istiod's empty index). */
export function workloadAuthorizationGenerator(index: PolicySource | undefined): Generator {
  if (!index) {
    return {
      generate(_proxy, _watched, req) {
        const complete = req.forced || isProxyRequest(req);
        return complete || policyNames(req).length > 0 ? { resources: [] } : undefined;
      },
    };
  }
  return {
    generate(proxy, watched, req) {
      const result = this.generateDeltas?.(proxy, watched, req);
      return result && { resources: result.resources, logDetails: result.logDetails };
    },
    generateDeltas(_proxy, _watched, req) {
      // A complete answer: whatever the proxy holds and is not here has gone.
      if (req.forced || isProxyRequest(req))
        return { resources: policyResources(index.policyInformation()), removed: [] };
      const names = policyNames(req);
      if (names.length === 0) return undefined;
      const found = index.policyInformation(names);
      const present = new Set(found.map((p) => p.name));
      return {
        resources: policyResources(found),
        removed: names.filter((name) => !present.has(name)),
        logDetails: { incremental: true },
      };
    },
  };
}

/** The `namespace/name` of the AuthorizationPolicies a push names (the ambient index names every policy so). */
function policyNames(req: PushRequest): string[] {
  const names: string[] = [];
  for (const key of req.configsUpdated.values()) {
    if (key.kind === PUSH_KINDS.authorizationPolicy) names.push(`${key.namespace}/${key.name}`);
  }
  return names;
}

function policyResources(policies: readonly PolicyInfo[]): XdsResource[] {
  return policies.map((policy) => ({ name: policy.name, resource: policy.resource }));
}
