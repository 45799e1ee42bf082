// What config generation reads of a proxy and its scope, shared by clusters, routes and endpoints:
// the builders' view of a DestinationRule, the proxy's endpoint view and IP families, a scope's traits,
// the addresses a proxy capturing DNS reaches services at, and the per-push tables proxies of one class share.
import type { DestinationRuleTrafficPolicy } from "../config/types/index.ts";
import type { ConsolidatedDestinationRule, MeshPush, ProxyNode, PushSnapshot, SidecarScope } from "../model/index.ts";
import { addressesForProxy, usesAutoAllocatedAddresses } from "../model/index.ts";
import type { AppliedDestinationRule } from "../networking/cluster/index.ts";
import type { EndpointLookup, Service } from "../registry/index.ts";
import { UNSPECIFIED_IP } from "../registry/index.ts";
import { type Memos, type WeakTable, weakTable } from "../util/index.ts";
import { KeyFormat } from "./cache/keys.ts";

/** The builders' view of a consolidated DestinationRule. */
export function appliedRule(rule: ConsolidatedDestinationRule): AppliedDestinationRule {
  return {
    name: rule.rule.metadata.name ?? "",
    namespace: rule.rule.metadata.namespace ?? "",
    spec: rule.rule.spec ?? { host: "" },
  };
}

/**
 * What of the proxy endpoint selection reads besides failoverPriority labels (cluster, network and its
 * view, locality): load assignments, and DNS clusters with their inline endpoints, depend on it.
 */
interface EndpointViewKey {
  clusterId: string;
  network: string | undefined;
  requestedNetworkView: readonly string[] | undefined;
  region: string;
  zone: string;
  subZone: string;
}

const ENDPOINT_VIEW = new KeyFormat<EndpointViewKey>({
  clusterId: "value",
  network: "value",
  requestedNetworkView: "value",
  region: "value",
  zone: "value",
  subZone: "value",
});

/** The proxy's endpoint view as key text (a `text` part of the keys reading it). */
export type EndpointView = string;

/** What an endpoint view was written from, and the text written. */
interface WrittenView {
  clusterId: string;
  metadata: ProxyNode["metadata"];
  locality: ProxyNode["locality"];
  text: EndpointView;
}

// Every load assignment's class key reads the view, once per proxy and push: written again each time,
// it took ~16 µs a proxy of an endpoint change (200 of 2,000 proxies, 3 ms). A proxy's fields are
// replaced, never changed in place, so the objects it was written from tell whether it still holds.
const WRITTEN_VIEWS = weakTable<ProxyNode, WrittenView>("proxyView/endpointViews");

/** The proxy's endpoint view, written once per proxy (again if its cluster, metadata or locality is replaced). */
export function endpointView(memos: Memos, proxy: ProxyNode): EndpointView {
  const { clusterId, metadata, locality } = proxy;
  const views = memos.weak(WRITTEN_VIEWS);
  const written = views.get(proxy);
  if (written && written.clusterId === clusterId && written.metadata === metadata && written.locality === locality) {
    return written.text;
  }
  const { region, zone, subZone } = locality;
  const text = ENDPOINT_VIEW.text({
    clusterId,
    network: metadata.NETWORK,
    requestedNetworkView: metadata.REQUESTED_NETWORK_VIEW,
    region,
    zone,
    subZone,
  });
  views.set(proxy, { clusterId, metadata, locality, text });
  return text;
}

/** The proxy's values of the label `names` (null where unset), a key part. */
export function labelValues(labels: Readonly<Record<string, string>>, names: readonly string[]): (string | null)[] {
  return names.map((n) => (Object.hasOwn(labels, n) ? labels[n] : null));
}

/** What of a scope's services and DestinationRules decides which proxy fields its clusters and assignments read. */
export interface ScopeTraits {
  /** The label names DestinationRule workloadSelectors match: which rule applies reads these of the proxy. */
  selectorLabels: readonly string[];
  /** The label names failoverPriority entries name (load assignments compare them); undefined without any. */
  failoverPriorityLabels: readonly string[] | undefined;
  /** A DNS service: its clusters carry endpoints inline, chosen by the proxy's endpoint view. */
  inlineEndpoints: boolean;
}

// Scopes are immutable: their traits are computed once.
const SCOPE_TRAITS = weakTable<SidecarScope, ScopeTraits>("cds/scopeTraits");

