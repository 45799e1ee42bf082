// The route configurations a proxy asks for by name (Istio's configgen BuildHTTPRoutes). Sidecars: a
// port (`9080`), a sniffed VIP listener's `<fqdn>:<port>` or `http_proxy`, built from the egress listener
// serving that port. Routers: `http.<port>` and `https.<port>.<name>.<gw>.<ns>`, built from the merged
// Gateway's servers behind the name. Configurations proxies share are cached.

import { hcm, type listener, type route, TypeUrl, unpackAny } from "../api/index.ts";
import type { MeshConfig } from "../config/index.ts";
import type {
  EgressListener,
  MergedGateway,
  MeshPush,
  NodeType,
  ProxyNode,
  PushSnapshot,
  PushStatus,
  PushStatusReporter,
  SidecarScope,
} from "../model/index.ts";
import { usesAutoAllocatedAddresses } from "../model/index.ts";
import { type PatchSet, patchGeneratedRouteConfiguration, patchSetFor } from "../networking/envoyfilter/index.ts";
import {
  buildGatewayRouteConfiguration,
  buildSidecarRouteConfiguration,
  type GatewayRouteInput,
  type GatewayRoutesMemo,
  parseSidecarRouteName,
  type RouteContext,
  type SidecarRouteInput,
} from "../networking/route/index.ts";
import { type Memos, weakTable } from "../util/index.ts";
import { KeyFormat } from "./cache/keys.ts";
import { resourceTable, type XdsCache } from "./cache/xds-cache.ts";
import { hashPolicyFor } from "./hash-policy.ts";
import { ipFamilies, listenAddresses } from "./proxy-view.ts";

/** What a proxy's route configurations read of it whatever the route name. */
interface ProxyRouteFields {
  type: NodeType;
  configNamespace: string;
  namespace: string | undefined;
  dnsDomain: string;
  generator: string | undefined;
  /** A router's labels (a sidecar's routes read only some, per route name: see SidecarProxyKey). */
  routerLabels: Readonly<Record<string, string>> | undefined;
  /** Auto-allocated addresses (of the proxy's IP families) are domains for proxies capturing DNS only. */
  autoAllocatedFamilies: string | undefined;
  persistentSessions: boolean;
}

const PROXY_ROUTE_FIELDS = new KeyFormat<ProxyRouteFields>({
  type: "value",
  configNamespace: "value",
  namespace: "value",
  dnsDomain: "value",
  generator: "value",
  routerLabels: "value",
  autoAllocatedFamilies: "value",
  persistentSessions: "value",
});

/** What a sidecar route configuration reads of the proxy: its route fields and the labels the route reads. */
interface SidecarProxyKey {
  /** PROXY_ROUTE_FIELDS' text. */
  fields: string;
  /** The values of the labels the route name's VirtualServices and the scope's DestinationRules select by. */
  labelValues: readonly (string | null)[];
}

const SIDECAR_PROXY_KEY = new KeyFormat<SidecarProxyKey>({ fields: "text", labelValues: "value" });

/**
 * The inputs a route configuration reads by identity: a sidecar's routes are a function of its scope,
 * which is one of its Sidecar and the push's services, VirtualServices, DestinationRules and mesh config;
 * a router's read the push's merged Gateways too (the snapshot).
 */
interface RouteInputs {
  snapshot: PushSnapshot | undefined;
  mesh: MeshConfig | undefined;
  services: PushSnapshot["services"] | undefined;
  virtualServices: PushSnapshot["virtualServices"] | undefined;
  destinationRules: PushSnapshot["destinationRules"] | undefined;
  sidecar: SidecarScope["sidecar"];
}

/** Everything a route configuration reads. */
interface RouteConfigurationKey extends RouteInputs {
  routeName: string;
  /** What it reads of the proxy: PROXY_ROUTE_FIELDS' text (a router's) or SIDECAR_PROXY_KEY's. */
  proxy: string;
}

// Route configurations shared by the proxies that read the same inputs: the route builders read the
// proxy's type, namespace, DNS domain, generator and some labels (VirtualService sourceLabels,
// DestinationRule workloadSelectors for hash policies), and the proxy's Sidecar scope.
const ROUTE_CONFIGURATIONS = resourceTable<route.RouteConfiguration | undefined, RouteConfigurationKey>({
  name: "rds/routeConfigurations",
  typeUrl: TypeUrl.Route,
  key: {
    routeName: "value",
    proxy: "text",
    snapshot: "object",
    mesh: "object",
    services: "object",
    virtualServices: "object",
    destinationRules: "object",
    sidecar: "object",
  },
  resources: (config) => (config ? [{ name: config.name, resource: config }] : []),
});

