// What every route builder reads: the proxy being served, the mesh, the listener port the routes are
// for, the gateway names the routes must be bound to ("mesh" for sidecars), and a service lookup.
import type { route } from "../../api/index.ts";
import type { Destination, MeshConfig, VirtualService } from "../../config/index.ts";
import type { ProxyNode } from "../../model/index.ts";
import type { Service } from "../../registry/index.ts";
import type { Memos } from "../../util/index.ts";

/** The gateway name VirtualServices use for sidecars (Istio's constants.IstioMeshGateway). */
export { MESH_GATEWAY } from "../../model/index.ts";
export type { MeshConfig, ProxyNode, Service, VirtualService };

export interface RouteContext {
  proxy: ProxyNode;
  mesh: MeshConfig;
  /** Where the builders keep what they memoise (the route input's, else NO_MEMOS). */
  memos: Memos;
  /** The port the route configuration serves (the listener port; the gateway server port). */
  listenerPort: number;
  /** Gateways whose routes apply: {"mesh"} for a sidecar, {"<ns>/<gateway>"} for a gateway server. */
  gatewayNames: ReadonlySet<string>;
  /** The routes are served over TLS (a gateway HTTPS server): redirects default to https. */
  isTls: boolean;
  /** The service of a hostname, as visible to the proxy (undefined when the host is not in the registry). */
  lookupService(hostname: string): Service | undefined;
  /**
   * The hash policy of a DestinationRule consistentHash that applies to a destination (the caller owns
   * DestinationRules); a destination with one also drops the previous-hosts retry predicate.
   */
  hashPolicy?(destination: Destination): route.RouteAction_HashPolicy | undefined;
  /**
   * The cluster of a destination, when the proxy names clusters its own way (Istio's
   * LookupDestinationCluster: a waypoint's `inbound-vip|…` clusters); default `outbound|…`.
   */
  destinationCluster?(destination: Destination, service: Service | undefined, listenerPort: number): string;
  /** PILOT_ENABLE_PERSISTENT_SESSION_FILTER: labelled services get stateful session config per route and virtual host. */
  persistentSessions?: boolean;
  /**
   * The route configuration of a gateway server also served over QUIC: every route tells clients that
   * HTTP/3 is available on the listener port (`alt-svc`).
   */
  advertiseHttp3?: boolean;
}
