// TLSRoutes → VirtualServices with SNI-matched tls routes, one per bound parent and hostname.
import type { gatewayapi } from "../config/index.ts";
import { hostsMatch } from "../util/index.ts";
import { intersectHosts } from "./hostnames.ts";
import type { ConvertedRoute } from "./httproute.ts";
import { isMesh } from "./parents.ts";
import { attachments, collectRules, computeRoute, meshHosts, type RouteContext } from "./routes.ts";
import { type L4Route, l4Destinations, l4VirtualServices } from "./tcproute.ts";

// For mesh parents without route hostnames, the parent's hosts are the SNI names.
function meshSniMatch(routes: readonly L4Route[], port: number | undefined, parentHosts: readonly string[]): L4Route[] {
  return routes.map((r) => {
    let match = r.match?.map((m) => ({ ...m }));
    if (match?.length === 1 && match[0].sniHosts?.length === 1 && match[0].sniHosts[0] === "*") {
      match[0].sniHosts = [...parentHosts];
    }
    if (port !== undefined) match = match?.map((m) => ({ ...m, port }));
    return { ...r, match };
  });
}

// With several SNI names, keep those of the host this VirtualService is for.
function routesForHost(routes: readonly L4Route[], host: string): L4Route[] {
  return routes.map((r) => {
    const sni = r.match?.length === 1 ? r.match[0].sniHosts : undefined;
    if (!sni || sni.length <= 1) return r;
    return { ...r, match: [{ ...r.match?.[0], sniHosts: sni.filter((h) => hostsMatch(host, h)) }] };
  });
}

// A listener hostname narrows every route's SNI names to the overlap; routes left with none are dropped.
function constrainToListener(routes: readonly L4Route[], listenerHost: string): L4Route[] {
  return routes
    .map((r) => ({
      ...r,
      match: r.match?.map((m) => ({ ...m, sniHosts: intersectHosts(m.sniHosts ?? [], [listenerHost]) })),
    }))
    .filter((r) => !r.match?.length || r.match.some((m) => (m.sniHosts ?? []).length > 0));
}

export function convertTLSRoute(route: gatewayapi.TLSRoute, ctx: RouteContext): ConvertedRoute {
  const namespace = route.metadata.namespace ?? "";
  const hostnames = route.spec?.hostnames ?? [];
  const sniHosts = hostnames.length > 0 ? [...hostnames] : ["*"];
  const computed = computeRoute<L4Route>(route, ctx, (mesh) =>
    collectRules(
      (route.spec?.rules ?? []).map((rule) => {
        const built = l4Destinations(ctx, rule.backendRefs ?? [], namespace, "TLSRoute", !mesh);
        if (!built.route) return { error: built.error };
        // A rule without weighted backends rejects connections and needs no SNI match.
        const rejects = built.route[0]?.destination?.subset === "zero-weight";
        return {
          route: rejects ? { route: built.route } : { match: [{ sniHosts }], route: built.route },
          error: built.error,
        };
      }),
    ),
  );
  const entries: { host: string; gateway: string; routes: L4Route[] }[] = [];
  for (const parent of computed.bound) {
    let routes = computed.gateway.routes ?? [];
    let hosts = hostnames.length > 0 ? [...hostnames] : ["*"];
    if (isMesh(parent)) {
      hosts = meshHosts(route, parent, ctx.cluster, ctx.settings.domainSuffix);
      routes = meshSniMatch(computed.mesh.routes ?? [], parent.originalReference.port, hosts);
    } else if (parent.hostname !== "") {
      hosts = intersectHosts(hosts, [parent.hostname]);
      routes = constrainToListener(routes, parent.hostname);
    }
    for (const host of hosts) {
      entries.push({
        host,
        gateway: parent.internalName,
        routes: isMesh(parent) ? routesForHost(routes, host) : routes,
      });
    }
  }
  return {
    keyedVirtualServices: [],
    virtualServices: l4VirtualServices(route, "tls", entries),
    status: computed.status,
    attachments: attachments(computed.bound),
  };
}
