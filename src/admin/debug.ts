// The debug endpoints of Istio's pilot/pkg/xds/debug.go over Sluice's state, registered into the
// discovery's DebugEndpoints so the admin HTTP server and the `istio.io/debug` generators serve the
// same functions. Shapes follow Istio's JSON (field names included) where clients read them.
import { fromBinary, toJson } from "@bufbuild/protobuf";
import { type AmbientIndex, ipString } from "../ambient/index.ts";
import { security, workloadapi } from "../api/index.ts";
import { type ConfigObject, KINDS, kindKey, lookupKindAnyVersion, type MeshConfig } from "../config/index.ts";
import type { XdsCaches } from "../configgen/index.ts";
import type { DebugRegistry } from "../krt/index.ts";
import {
  compareStrings,
  type MeshNetworkGateway,
  type PushSnapshot,
  pushRequest,
  resolvedGateways,
} from "../model/index.ts";
import type { RegistryEndpoints, Service, ServiceEndpoint } from "../registry/index.ts";
import type { ConfigStore } from "../sources/index.ts";
import {
  type ConnectionStatus,
  type DebugEndpoints,
  type DebugRequest,
  DebugText,
  debugConnection,
  encodeResource,
  PROXY_NOT_CONNECTED,
  TypeUrl,
  type XdsServer,
} from "../xds/index.ts";

/** What the debug endpoints read. */
export interface DebugSources {
  server: Pick<XdsServer<PushSnapshot>, "syncStatus" | "pushContext" | "push" | "disconnect">;
  store: Pick<ConfigStore, "list" | "problems">;
  /** The service registry (registryz, endpointShardz); without it they are empty. */
  registry?: { services: { list(): Service[] }; registryEndpoints: { list(): RegistryEndpoints[] } };
  mesh: MeshConfig;
  /** The ambient index (ambientz); without it ambientz answers as istiod with ambient off. */
  ambient?: Pick<AmbientIndex, "all" | "policyInformation">;
  /** krt collections for krtz. */
  krt?: DebugRegistry;
  /** The injection templates by name (/debug/inject); without them it answers 404, as Istio without a webhook. */
  injectTemplates?: () => Record<string, string>;
  /**
   * The Kubernetes clusters config is read from (/debug/clusterz, Istio's ListRemoteClusters); without
   * them clusterz answers 400, as istiod without a multicluster controller.
   */
  clusters?: () => ClusterDebugInfo[];
  /** UNSAFE_ENABLE_ADMIN_ENDPOINTS: adds force_disconnect. */
  unsafeAdminEndpoints?: boolean;
  /** The discovery server's xDS cache (/debug/cachez); without it cachez lists nothing. */
  cache?: XdsCaches;
}

/** A cluster as Istio's cluster.DebugInfo: the config cluster has no secret. */
export interface ClusterDebugInfo {
  id: string;
  secretName: string;
  syncStatus: "synced" | "syncing" | "timeout";
}

