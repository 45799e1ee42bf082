// VHDS (SLUICE_ENABLE_VHDS, off by default; Sluice's own, Istio has no VHDS): a delta-xDS sidecar
// gets its port routes (`80`, `http_proxy`) with `vhds` over ADS and only the catch-all inline, and
// every other virtual host as its own `envoy.config.route.v3.VirtualHost` resource, so a change sends
// only the virtual hosts whose bytes changed instead of each proxy's whole RouteConfiguration.
//
// What Envoy does (source/common/router/vhds.cc, route_config_update_receiver_impl.cc, rds_impl.cc,
// config_subscription/grpc/watch_map.cc):
// - VHDS needs delta xDS: a `vhds` over ADS is rejected unless the bootstrap's ADS is DELTA_GRPC.
// - On the first RouteConfiguration with `vhds` (or a changed `vhds`) Envoy starts a VirtualHost
//   subscription to the route configuration's name, with namespace matching: a resource named
//   `<route configuration>/<x>` (the part before the last `/`) reaches it. Removing `<rc>` itself
//   also reaches it, which is how an empty answer still completes its initial fetch.
// - Received virtual hosts are kept by VirtualHost.name, and a removed resource name is looked up as a
//   VirtualHost.name: the two must be equal, so every VHDS virtual host is named
//   `<route configuration>/<its own name>`.
// - The inline virtual hosts and the VHDS ones are kept apart and both go into the route table, so
//   the catch-all (`*`: allow_any, block_all) stays inline; domains must stay unique across both.
// - A RouteConfiguration update with the same `vhds` keeps the VHDS virtual hosts; only a changed
//   `vhds` restarts the subscription.
// - Envoy's delta state tracks versions of the names it subscribed to only (`<rc>`), so a reconnect
//   reports no virtual host versions and gets them all again (delta_subscription_state.cc).
// - On-demand VHDS (the on_demand HTTP filter asking `<rc>/<Host>` for an unknown host) is not needed:
//   every virtual host is sent up front and an unknown host takes the catch-all, as without VHDS.
import { create, isMessage } from "@bufbuild/protobuf";
import { core, route } from "../../api/index.ts";
import { buildRouteConfiguration, type XdsCache } from "../../configgen/index.ts";
import type { MeshPush, ProxyNode, PushSnapshot } from "../../model/index.ts";
import { parseSidecarRouteName } from "../../networking/route/index.ts";
import { type Memos, weakTable } from "../../util/index.ts";
import type { Generator, WatchedResource, XdsResource } from "../generator.ts";
import { rdsNeedsPush } from "./needs-push.ts";

const VHDS_OVER_ADS = create(route.VhdsSchema, {
  configSource: { configSourceSpecifier: { case: "ads", value: {} }, resourceApiVersion: core.ApiVersion.V3 },
});

/**
 * Whether the route configuration `routeName` goes to this proxy in its VHDS form: the flag is on, the
 * proxy is an Envoy sidecar (no GENERATOR) on delta xDS, and the name is a port's or http_proxy (no
 * `/`, so it cannot be read as a namespace, unlike unix:// names; a sniffed `<fqdn>:<port>` has only
 * its one catch-all virtual host).
 */
export function servesVhds(push: MeshPush, proxy: ProxyNode, watched: WatchedResource, routeName: string): boolean {
  return (
    push.snapshot.vhds &&
    watched.delta === true &&
    proxy.type === "sidecar" &&
    proxy.generator === undefined &&
    !routeName.includes("/") &&
    parseSidecarRouteName(routeName)?.sniffed === false
  );
}

/** A route configuration split for VHDS: what RDS carries and the VirtualHost resources (never changed). */
interface VhdsForm {
  routeConfiguration: route.RouteConfiguration;
  virtualHosts: XdsResource[];
}

// Per route configuration object (shared by the proxies given it), so the split and its messages are
// made, and encoded, once.
const VHDS_FORMS = weakTable<route.RouteConfiguration, VhdsForm>("vhds/forms");

/** The VHDS form of a route configuration: catch-alls (and names Envoy cannot namespace) stay inline. */
export function vhdsForm(memos: Memos, config: route.RouteConfiguration): VhdsForm {
  const vhdsForms = memos.weak(VHDS_FORMS);
  let form = vhdsForms.get(config);
  if (!form) {
    const inline: route.VirtualHost[] = [];
    const virtualHosts: XdsResource[] = [];
    for (const vhost of config.virtualHosts) {
      if (vhost.domains.includes("*") || vhost.name.includes("/")) {
        inline.push(vhost);
        continue;
      }
      const name = `${config.name}/${vhost.name}`;
      const renamed: route.VirtualHost = { ...vhost, name };
      virtualHosts.push({ name, resource: renamed });
    }
    form = { routeConfiguration: { ...config, virtualHosts: inline, vhds: VHDS_OVER_ADS }, virtualHosts };
    vhdsForms.set(config, form);
  }
  return form;
}

/** `rds` (the RDS generator), with the route configurations `servesVhds` names in their VHDS form. */
export function rdsWithVhdsGenerator(rds: Generator<PushSnapshot>, cache: XdsCache): Generator<PushSnapshot> {
  return {
    generate(proxy, watched, req) {
      const result = rds.generate(proxy, watched, req);
      if (!result || !watched.delta || !req.push.snapshot.vhds) return result;
      const resources = result.resources.map((r) =>
        isMessage(r.resource, route.RouteConfigurationSchema) && servesVhds(req.push, proxy, watched, r.name)
          ? { name: r.name, resource: vhdsForm(cache, r.resource).routeConfiguration }
          : r,
      );
      return { ...result, resources };
    },
  };
}

/**
 * VHDS: the watched names are route configuration names (namespaces); each gets every VirtualHost of
 * its VHDS form. Names holding a `/` (virtual hosts a reconnecting proxy reports holding, or on-demand
 * lookups) are answered through their namespace only.
 */
export function vhdsGenerator(cache: XdsCache): Generator<PushSnapshot> {
  return {
    generate(proxy, watched, req) {
      if (!rdsNeedsPush(req)) return undefined;
      const lists: XdsResource[][] = [];
      for (const name of watched.resourceNames) {
        if (!servesVhds(req.push, proxy, watched, name)) continue;
        const config = buildRouteConfiguration(req.push, proxy, name, cache);
        if (config) lists.push(vhdsForm(cache, config).virtualHosts);
      }
      // One route configuration (the usual case): its list as is, shared by the proxies given it.
      return { resources: lists.length === 1 ? lists[0] : lists.flat() };
    },
  };
}