export function scopeTraits(memos: Memos, scope: SidecarScope): ScopeTraits {
  const table = memos.weak(SCOPE_TRAITS);
  let traits = table.get(scope);
  if (!traits) {
    const selectorLabels = new Set<string>();
    const failoverPriority: string[] = [];
    for (const service of scope.services) {
      for (const { rule } of scope.destinationRules(service.hostname)) {
        for (const name of Object.keys(rule.spec?.workloadSelector?.matchLabels ?? {})) selectorLabels.add(name);
        const policies = [rule.spec?.trafficPolicy, ...(rule.spec?.subsets ?? []).map((s) => s.trafficPolicy)];
        failoverPriority.push(...policies.flatMap(failoverPriorityOf));
      }
    }
    traits = {
      selectorLabels: [...selectorLabels].sort(),
      failoverPriorityLabels: failoverPriority.length > 0 ? failoverPriorityLabelNames(failoverPriority) : undefined,
      inlineEndpoints: scope.services.some(hasInlineEndpoints),
    };
    table.set(scope, traits);
  }
  return traits;
}

/** Every failoverPriority entry of a traffic policy, its port-level settings' included. */
function failoverPriorityOf(policy: DestinationRuleTrafficPolicy | undefined): string[] {
  const balancers = [policy?.loadBalancer, ...(policy?.portLevelSettings ?? []).map((p) => p.loadBalancer)];
  return balancers.flatMap((lb) => lb?.localityLbSetting?.failoverPriority ?? []);
}

/** The label names of failoverPriority entries (`label` or `label=value`), sorted, once each. */
export function failoverPriorityLabelNames(entries: readonly string[]): string[] {
  return [...new Set(entries.map((entry) => entry.split("=")[0]))].sort();
}

export function hasInlineEndpoints(service: Service): boolean {
  return service.resolution === "DNSLB" || service.resolution === "DNSRoundRobinLB";
}

/**
 * A memo table of values shared by the proxies of one class within one push: found by the push, the
 * endpoint lookup built from, the proxy's SidecarScope (all by identity) and a class key naming
 * everything else the value reads of the proxy. Unlike the resource caches it skips every per-resource
 * lookup, and it holds what its first build saw of the registry's endpoints until the next push (the
 * push an endpoint change brings).
 */
export type ProxyClassTable<T> = WeakTable<MeshPush, WeakMap<EndpointLookup, Map<SidecarScope, Map<string, T>>>>;

/** The value of `table` for the push, lookup, scope and class key, else `build`'s. */
export function proxyClassValue<T>(
  memos: Memos,
  table: ProxyClassTable<T>,
  push: MeshPush,
  endpoints: EndpointLookup,
  scope: SidecarScope,
  key: string,
  build: () => T,
): T {
  const byPush = memos.weak(table);
  let byLookup = byPush.get(push);
  if (!byLookup) {
    byLookup = new WeakMap();
    byPush.set(push, byLookup);
  }
  let byScope = byLookup.get(endpoints);
  if (!byScope) {
    byScope = new Map();
    byLookup.set(endpoints, byScope);
  }
  let byKey = byScope.get(scope);
  if (!byKey) {
    byKey = new Map();
    byScope.set(scope, byKey);
  }
  let value = byKey.get(key);
  if (value === undefined) {
    value = build();
    byKey.set(key, value);
  }
  return value;
}

/** The proxy's IP families: "4", "6", "46", or "" without addresses. */
export function ipFamilies(proxy: ProxyNode): string {
  return [...new Set(proxy.ipAddresses.map((ip) => (ip.includes(":") ? "6" : "4")))].sort().join("");
}

/**
 * Istio's GetAddressForProxy: a proxy capturing DNS reaches a ServiceEntry host without addresses at
 * the auto-allocated address the name table answers, so its listeners bind there (and its virtual
 * hosts answer to it).
 */
export function listenAddresses(snap: PushSnapshot, proxy: ProxyNode): (service: Service) => Service {
  if (!usesAutoAllocatedAddresses(proxy, snap.ipAutoallocate)) return (service) => service;
  return (service) => {
    if (service.defaultAddress !== UNSPECIFIED_IP) return service;
    const allocated = addressesForProxy(snap.autoAllocatedAddresses(service), proxy);
    return allocated.length > 0 ? { ...service, addresses: allocated, defaultAddress: allocated[0] } : service;
  };
}