/** What every route configuration of one proxy reads in a push: looked up once, not once per route name. */
interface ProxyRouteInputs {
  scope: SidecarScope;
  /** A router's merged Gateway; a sidecar never reads one and skips its lookup (6% of its RDS). */
  merged: MergedGateway | undefined;
  /** The proxy fields the build reads for every route name (a router's labels included), as key text. */
  proxyFields: string;
  /** The cache inputs. */
  inputs: RouteInputs;
  hashPolicy: RouteContext["hashPolicy"];
  /** A router's GatewayRouteInput lookups. */
  virtualServicesForGateway: GatewayRouteInput["virtualServicesForGateway"];
  lookupService: GatewayRouteInput["lookupService"];
  /** A router's routes per VirtualService, shared by its route names. */
  routesMemo: GatewayRoutesMemo;
  patches: PatchSet;
}

const PROXY_ROUTE_INPUTS = weakTable<PushSnapshot, WeakMap<ProxyNode, ProxyRouteInputs>>("rds/proxyRouteInputs");

function proxyRouteInputs(cache: XdsCache, snap: PushSnapshot, proxy: ProxyNode): ProxyRouteInputs {
  const proxyRouteInputsByPush = cache.weak(PROXY_ROUTE_INPUTS);
  let byProxy = proxyRouteInputsByPush.get(snap);
  if (!byProxy) {
    byProxy = new WeakMap();
    proxyRouteInputsByPush.set(snap, byProxy);
  }
  let found = byProxy.get(proxy);
  if (!found) {
    const router = proxy.type !== "sidecar";
    const scope = snap.sidecarScope(proxy);
    found = {
      scope,
      merged: router ? snap.mergedGateway(proxy) : undefined,
      proxyFields: PROXY_ROUTE_FIELDS.text(
        {
          type: proxy.type,
          configNamespace: proxy.configNamespace,
          namespace: proxy.metadata.NAMESPACE,
          dnsDomain: proxy.dnsDomain,
          generator: proxy.generator,
          routerLabels: router ? proxy.labels : undefined,
          autoAllocatedFamilies: usesAutoAllocatedAddresses(proxy, snap.ipAutoallocate) ? ipFamilies(proxy) : undefined,
          persistentSessions: snap.persistentSessions,
        },
        cache,
      ),
      inputs: router
        ? {
            snapshot: snap,
            mesh: undefined,
            services: undefined,
            virtualServices: undefined,
            destinationRules: undefined,
            sidecar: undefined,
          }
        : {
            snapshot: undefined,
            mesh: snap.mesh,
            services: snap.services,
            virtualServices: snap.virtualServices,
            destinationRules: snap.destinationRules,
            sidecar: scope.sidecar,
          },
      hashPolicy: hashPolicyFor(scope, proxy),
      virtualServicesForGateway: (gateway) => snap.virtualServicesForGateway(proxy.configNamespace, gateway),
      lookupService: (hostname) => scope.service(hostname),
      routesMemo: new WeakMap(),
      patches: patchSetFor(cache, snap.envoyFiltersFor(proxy), proxy),
    };
    byProxy.set(proxy, found);
  }
  return found;
}

/** One route configuration for the proxy; undefined for a name a proxy of its type never asks for. */
export function buildRouteConfiguration(
  push: MeshPush,
  proxy: ProxyNode,
  routeName: string,
  cache: XdsCache,
): route.RouteConfiguration | undefined {
  const snap = push.snapshot;
  const proxyInputs = proxyRouteInputs(cache, snap, proxy);
  const router = proxy.type !== "sidecar";
  // What the build reads of the proxy: a sidecar's routes read only some labels, per route name.
  const proxyKey = router
    ? proxyInputs.proxyFields
    : SIDECAR_PROXY_KEY.text(
        {
          fields: proxyInputs.proxyFields,
          labelValues: labelsRead(cache, proxyInputs.scope, routeName).map((name) => proxy.labels[name] ?? null),
        },
        cache,
      );
  const key: RouteConfigurationKey = { routeName, proxy: proxyKey, ...proxyInputs.inputs };
  const config = cache
    .resources(ROUTE_CONFIGURATIONS)
    .get(push, key, (status) => routeConfiguration(cache, snap, proxy, routeName, status, proxyKey, proxyInputs));
  if (!config || proxyInputs.patches.empty) return config;
  // EnvoyFilter patches apply last, per proxy, to a copy of the shared configuration.
  return patchGeneratedRouteConfiguration(proxyInputs.patches, config, router, proxyInputs.merged?.portMap);
}

// The label names a sidecar's routes read, per egress listener (each belongs to one scope).
const LABEL_NAMES = weakTable<EgressListener, readonly string[]>("rds/labelNames");

/**
 * The proxy label names the sidecar route `routeName` reads: its listener's VirtualServices' sourceLabels
 * and the workloadSelectors of the scope's DestinationRules (which rule's consistent hash applies).
 */
function labelsRead(memos: Memos, scope: SidecarScope, routeName: string): readonly string[] {
  const egress = sidecarEgressListener(scope, routeName);
  if (!egress) return [];
  const labelNames = memos.weak(LABEL_NAMES);
  let names = labelNames.get(egress);
  if (!names) {
    const read = new Set<string>();
    for (const vs of egress.virtualServices) {
      for (const http of vs.spec?.http ?? []) {
        for (const match of http.match ?? []) for (const name of Object.keys(match.sourceLabels ?? {})) read.add(name);
      }
    }
    for (const service of scope.services) {
      for (const rule of scope.destinationRules(service.hostname)) {
        for (const name of Object.keys(rule.rule.spec?.workloadSelector?.matchLabels ?? {})) read.add(name);
      }
    }
    names = [...read].sort();
    labelNames.set(egress, names);
  }
  return names;
}