/** Registers every debug endpoint of Istio's AddDebugHandlers that applies to Sluice. */
export function registerDebugEndpoints(endpoints: DebugEndpoints, sources: DebugSources): void {
  const { server } = sources;
  const connections = () => sortedConnections(server.syncStatus());
  // The current push's mesh snapshot (undefined before the first push).
  const snapshot = (): PushSnapshot | undefined => server.pushContext?.snapshot;

  if (sources.unsafeAdminEndpoints) {
    endpoints.register(
      "force_disconnect",
      (req) => {
        const conn = debugConnection(connections(), req);
        if (conn instanceof DebugText) return conn;
        server.disconnect(conn.connectionId);
        return "OK";
      },
      "Disconnects a proxy from this Pilot",
    );
  }
  endpoints.register("adsz", (req) => adsz(req, connections(), server), "Status and debug interface for ADS");
  endpoints.describe("adsz?push=true", "Initiates push of the current state to all connected endpoints");
  endpoints.register(
    "syncz",
    (req) => syncz(connections(), req.query.get("namespace") ?? ""),
    "Synchronization status of all Envoys connected to this Pilot instance",
  );
  endpoints.register(
    "registryz",
    () => [...(sources.registry?.services.list() ?? [])].sort(compareServices),
    "Debug support for registry",
  );
  const shardz = () => endpointShardz(sources.registry?.registryEndpoints.list() ?? []);
  endpoints.register("endpointz", shardz, "Obsolete, use endpointShardz");
  endpoints.register("endpointShardz", shardz, "Info about the endpoint shards");
  endpoints.register("cachez", (req) => cachez(req, sources.cache, snapshot()), "Info about the internal XDS caches");
  endpoints.describe("cachez?sizes=true", "Info about the size of the internal XDS caches");
  endpoints.describe("cachez?clear=true", "Clear the XDS caches");
  // cachez?stats=true (Sluice's own, unlisted so that /debug and /debug/list stay istiod's): the entries,
  // hits and misses of each resource cache and memo table of the xDS cache, and of the memo tables the
  // pushes keep (pushMemos).
  endpoints.register("configz", () => configz(sources.store), "Debug support for config");
  endpoints.register("ambientz", () => ambientz(sources.ambient), "Debug support for ambient");
  endpoints.register(
    "sidecarz",
    (req) => {
      const conn = debugConnection(connections(), req);
      if (conn instanceof DebugText) return conn;
      const push = server.pushContext;
      return push ? sidecarz(push.snapshot, conn, push.version) : PROXY_NOT_CONNECTED;
    },
    "Debug sidecar scope for a proxy",
  );
  endpoints.register(
    "resourcesz",
    () =>
      // Istio lists its config store's schemas: the Istio and Gateway API kinds, not Kubernetes' own.
      KINDS.filter((k) => k.family !== "kubernetes" && k.supported).map((k) => ({
        group: k.group,
        version: k.preferredVersion,
        kind: k.kind,
      })),
    "Debug support for watched resources",
  );
  endpoints.register(
    "instancesz",
    () => {
      const snap = snapshot();
      const out: Record<string, readonly unknown[]> = {};
      for (const c of connections()) out[c.proxy.id] = snap?.serviceTargets(c.proxy) ?? [];
      return out;
    },
    "Debug support for service instances",
  );
  endpoints.register(
    "krtz",
    () => sources.krt?.snapshot({ items: true }) ?? [],
    "Debug support for krt (internal state)",
  );
  endpoints.register(
    "authorizationz",
    () => ({ authorization_policies: policiesByNamespace(snapshot(), "authorizationPolicies", sources.store) }),
    "Internal authorization policies",
  );
  endpoints.register(
    "telemetryz",
    (req) => {
      const snap = snapshot();
      if (!req.query.get("proxyID")) return { telemetries: policiesByNamespace(snap, "telemetries", sources.store) };
      const conn = debugConnection(connections(), req);
      if (conn instanceof DebugText) return conn;
      return { telemetries: (snap?.telemetriesFor(conn.proxy) ?? []).map((t) => policyJson(t, "telemetries")) };
    },
    "Debug Telemetry configuration",
  );
  // Istio's LastPushStatus: what the builders reported while serving the current push.
  endpoints.register("push_status", () => server.pushContext?.status ?? "", "Last PushContext Details");
  endpoints.register(
    "pushcontext",
    () => {
      const snap = snapshot();
      if (!snap) return undefined;
      return {
        AuthorizationPolicies: policiesByNamespace(snap, "authorizationPolicies", sources.store),
        NetworkGateways: networkGatewaysJson(resolvedGateways(snap.allNetworkGateways)),
        UnresolvedGateways: networkGatewaysJson(snap.allNetworkGateways),
      };
    },
    "Debug support for current push context",
  );
  endpoints.register(
    "connections",
    () => {
      const all = connections();
      return {
        totalClients: all.length,
        ...(all.length > 0
          ? {
              clients: all.map((c) => ({
                connectionId: c.connectionId,
                connectedAt: c.connectedAt,
                address: c.peerAddress,
              })),
            }
          : {}),
      };
    },
    "Info about the connected XDS clients",
  );
  endpoints.register(
    "inject",
    () => (sources.injectTemplates ? sources.injectTemplates() : new DebugText("", 404)),
    "Active inject template",
  );
  endpoints.register("mesh", () => sources.mesh, "Active mesh config");
  endpoints.register(
    "clusterz",
    () => (sources.clusters ? sources.clusters() : new DebugText("", 400)),
    "List remote clusters where istiod reads endpoints",
  );
  endpoints.register(
    "networkz",
    () => networkGatewaysJson(resolvedGateways(snapshot()?.allNetworkGateways ?? [])),
    "List cross-network gateways",
  );
  // Sluice has no MCS registry: Istio's answer without one.
  endpoints.register("mcsz", () => null, "List information about Kubernetes MCS services");
  endpoints.register("list", () => listing(endpoints), "List all supported debug commands in json");
}

