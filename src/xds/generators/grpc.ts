// The `grpc` generator for proxyless gRPC (Istio's pilot/pkg/networking/grpcgen, selected by node
// metadata GENERATOR=grpc): LDS, RDS and CDS answer only the names the client asks for, from its
// SidecarScope; EDS is the sidecars' generator (the same `outbound|port|subset|host` assignments).
import { buildGrpcListeners, grpcClusters, grpcRouteConfiguration, type XdsCache } from "../../configgen/index.ts";
import type { PushSnapshot } from "../../model/index.ts";
import { groupClusterNames } from "../../networking/grpc/index.ts";
import type { EndpointLookup } from "../../registry/index.ts";
import { buildNamed, type GeneratorRegistry } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { cdsNeedsPush, ldsNeedsPush, rdsNeedsPush } from "./needs-push.ts";

/** The generator key Istio registers them under: `grpc/<typeURL>`. */
export const GRPC_GENERATOR = "grpc";
/** The proxyless generators; clusters read the endpoints for the identities ISTIO_MUTUAL checks. */
export function registerGrpcGenerators(
  registry: GeneratorRegistry<PushSnapshot>,
  endpoints: EndpointLookup,
  cache: XdsCache,
): void {
  registry.register(`${GRPC_GENERATOR}/${TypeUrl.Listener}`, {
    generate(proxy, watched, req) {
      if (!ldsNeedsPush(req, proxy)) return undefined;
      const listeners = buildGrpcListeners(req.push, proxy, watched, cache);
      return { resources: listeners.map((l) => ({ name: l.name, resource: l })) };
    },
  });
  registry.register(`${GRPC_GENERATOR}/${TypeUrl.Route}`, {
    generate(proxy, watched, req) {
      if (!rdsNeedsPush(req)) return undefined;
      return buildNamed(watched.resourceNames, (routeName) =>
        grpcRouteConfiguration(cache, req.push, proxy, routeName),
      );
    },
  });
  registry.register(`${GRPC_GENERATOR}/${TypeUrl.Cluster}`, {
    generate(proxy, watched, req) {
      if (!cdsNeedsPush(req, proxy, () => false)) return undefined;
      const clusters = groupClusterNames(cache, watched.resourceNames).flatMap((group) =>
        grpcClusters(cache, req.push, endpoints, proxy, group),
      );
      return { resources: clusters.map((c) => ({ name: c.name, resource: c })) };
    },
  });
}
