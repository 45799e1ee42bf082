// Proxyless gRPC routes (Istio's grpcgen rds.go): the route configuration `outbound|<port>||<fqdn>`
// is the sidecar's virtual hosts for that port (built with port-carrying domains, since gRPC matches
// the authority with its port), kept to those answering the service's host. VirtualService features
// reach gRPC through the common translator: matches, weighted clusters, fault per-route config,
// retries, timeouts (as max_stream_duration) and hash policies.
import { create } from "@bufbuild/protobuf";
import { route } from "../../api/index.ts";
import { hostsMatch } from "../../model/index.ts";
import { parseClusterName } from "../cluster/index.ts";
import { buildSidecarVirtualHosts, type SidecarRouteInput } from "../route/index.ts";

export type GrpcRouteInput = Omit<SidecarRouteInput, "routeName" | "outboundTrafficPolicy"> & { routeName: string };

/** Undefined for a name that is not `outbound|<port>||<host>`. */
export function buildGrpcRouteConfiguration(input: GrpcRouteInput): route.RouteConfiguration | undefined {
  const parsed = parseClusterName(input.routeName);
  if (parsed?.direction !== "outbound" || parsed.port === 0 || parsed.hostname === "") return undefined;
  const hostPort = `${parsed.hostname}:${parsed.port}`;
  const answersHost = (domain: string) =>
    domain === hostPort || (domain.includes("*") ? hostsMatch(domain, parsed.hostname) : domain === parsed.hostname);
  const virtualHosts = buildSidecarVirtualHosts(input, parsed.port).filter((vh) => vh.domains.some(answersHost));
  return create(route.RouteConfigurationSchema, { name: input.routeName, virtualHosts });
}