/** The debug paths /debug/list names: everything but itself and pprof. */
function listing(endpoints: DebugEndpoints): string[] {
  return endpoints
    .listing()
    .map((e) => e.path)
    .filter((path) => path !== "list" && !path.includes("pprof"));
}

/** Gateways as Istio's model.NetworkGateway JSON (Go field names); null for none, as Go's nil slice. */
function networkGatewaysJson(gateways: readonly MeshNetworkGateway[]): unknown[] | null {
  if (gateways.length === 0) return null;
  return gateways.map((gw) => ({
    Network: gw.network,
    Cluster: gw.clusterId,
    Addr: gw.address,
    Port: gw.port,
    // Sluice's gateways are sidecar (mTLS) gateways: no HBONE port, no service account.
    HBONEPort: 0,
    ServiceAccount: { Namespace: "", Name: "" },
  }));
}

/** Connections ordered by id, as Istio's SortedClients. */
function sortedConnections(all: readonly ConnectionStatus[]): ConnectionStatus[] {
  return [...all].sort((a, b) => compareStrings(a.connectionId, b.connectionId));
}

const compareServices = (a: Service, b: Service) =>
  compareStrings(a.hostname, b.hostname) || compareStrings(a.namespace, b.namespace);

function adsz(
  req: DebugRequest,
  all: readonly ConnectionStatus[],
  server: Pick<XdsServer<PushSnapshot>, "pushContext" | "push">,
): unknown {
  if (req.query.get("push")) {
    const push = server.pushContext;
    if (push) server.push(pushRequest({ full: true, push, forced: true, reasons: ["debug"] }));
    return `Pushed to ${all.length} servers\n`;
  }
  let shown = all;
  if (req.query.get("proxyID")) {
    const conn = debugConnection(all, req);
    if (conn instanceof DebugText) return conn;
    shown = [conn];
  }
  return {
    totalClients: shown.length,
    ...(shown.length > 0 ? { clients: shown.map(adsClient) } : {}),
  };
}

/** One connection as Istio's AdsClient (empty labels and locality left out). */
function adsClient(c: ConnectionStatus) {
  const { proxy } = c;
  const { region, zone, subZone } = proxy.locality;
  const watches: Record<string, string[]> = {};
  for (const t of c.types) watches[t.typeUrl] = t.resourceNames;
  return {
    connectionId: c.connectionId,
    connectedAt: c.connectedAt,
    address: c.peerAddress,
    ...(Object.keys(proxy.labels).length > 0 ? { labels: proxy.labels } : {}),
    metadata: proxy.metadata.raw,
    ...(region || zone || subZone
      ? {
          locality: {
            ...(region ? { region } : {}),
            ...(zone ? { zone } : {}),
            ...(subZone ? { sub_zone: subZone } : {}),
          },
        }
      : {}),
    ...(Object.keys(watches).length > 0 ? { watches } : {}),
  };
}

