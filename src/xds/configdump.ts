// A proxy's configuration as Envoy's admin /config_dump shows it (envoy.admin.v3.ConfigDump), built
// from a push context with the same functions the generators use: what the control plane would
// send, without a proxy. Bootstrap is omitted; dynamic resources come in Envoy's section order
// (clusters, listeners, scoped routes, routes, secrets, then endpoints as with include_eds), private
// keys redacted as Envoy and Istio redact them. The NDS name table, which Envoy never holds, is
// appended as is when asked for.
import { clone, create, type DescMessage, type Message, toJson } from "@bufbuild/protobuf";
import { type Any, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { admin, type cluster, core, hcm, type listener, packAny, registry, tls, unpackAny } from "../api/index.ts";
import type { XdsCache } from "../configgen/index.ts";
import {
  buildClusters,
  buildListeners,
  buildLoadAssignment,
  buildRouteConfiguration,
  routeNames,
} from "../configgen/index.ts";
import type { MeshPush, ProxyNode, PushSnapshot } from "../model/index.ts";
import type { EndpointLookup } from "../registry/index.ts";
import { type DebugHandler, DebugText, debugConnection } from "./generators/debug-endpoints.ts";
import { buildExtensionConfigurations } from "./generators/ecds.ts";
import { buildNameTable } from "./generators/nds.ts";
import { adsSecretNames, buildSecrets } from "./generators/sds.ts";
import type { SecretLookup } from "./generators/secrets.ts";
import type { ConnectionStatus } from "./server/connection.ts";
import { TypeUrl } from "./types.ts";

export const DUMP_TYPES = ["CDS", "EDS", "LDS", "RDS", "SDS", "NDS", "ECDS"] as const;
export type DumpType = (typeof DUMP_TYPES)[number];

/** Where the generators read what the push context does not hold. */
export interface DumpSources {
  endpoints: EndpointLookup;
  secrets: SecretLookup;
  /** The xDS cache the generators build with (the discovery server's, or one for a translation). */
  cache: XdsCache;
}

export interface ConfigDumpOptions {
  /** The types to include; default every Envoy type (CDS, EDS, LDS, RDS, SDS). */
  types?: readonly DumpType[];
  /** Route names to dump (the proxy's RDS subscription); default those its listeners name. */
  routeNames?: readonly string[];
  /** EDS cluster names; default the EDS clusters among its clusters. */
  clusterNames?: readonly string[];
  /** SDS names; default those its listeners and clusters fetch over ADS. */
  secretNames?: readonly string[];
  /** ECDS names; default the extension configs its listeners discover. */
  extensionNames?: readonly string[];
}

const REDACTED = new TextEncoder().encode("[redacted]");

/** The EDS service name of each EDS cluster. */
function edsClusterNames(clusters: readonly cluster.Cluster[]): string[] {
  return clusters.filter((c) => c.edsClusterConfig !== undefined).map((c) => c.edsClusterConfig?.serviceName || c.name);
}

/** A copy of the secret with its private key replaced by "[redacted]". */
function redacted(secret: tls.Secret): tls.Secret {
  const copy = clone(tls.SecretSchema, secret);
  if (copy.type.case === "tlsCertificate" && copy.type.value.privateKey) {
    copy.type.value.privateKey = create(core.DataSourceSchema, { specifier: { case: "inlineBytes", value: REDACTED } });
  }
  return copy;
}

function any(message: Message): Any {
  const schema = registry.getMessage(message.$typeName);
  if (!schema) throw new Error(`${message.$typeName} is not in the API registry`);
  return packAny(schema, message);
}

/** A resource and its xDS name. */
interface Named {
  name: string;
  message: Message;
}

const named = (message: Message & { name: string }): Named => ({ name: message.name, message });

/** The proxy's clusters and listeners, each built once however many types need them. */
interface Built {
  clusters(): readonly cluster.Cluster[];
  listeners(): listener.Listener[];
}

function once<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= build();
    return value;
  };
}

