// The `grpc` generator for proxyless gRPC (Istio's pilot/pkg/networking/grpcgen, selected by node
// metadata GENERATOR=grpc): LDS, RDS and CDS answer only the names the client asks for, from its
// SidecarScope; EDS is the sidecars' generator (the same `outbound|port|subset|host` assignments).
import type { listener } from "../../api/index.ts";
import type { ProxyNode, PushContext } from "../../model/index.ts";
import { pushSnapshot } from "../../model/index.ts";
import { parseClusterName } from "../../networking/cluster/index.ts";
import {
  buildClientListeners,
  buildGrpcClusters,
  buildGrpcRouteConfiguration,
  buildServerListener,
  groupClusterNames,
  parseListenerNames,
  parseServerListenerName,
} from "../../networking/grpc/index.ts";
import type { GeneratorRegistry, WatchedResource } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { appliedRule } from "./cds.ts";
import { cdsNeedsPush, ldsNeedsPush, rdsNeedsPush } from "./cds-needs-push.ts";
import { hashPolicyFor } from "./rds-hash.ts";

/** The generator key Istio registers them under: `grpc/<typeURL>`. */
export const GRPC_GENERATOR = "grpc";

/** Client listeners of the services the proxy sees, then the server listeners of its own ports. */
export function buildGrpcListeners(push: PushContext, proxy: ProxyNode, watched: WatchedResource): listener.Listener[] {
  const snap = pushSnapshot(push);
  const request = parseListenerNames(watched.wildcard ? [] : watched.resourceNames, proxy);
  const out: listener.Listener[] = [];
  for (const service of snap.sidecarScope(proxy).services) {
    // No names at all: every service, each under its FQDN.
    const requested = watched.wildcard
      ? { requestedHosts: new Set([service.hostname]) }
      : request.outbound.get(service.hostname);
    if (requested) out.push(...buildClientListeners(service, requested));
  }
  if (request.inbound.length === 0) return out;
  // A server listener only for a port one of the proxy's services targets (Istio's ServiceTargets by endpoint port).
  const targetPorts = new Set(
    snap.serviceTargets(proxy).map(({ port }) => (typeof port.targetPort === "number" ? port.targetPort : port.port)),
  );
  for (const name of request.inbound) {
    const parsed = parseServerListenerName(name);
    if (!parsed || !targetPorts.has(parsed.port)) continue;
    // mTLS (PeerAuthentication) and RBAC (AuthorizationPolicy) fill the chain options with the security features.
    const server = buildServerListener(name);
    if (server) out.push(server);
  }
  return out;
}

export function registerGrpcGenerators(registry: GeneratorRegistry): void {
  registry.register(`${GRPC_GENERATOR}/${TypeUrl.Listener}`, {
    generate(proxy, watched, req) {
      if (!ldsNeedsPush(req, proxy)) return undefined;
      return { resources: buildGrpcListeners(req.push, proxy, watched).map((l) => ({ name: l.name, resource: l })) };
    },
  });
  registry.register(`${GRPC_GENERATOR}/${TypeUrl.Route}`, {
    generate(proxy, watched, req) {
      if (!rdsNeedsPush(req)) return undefined;
      const snap = pushSnapshot(req.push);
      const scope = snap.sidecarScope(proxy);
      const resources = [];
      for (const routeName of watched.resourceNames) {
        const port = parseClusterName(routeName)?.port ?? 0;
        const egress = scope.egressListenerFor(port, "");
        const config = buildGrpcRouteConfiguration({
          routeName,
          proxy,
          mesh: snap.mesh,
          services: egress?.services ?? [],
          virtualServices: egress?.virtualServices ?? [],
          hashPolicy: hashPolicyFor(scope, proxy),
        });
        if (config) resources.push({ name: routeName, resource: config });
      }
      return { resources };
    },
  });
  registry.register(`${GRPC_GENERATOR}/${TypeUrl.Cluster}`, {
    generate(proxy, watched, req) {
      if (!cdsNeedsPush(req, proxy, () => false)) return undefined;
      const scope = pushSnapshot(req.push).sidecarScope(proxy);
      const clusters = groupClusterNames(watched.resourceNames).flatMap((group) => {
        const rule = scope.destinationRule("outbound", proxy.labels, group.hostname);
        return buildGrpcClusters({
          group,
          service: scope.service(group.hostname),
          destinationRule: rule && appliedRule(rule).spec,
        });
      });
      return { resources: clusters.map((c) => ({ name: c.name, resource: c })) };
    },
  });
}