/** The types Istio's SyncStatus names in its own fields. */
const SYNC_FIELDS: readonly [string, string][] = [
  ["cluster", TypeUrl.Cluster],
  ["listener", TypeUrl.Listener],
  ["route", TypeUrl.Route],
  ["endpoint", TypeUrl.Endpoint],
  ["extensionconfig", TypeUrl.ExtensionConfiguration],
];

/** Istio's SyncStatus per connection: nonces sent and acked, and per type the last error. */
function syncz(all: readonly ConnectionStatus[], namespace: string): unknown[] {
  return all
    .filter((c) => namespace === "" || c.proxy.configNamespace === namespace)
    .map((c) => {
      const { proxy } = c;
      const byType = new Map(c.types.map((t) => [t.typeUrl, t]));
      const status: Record<string, unknown> = {};
      if (proxy.clusterId) status.cluster_id = proxy.clusterId;
      status.proxy = proxy.id;
      status.proxy_type = proxy.type;
      if (proxy.metadata.ISTIO_VERSION) status.istio_version = proxy.metadata.ISTIO_VERSION;
      for (const [field, typeUrl] of SYNC_FIELDS) {
        const t = byType.get(typeUrl);
        if (t?.sent) status[`${field}_sent`] = t.sent.nonce;
        if (t?.acked) status[`${field}_acked`] = t.acked.nonce;
      }
      const resources: Record<string, unknown> = {};
      for (const t of c.types) {
        resources[t.typeUrl] = {
          ...(t.sent ? { sent: t.sent.nonce } : {}),
          ...(t.acked ? { acked: t.acked.nonce } : {}),
          sentTime: t.sent?.time ?? GO_ZERO_TIME,
          ...(t.lastNack ? { lastError: t.lastNack.message } : {}),
        };
      }
      if (c.types.length > 0) status.resources = resources;
      return status;
    });
}

/** Go's zero time.Time, which omitempty does not leave out. */
const GO_ZERO_TIME = "0001-01-01T00:00:00Z";

/** Istio's HealthStatus numbers. */
const HEALTH: Record<ServiceEndpoint["health"], number> = {
  Unknown: 0,
  Healthy: 1,
  UnHealthy: 2,
  Draining: 3,
  Terminating: 4,
};

/**
 * Istio's EndpointIndex.Shardz: hostname → namespace → {Shards: {"provider/cluster": endpoints},
 * ServiceAccounts}, one shard per registry and cluster, endpoints in IstioEndpoint's field names.
 */
function endpointShardz(all: readonly RegistryEndpoints[]): Record<string, Record<string, unknown>> {
  const out: Record<
    string,
    Record<string, { Shards: Record<string, unknown[]>; ServiceAccounts: Record<string, object> }>
  > = {};
  for (const entry of [...all].sort((a, b) => compareStrings(a.key, b.key))) {
    // Istio keeps no shard for a service without endpoints.
    if (entry.endpoints.length === 0) continue;
    const provider = entry.key.slice(0, entry.key.indexOf("/"));
    out[entry.hostname] ??= {};
    out[entry.hostname][entry.namespace] ??= { Shards: {}, ServiceAccounts: {} };
    const shards = out[entry.hostname][entry.namespace];
    for (const e of entry.endpoints) {
      const shard = `${provider}/${e.clusterId}`;
      shards.Shards[shard] ??= [];
      shards.Shards[shard].push(istioEndpoint(e, provider));
      if (e.identity) shards.ServiceAccounts[e.identity] = {};
    }
  }
  return out;
}

/**
 * `provider` is the registry: Kubernetes endpoints carry SendUnhealthyEndpoints (istiod's
 * PILOT_AUTO_SEND_UNHEALTHY_ENDPOINTS default), ServiceEntry ones do not.
 */