/** The proxy's resources of one type, as the generators would send them. */
function resourcesOf(
  type: DumpType,
  push: MeshPush,
  proxy: ProxyNode,
  sources: DumpSources,
  options: ConfigDumpOptions,
  { clusters, listeners }: Built,
): Named[] {
  switch (type) {
    case "CDS":
      return clusters().map(named);
    case "LDS":
      return listeners().map(named);
    case "RDS":
      return (options.routeNames ?? routeNames(listeners())).flatMap((name) => {
        const config = buildRouteConfiguration(push, proxy, name, sources.cache);
        return config ? [named(config)] : [];
      });
    case "SDS": {
      const names = options.secretNames ?? adsSecretNames([...listeners(), ...clusters()]);
      return buildSecrets(push, proxy, sources.secrets, names).map((s) => named(redacted(s)));
    }
    case "EDS":
      return (options.clusterNames ?? edsClusterNames(clusters())).map((name) => ({
        name,
        message: buildLoadAssignment(push, proxy, sources.endpoints, name, sources.cache),
      }));
    case "NDS": {
      const table = buildNameTable(push, proxy, sources.endpoints);
      return table ? [{ name: "", message: table }] : [];
    }
    case "ECDS": {
      const names = new Set(options.extensionNames ?? discoveredExtensionNames(listeners()));
      return buildExtensionConfigurations(sources.cache, push, proxy, names, sources.secrets).map(named);
    }
  }
}

/** The names of the extension configs the listeners' HTTP filters discover over ECDS. */
function discoveredExtensionNames(listeners: readonly listener.Listener[]): string[] {
  return listeners
    .flatMap((l) => l.filterChains.flatMap((c) => c.filters))
    .flatMap((f) => {
      const config =
        f.configType.case === "typedConfig"
          ? unpackAny(f.configType.value, hcm.HttpConnectionManagerSchema)
          : undefined;
      return (config?.httpFilters ?? []).filter((h) => h.configType.case === "configDiscovery").map((h) => h.name);
    });
}

/** Envoy's admin sections holding resources of `type`; NDS, which Envoy does not hold, stays bare. */
function section(type: DumpType, resources: readonly Named[], push: MeshPush): Message[] {
  const versionInfo = push.version;
  const lastUpdated = timestampFromDate(push.createdAt);
  const anys = resources.map((r) => any(r.message));
  switch (type) {
    case "CDS":
      return [
        create(admin.ClustersConfigDumpSchema, {
          versionInfo,
          dynamicActiveClusters: anys.map((cluster) => ({ versionInfo, cluster, lastUpdated })),
        }),
      ];
    case "LDS":
      return [
        create(admin.ListenersConfigDumpSchema, {
          versionInfo,
          dynamicListeners: resources.map(({ name }, i) => ({
            name,
            activeState: { versionInfo, listener: anys[i], lastUpdated },
          })),
        }),
      ];
    case "RDS":
      return [
        create(admin.ScopedRoutesConfigDumpSchema),
        create(admin.RoutesConfigDumpSchema, {
          dynamicRouteConfigs: anys.map((routeConfig) => ({ versionInfo, routeConfig, lastUpdated })),
        }),
      ];
    case "SDS":
      return [
        create(admin.SecretsConfigDumpSchema, {
          dynamicActiveSecrets: resources.map(({ name }, i) => ({
            name,
            versionInfo,
            lastUpdated,
            secret: anys[i],
          })),
        }),
      ];
    case "EDS":
      return [
        create(admin.EndpointsConfigDumpSchema, {
          dynamicEndpointConfigs: anys.map((endpointConfig) => ({ versionInfo, endpointConfig, lastUpdated })),
        }),
      ];
    case "NDS":
      return resources.map((r) => r.message);
    case "ECDS":
      return [
        create(admin.EcdsConfigDumpSchema, {
          ecdsFilters: anys.map((ecdsFilter) => ({ versionInfo, ecdsFilter, lastUpdated })),
        }),
      ];
  }
}

/** Envoy's section order; endpoints come last, as Envoy adds them for include_eds. */
const SECTION_ORDER: readonly DumpType[] = ["CDS", "LDS", "RDS", "SDS", "EDS", "NDS", "ECDS"];

/**
 * The proxy's ConfigDump for the push: Envoy's sections for `types` (default every Envoy type), or
 * with `raw` the bare resources of each type, as Istio's config_dump answers `types=`.
 */
export function buildConfigDump(
  push: MeshPush,
  proxy: ProxyNode,
  sources: DumpSources,
  options: ConfigDumpOptions & { raw?: boolean } = {},
): admin.ConfigDump {
  const types = new Set<DumpType>(options.types ?? ["CDS", "EDS", "LDS", "RDS", "SDS"]);
  const built: Built = {
    clusters: once(() => buildClusters(push, proxy, sources.endpoints, sources.cache)),
    listeners: once(() => buildListeners(push, proxy, sources.endpoints, sources.cache)),
  };
  const configs = SECTION_ORDER.filter((t) => types.has(t)).flatMap((type) => {
    const resources = resourcesOf(type, push, proxy, sources, options, built);
    return options.raw ? resources.map((r) => any(r.message)) : section(type, resources, push).map(any);
  });
  return create(admin.ConfigDumpSchema, { configs });
}

