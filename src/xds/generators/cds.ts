// CDS: a proxy's clusters (Istio's pilot/pkg/xds/cds.go): whether a push concerns them, and the
// response built from configgen's buildClusters.
import type { cluster } from "../../api/index.ts";
import { buildClusters, type XdsCache, type XdsResource } from "../../configgen/index.ts";
import type { PushSnapshot } from "../../model/index.ts";
import type { EndpointLookup } from "../../registry/index.ts";
import { type Memos, weakTable } from "../../util/index.ts";
import type { Generator } from "../generator.ts";
import { cdsNeedsPush, waypointNeedsPush } from "./needs-push.ts";

// The response resources of each cluster list (a shared list gives every proxy the same resources
// array), made of one resource per cluster object whatever lists hold it.
const LIST_RESOURCES = weakTable<readonly cluster.Cluster[], XdsResource[]>("cds/listResources");
const CLUSTER_RESOURCES = weakTable<cluster.Cluster, XdsResource>("cds/clusterResources");

function clusterResources(memos: Memos, clusters: readonly cluster.Cluster[]): XdsResource[] {
  const listResources = memos.weak(LIST_RESOURCES);
  let resources = listResources.get(clusters);
  if (!resources) {
    const clusterResourceOf = memos.weak(CLUSTER_RESOURCES);
    resources = clusters.map((c) => {
      let resource = clusterResourceOf.get(c);
      if (!resource) {
        resource = { name: c.name, resource: c };
        clusterResourceOf.set(c, resource);
      }
      return resource;
    });
    listResources.set(clusters, resources);
  }
  return resources;
}

/** CDS is wildcard: every cluster, on pushes that may change clusters. */
export function cdsGenerator(endpoints: EndpointLookup, cache: XdsCache): Generator<PushSnapshot> {
  return {
    generate(proxy, _watched, req) {
      const autoPassthrough = () => (req.push.snapshot.mergedGateway(proxy)?.autoPassthroughSniHosts.size ?? 0) > 0;
      if (!cdsNeedsPush(req, proxy, autoPassthrough) && !waypointNeedsPush(req, proxy)) return undefined;
      return { resources: clusterResources(cache, buildClusters(req.push, proxy, endpoints, cache)) };
    },
  };
}