function istioEndpoint(e: ServiceEndpoint, provider: string) {
  return {
    Labels: e.labels,
    Addresses: [e.address],
    ServicePortName: e.servicePortName,
    LegacyClusterPortKey: e.servicePort,
    ServiceAccount: e.identity,
    Network: e.network,
    Locality: { Label: e.locality, ClusterID: e.clusterId },
    EndpointPort: e.port,
    LbWeight: e.weight,
    TLSMode: e.tlsMode,
    Namespace: e.workloadNamespace,
    WorkloadName: e.workloadName,
    HostName: e.podDns?.hostname ?? "",
    SubDomain: e.podDns?.subdomain ?? "",
    HealthStatus: HEALTH[e.health],
    SendUnhealthyEndpoints: provider === "Kubernetes",
    NodeName: e.nodeName ?? "",
  };
}

/**
 * Every Istio and Gateway API object in the store (istiod's config store; the Kubernetes objects the
 * registry reads, Secrets among them, are not config), without managedFields (istiod's config model
 * drops them), then the problems its sources reported, as ConfigProblem entries.
 */
function configz(store: Pick<ConfigStore, "list" | "problems">): unknown[] {
  const isConfig = (o: ConfigObject) => {
    const family = lookupKindAnyVersion(o.apiVersion, o.kind)?.family;
    return family !== undefined && family !== "kubernetes";
  };
  const withoutManagedFields = (o: ConfigObject): ConfigObject => {
    if (o.metadata.managedFields === undefined) return o;
    const { managedFields: _, ...metadata } = o.metadata;
    return { ...o, metadata };
  };
  return [
    ...store
      .list()
      .map((s) => s.object)
      .filter(isConfig)
      .map(withoutManagedFields),
    ...store.problems().map((p) => ({
      kind: "ConfigProblem",
      source: p.source,
      scope: p.scope,
      where: p.where,
      message: p.message,
    })),
  ];
}

/** Istio's SidecarScope JSON for the proxy's scope in the current push. */
function sidecarz(snap: PushSnapshot, conn: ConnectionStatus, version: string): unknown {
  const scope = snap.sidecarScope(conn.proxy);
  const servicesByHostname: Record<string, Service> = {};
  const destinationRules: Record<string, unknown[]> = {};
  for (const service of scope.services) {
    servicesByHostname[service.hostname] = service;
    const rules = scope.destinationRules(service.hostname);
    if (rules.length > 0) destinationRules[service.hostname] = rules.map((r) => ({ ...r.rule, from: r.from }));
  }
  return {
    version,
    name: scope.name,
    namespace: scope.namespace,
    outboundTrafficPolicy: scope.outboundTrafficPolicy,
    services: scope.services,
    egressListenerServices: scope.egressListeners.map((l) => l.services),
    servicesByHostname,
    sidecar: scope.sidecar?.spec ?? null,
    destinationRules,
  };
}

type PolicyIndexName = "authorizationPolicies" | "telemetries";
const POLICY_KINDS: Record<PolicyIndexName, string> = {
  authorizationPolicies: kindKey("security.istio.io", "AuthorizationPolicy"),
  telemetries: kindKey("telemetry.istio.io", "Telemetry"),
};

/** Istio's AuthorizationPolicies / Telemetries: policies by namespace in the push's order, and the root namespace. */
function policiesByNamespace(
  snap: PushSnapshot | undefined,
  index: PolicyIndexName,
  store: Pick<ConfigStore, "list">,
): unknown {
  if (!snap) return null;
  const namespaces = [...new Set(store.list(POLICY_KINDS[index]).map((s) => s.key.namespace))].sort(compareStrings);
  const byNamespace: Record<string, unknown[]> = {};
  for (const namespace of namespaces) {
    const policies = snap[index].inNamespace(namespace);
    if (policies.length > 0) byNamespace[namespace] = policies.map((p) => policyJson(p, index));
  }
  // The json tags of Istio's AuthorizationPolicies and Telemetries.
  const field = index === "authorizationPolicies" ? "namespace_to_policies" : "namespace_to_telemetries";
  return { [field]: byNamespace, root_namespace: snap.rootNamespace };
}