/** Proto3 JSON of a dump, `@type` on every Any. */
export function configDumpJson(dump: admin.ConfigDump) {
  return toJson(admin.ConfigDumpSchema, dump, { registry });
}

/** What the config_dump endpoint reads of the xDS server: its connections, each with its last push. */
export interface ConnectedProxies {
  syncStatus(): ConnectionStatus<PushSnapshot>[];
}

const DUMP_TYPE_URLS: Readonly<Record<DumpType, string>> = {
  CDS: TypeUrl.Cluster,
  EDS: TypeUrl.Endpoint,
  LDS: TypeUrl.Listener,
  RDS: TypeUrl.Route,
  SDS: TypeUrl.Secret,
  NDS: TypeUrl.NameTable,
  ECDS: TypeUrl.ExtensionConfiguration,
};

/** `edsz`, `ndsz`, `ecdsz`: config_dump of one type (Istio's typedConfigDumpHandler). */
export function typedConfigDump(configDump: DebugHandler, type: string): DebugHandler {
  return (req) => {
    const query = new URLSearchParams(req.query);
    query.set("types", type);
    return configDump({ ...req, query });
  };
}

/**
 * `/debug/config_dump?proxyID=<id>[&types=CDS,RDS][&include_eds]` (Istio's pilot/pkg/xds/debug.go):
 * the connected proxy's config regenerated from the push context it last worked from (its
 * LastPushContext: what it was sent, not a newer push still queued for it), for the types it watches (RDS,
 * EDS and SDS for the names it subscribed to). `types` gives the bare resources; without it Envoy's
 * sections, endpoints only with include_eds. 400 without proxyID, 404 for a proxy not connected (or,
 * for a caller limited to a namespace, not in it).
 */
export function configDumpEndpoint(proxies: ConnectedProxies, sources: DumpSources): DebugHandler {
  return ({ query, callerNamespace }) => {
    const conn = debugConnection(proxies.syncStatus(), { query, callerNamespace });
    if (conn instanceof DebugText) return conn;
    const push = conn.pushContext;
    const watched = new Map(conn.types.map((t) => [t.typeUrl, t.resourceNames]));
    const asked = query.get("types");
    const requested = asked
      ? asked.split(",").map((t) => t.trim().toUpperCase())
      : ["CDS", "LDS", "RDS", "SDS", "ECDS", ...(query.has("include_eds") ? ["EDS"] : [])];
    const types = DUMP_TYPES.filter((t) => requested.includes(t) && watched.has(DUMP_TYPE_URLS[t]));
    const names = (type: DumpType) => watched.get(DUMP_TYPE_URLS[type]);
    const dump = buildConfigDump(push, conn.proxy, sources, {
      types,
      raw: asked !== null,
      routeNames: names("RDS"),
      clusterNames: names("EDS"),
      secretNames: names("SDS"),
      extensionNames: names("ECDS"),
    });
    return configDumpJson(asked === null ? withIstioSections(dump, query.has("include_eds")) : dump);
  };
}

/**
 * Istio's connectionConfigDump sections, each present even when the proxy does not watch its type:
 * bootstrap (empty), clusters, endpoints (include_eds), listeners, scoped routes, routes, secrets, ECDS.
 */
const ISTIO_SECTIONS: readonly DescMessage[] = [
  admin.BootstrapConfigDumpSchema,
  admin.ClustersConfigDumpSchema,
  admin.EndpointsConfigDumpSchema,
  admin.ListenersConfigDumpSchema,
  admin.ScopedRoutesConfigDumpSchema,
  admin.RoutesConfigDumpSchema,
  admin.SecretsConfigDumpSchema,
  admin.EcdsConfigDumpSchema,
];

function withIstioSections(dump: admin.ConfigDump, includeEds: boolean): admin.ConfigDump {
  const configs = ISTIO_SECTIONS.filter((s) => includeEds || s !== admin.EndpointsConfigDumpSchema).map(
    (schema) => dump.configs.find((c) => c.typeUrl === `type.googleapis.com/${schema.typeName}`) ?? any(create(schema)),
  );
  return create(admin.ConfigDumpSchema, { configs });
}