/** The egress listener a sidecar route name is built from. */
function sidecarEgressListener(scope: SidecarScope, routeName: string): EgressListener | undefined {
  const parsed = parseSidecarRouteName(routeName);
  if (!parsed) return undefined;
  return scope.egressListenerFor(parsed.listenerPort, routeName.startsWith("unix://") ? routeName : "");
}

/** A port's sorted virtual hosts, and what building them reported. */
interface PortVirtualHosts {
  virtualHosts: readonly route.VirtualHost[];
  reports: Parameters<PushStatusReporter>[];
}

// The virtual hosts of an egress listener's port per push, by the proxy key and port: the route names
// of one port (the port's, each sniffed `<fqdn>:<port>`) share them instead of each building all.
const PORT_VIRTUAL_HOSTS = weakTable<PushSnapshot, WeakMap<EgressListener, Map<string, PortVirtualHosts>>>(
  "rds/portVirtualHosts",
);

/**
 * `portVirtualHosts` and `report` of a SidecarRouteInput for one proxy key and egress listener: what
 * building a port's virtual hosts reports is kept with them and reported again by each later use.
 */
function sharedPortVirtualHosts(
  memos: Memos,
  snap: PushSnapshot,
  egress: EgressListener,
  proxyKey: string,
  report: PushStatusReporter,
): Pick<SidecarRouteInput, "portVirtualHosts" | "report"> {
  const portVirtualHostsByPush = memos.weak(PORT_VIRTUAL_HOSTS);
  let byEgress = portVirtualHostsByPush.get(snap);
  if (!byEgress) {
    byEgress = new WeakMap();
    portVirtualHostsByPush.set(snap, byEgress);
  }
  let byKey = byEgress.get(egress);
  if (!byKey) {
    byKey = new Map();
    byEgress.set(egress, byKey);
  }
  const known = byKey;
  let building: PortVirtualHosts["reports"] | undefined;
  return {
    report: (...args) => {
      report(...args);
      building?.push(args);
    },
    portVirtualHosts: (listenerPort, build) => {
      const key = `${listenerPort}|${proxyKey}`;
      const hit = known.get(key);
      if (hit) {
        for (const args of hit.reports) report(...args);
        return hit.virtualHosts;
      }
      const reports: PortVirtualHosts["reports"] = [];
      building = reports;
      try {
        const virtualHosts = build();
        known.set(key, { virtualHosts, reports });
        return virtualHosts;
      } finally {
        building = undefined;
      }
    },
  };
}

function routeConfiguration(
  cache: XdsCache,
  snap: PushSnapshot,
  proxy: ProxyNode,
  routeName: string,
  status: PushStatus,
  proxyKey: string,
  { scope, merged, hashPolicy, virtualServicesForGateway, lookupService, routesMemo }: ProxyRouteInputs,
): route.RouteConfiguration | undefined {
  if (proxy.type !== "sidecar") {
    const servers = merged?.serversByRouteName.get(routeName) ?? [];
    return buildGatewayRouteConfiguration({
      routeName,
      proxy,
      mesh: snap.mesh,
      servers,
      virtualServicesForGateway,
      lookupService,
      hashPolicy,
      persistentSessions: snap.persistentSessions,
      http3: merged?.http3Routes.has(routeName),
      routesMemo,
      memos: cache,
    });
  }
  if (!parseSidecarRouteName(routeName)) return undefined;
  const egress = sidecarEgressListener(scope, routeName);
  const report = status.reporter(proxy.id);
  return buildSidecarRouteConfiguration({
    routeName,
    proxy,
    mesh: snap.mesh,
    services: (egress?.services ?? []).map(listenAddresses(snap, proxy)),
    virtualServices: egress?.virtualServices ?? [],
    outboundTrafficPolicy: scope.outboundTrafficPolicy,
    hashPolicy,
    persistentSessions: snap.persistentSessions,
    ...(egress ? sharedPortVirtualHosts(cache, snap, egress, proxyKey, report) : { report }),
    memos: cache,
  });
}

/** The RDS names the listeners' HTTP connection managers refer to, in listener order. */
export function routeNames(listeners: readonly listener.Listener[]): string[] {
  const names = new Set<string>();
  for (const l of listeners) {
    for (const chain of [...l.filterChains, ...(l.defaultFilterChain ? [l.defaultFilterChain] : [])]) {
      for (const filter of chain.filters) {
        if (filter.configType.case !== "typedConfig") continue;
        const manager = unpackAny(filter.configType.value, hcm.HttpConnectionManagerSchema);
        if (manager?.routeSpecifier.case === "rds") names.add(manager.routeSpecifier.value.routeConfigName);
      }
    }
  }
  return [...names];
}