/** Istio's model.AuthorizationPolicy (its annotations null when none) or model.Telemetry, by their json tags. */
function policyJson(policy: ConfigObject, index: PolicyIndexName) {
  return {
    name: policy.metadata.name ?? "",
    namespace: policy.metadata.namespace ?? "",
    ...(index === "authorizationPolicies" ? { annotations: policy.metadata.annotations ?? null } : {}),
    spec: policy.spec ?? {},
  };
}

/** Istio's util.ByteCount: decimal units, one decimal. */
export function byteCount(bytes: number): string {
  if (bytes < 1000) return `${bytes}B`;
  let div = 1000;
  let exp = 0;
  for (let n = Math.floor(bytes / 1000); n >= 1000; n = Math.floor(n / 1000)) {
    div *= 1000;
    exp++;
  }
  return `${(bytes / div).toFixed(1)}${"kMGTPE"[exp]}B`;
}

/** Istio's cachez: resource names by type URL; `sizes` their encoded size; `clear` empties the caches. */
function cachez(req: DebugRequest, caches: XdsCaches | undefined, push: PushSnapshot | undefined): unknown {
  if (req.query.get("clear")) {
    caches?.clear();
    return "Cache cleared\n";
  }
  // Sluice's own: each resource cache's and memo table's entries, hits and misses.
  if (req.query.get("stats")) {
    return { ...(caches?.stats() ?? { resources: [], memos: [] }), pushMemos: push?.memos.memoStats() ?? [] };
  }
  const entries = caches?.entries() ?? [];
  if (req.query.get("sizes")) {
    const raw = new Map<string, number>();
    let total = 0;
    for (const e of entries) {
      // The cache's memo tables hold the encoding the server sent, so this encodes nothing again.
      const bytes = encodeResource(e, caches).any.length;
      raw.set(e.typeUrl, (raw.get(e.typeUrl) ?? 0) + bytes);
      total += bytes;
    }
    const out: Record<string, string> = {};
    for (const [typeUrl, bytes] of raw) out[typeUrl] = byteCount(bytes);
    out.total = byteCount(total);
    return out;
  }
  const out: Record<string, string[]> = {};
  for (const e of entries) {
    out[e.typeUrl] ??= [];
    out[e.typeUrl].push(e.name);
  }
  return out;
}

/**
 * Every workload, service and policy of the ambient index as protobuf JSON, addresses as IP text (istiod writes
 * the text's bytes, which JSON then shows base64-encoded); with ambient off, istiod's nulls.
 */
function ambientz(index: DebugSources["ambient"]): unknown {
  if (!index) return { workloads: null, services: null, policies: null };
  const workloads: unknown[] = [];
  const services: unknown[] = [];
  for (const info of index.all()) {
    const address = fromBinary(workloadapi.AddressSchema, info.resource.value);
    if (address.type.case === "workload") {
      const w = address.type.value;
      const json = toJson(workloadapi.WorkloadSchema, w) as Record<string, unknown>;
      if (w.addresses.length > 0) json.addresses = w.addresses.map(ipString);
      workloads.push(json);
    } else if (address.type.case === "service") {
      const svc = address.type.value;
      const json = toJson(workloadapi.ServiceSchema, svc) as Record<string, unknown>;
      if (svc.addresses.length > 0) {
        json.addresses = svc.addresses.map((a) => ({
          ...(a.network ? { network: a.network } : {}),
          address: ipString(a.address),
        }));
      }
      services.push(json);
    }
  }
  const policies = index.policyInformation().map((p) => toJson(security.AuthorizationSchema, p.authorization));
  // Go writes an empty list as null.
  const orNull = (list: unknown[]) => (list.length > 0 ? list : null);
  return { workloads: orNull(workloads), services: orNull(services), policies: orNull(policies) };
}
