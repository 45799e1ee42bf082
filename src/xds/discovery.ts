// The discovery service as sluiced runs it (Istio's DiscoveryServer wiring): the generator registry
// (api, istio.io/debug, event, plus plugins), the ADS server on its ports, and the push pipeline
// from the config store. Start it once the first config load is done.
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { type ConfigObject, kindKey, type MeshConfig } from "../config/index.ts";
import {
  type ConversionResult,
  GATEWAY_API_SOURCE,
  GATEWAY_GROUP,
  liveConversion,
  ROUTE_KINDS,
  registryServiceView,
} from "../gatewayapi/index.ts";
import type { Collection, Singleton } from "../krt/index.ts";
import { buildPushContext, type PushContext, type PushInputs } from "../model/index.ts";
import { envoyFilterStatus, registerEnvoyFilterMetrics } from "../networking/envoyfilter/index.ts";
import { type EndpointLookup, type RegistryInputs, type RegistryOptions, ServiceRegistry } from "../registry/index.ts";
import { CaMetrics, type CertificateAuthority, certificateService } from "../security/ca/index.ts";
import type { ConfigStore } from "../sources/index.ts";
import { parseGoBool } from "../util/go-bool.ts";
import { XdsCache } from "./cache/xds-cache.ts";
import { configDumpEndpoint, typedConfigDump } from "./configdump.ts";
import { GeneratorRegistry, loadGeneratorPlugins } from "./generator.ts";
import { workloadAuthorizationGenerator, workloadGenerator } from "./generators/ambient.ts";
import { apiGenerator, type ConfigLister } from "./generators/api.ts";
import { cdsGenerator } from "./generators/cds.ts";
import { debugGenerator } from "./generators/debug.ts";
import type { DebugAuthOptions } from "./generators/debug-auth.ts";
import { DebugEndpoints } from "./generators/debug-endpoints.ts";
import { ecdsGenerator } from "./generators/ecds.ts";
import { edsGenerator } from "./generators/eds.ts";
import { registerGrpcGenerators } from "./generators/grpc.ts";
import { ldsGenerator } from "./generators/lds.ts";
import { ndsGenerator } from "./generators/nds.ts";
import { pcdsGenerator } from "./generators/pcds.ts";
import { type ConfigGetter, sdsGenerator, storeSecrets } from "./generators/sds.ts";
import { statusGenerator } from "./generators/status.ts";
import { rdsWithVhdsGenerator, vhdsGenerator } from "./generators/vhds.ts";
import type { DebounceOptions } from "./pipeline/debounce.ts";
import { PipelineMetrics } from "./pipeline/metrics.ts";
import { type ChangeSource, type PushContextBuilder, PushPipeline } from "./pipeline/pipeline.ts";
import { proxyNeedsPush } from "./proxy-needs-push.ts";
import { registerPushStatusMetrics } from "./push-status-metrics.ts";
import { type Authenticator, ClientCertAuthenticator } from "./server/auth.ts";
import { XdsMetrics } from "./server/metrics.ts";
import { type BoundPorts, type ListenOptions, XdsServer } from "./server/server.ts";
import { TypeUrl } from "./types.ts";

export interface DiscoveryOptions {
  store: ChangeSource & ConfigLister & ConfigGetter;
  /** The push context of the first config load. */
  initialPush: PushContext;
  /**
   * The service registry's endpoints. With it the Envoy generators (CDS, EDS, LDS, RDS, SDS from the
   * store's Secrets) and NDS are registered;
   * their push contexts must then be built by the model's buildPushContext.
   */
  endpoints?: EndpointLookup;
  build: PushContextBuilder;
  countServices?: (push: PushContext) => number;
  rootNamespace: string;
  domainSuffix: string;
  debounce: DebounceOptions;
  /** ENABLE_XDS_API_GENERATOR_AUTH. */
  apiAuth: boolean;
  debugAuth: DebugAuthOptions;
  /** The chain on the TLS port (security/authn's buildAuthenticators); default the client certificate alone. */
  authenticators?: readonly Authenticator[];
  /** The CA: with it, IstioCertificateService is served on the TLS port (as istiod, 15012 only). */
  ca?: CertificateAuthority;
  /** ISTIO_MULTIROOT_MESH: PCDS sends the CA's trust bundle (default false: PCDS answers nothing). */
  multiRootMesh?: boolean;
  /** Generator plugin modules (`--plugin`). */
  plugins: readonly string[];
  listen: ListenOptions;
  metrics?: Registry;
  log: Logger;
}

export interface Discovery {
  server: XdsServer;
  ports: BoundPorts;
  /** The xDS cache the generators build with; /debug/cachez shows it. */
  cache: XdsCache;
  /** The endpoints served over `istio.io/debug`; the admin server registers its handlers here. */
  debugEndpoints: DebugEndpoints;
  /** Stops pushing, then closes the ports and ends every stream (they reconnect elsewhere). */
  stop(graceMs?: number): Promise<void>;
}

export async function startDiscovery(options: DiscoveryOptions): Promise<Discovery> {
  const { log } = options;
  const generators = new GeneratorRegistry();
  const debugEndpoints = new DebugEndpoints();
  // The one xDS cache: every generator and the config dump build with it.
  const cache = new XdsCache();
  generators.register(
    "api",
    apiGenerator({ store: options.store, requireAuth: options.apiAuth, rootNamespace: options.rootNamespace }),
  );
  generators.register(TypeUrl.Debug, debugGenerator(debugEndpoints, options.debugAuth));
  // The types istiod registers beside the Envoy ones, so that their requests never reach `api`.
  generators.register(
    TypeUrl.ProxyConfig,
    pcdsGenerator({ multiRootMesh: options.multiRootMesh ?? false, trustBundle: () => options.ca?.trustBundle() }),
  );
  generators.register(TypeUrl.Address, workloadGenerator);
  generators.register(TypeUrl.Workload, workloadGenerator);
  generators.register(TypeUrl.WorkloadAuthorization, workloadAuthorizationGenerator);
  const secrets = storeSecrets(options.store);
  if (options.endpoints) {
    generators.register(TypeUrl.Cluster, cdsGenerator(options.endpoints, cache));
    generators.register(TypeUrl.Endpoint, edsGenerator(options.endpoints, cache));
    generators.register(TypeUrl.Listener, ldsGenerator(options.endpoints, cache));
    generators.register(TypeUrl.Route, rdsWithVhdsGenerator(cache));
    generators.register(TypeUrl.VirtualHost, vhdsGenerator(cache));
    generators.register(TypeUrl.Secret, sdsGenerator(secrets));
    generators.register(TypeUrl.NameTable, ndsGenerator(options.endpoints));
    generators.register(TypeUrl.ExtensionConfiguration, ecdsGenerator(cache, secrets));
    // Proxyless gRPC (GENERATOR=grpc): its own LDS, RDS and CDS; EDS is the one above.
    registerGrpcGenerators(generators, options.endpoints, cache);
  }
  await loadGeneratorPlugins(options.plugins, generators);
  if (options.plugins.length > 0)
    log.info({ plugins: options.plugins, generators: generators.keys() }, "generator plugins loaded");

  const server = new XdsServer({
    generators,
    memos: cache,
    initialPush: options.initialPush,
    authenticators: options.authenticators ?? [new ClientCertAuthenticator()],
    proxyNeedsPush,
    metrics: options.metrics ? new XdsMetrics(options.metrics) : undefined,
    log: log.child({ component: "ads" }),
  });
  generators.register(
    "event",
    statusGenerator({ syncStatus: () => server.syncStatus(), endpoints: debugEndpoints, auth: options.debugAuth }),
  );
  if (options.endpoints) {
    const configDump = configDumpEndpoint(server, { endpoints: options.endpoints, secrets, cache });
    debugEndpoints.register(
      "config_dump",
      configDump,
      "ConfigDump in the form of the Envoy admin config dump API for passed in proxyID",
    );
    debugEndpoints.register("ecdsz", typedConfigDump(configDump, "ecds"), "Status and debug interface for ECDS");
    debugEndpoints.register("edsz", typedConfigDump(configDump, "eds"), "Status and debug interface for EDS");
    debugEndpoints.register("ndsz", typedConfigDump(configDump, "nds"), "Status and debug interface for NDS");
  }
  if (options.ca) {
    server.addService(
      certificateService({
        ca: options.ca,
        authenticate: (call) => server.authenticateCall(call),
        log: log.child({ component: "ca" }),
        metrics: options.metrics ? new CaMetrics(options.metrics, options.ca) : undefined,
      }),
    );
  }
  const ports = await server.listen(options.listen);
  const pipeline = new PushPipeline({
    store: options.store,
    server,
    build: options.build,
    countServices: options.countServices,
    debounce: options.debounce,
    domainSuffix: options.domainSuffix,
    metrics: options.metrics ? new PipelineMetrics(options.metrics) : undefined,
    log: log.child({ component: "push" }),
  });
  pipeline.start();
  if (options.metrics) {
    registerEnvoyFilterMetrics(options.metrics);
    registerPushStatusMetrics(options.metrics, () => server.pushContext);
  }
  // A patch the engine skips is logged once, when first seen.
  const stopPatchErrors = envoyFilterStatus.onNewError((e) =>
    log.warn({ envoyFilter: e.filter, configPatch: e.index, path: e.path }, `EnvoyFilter patch skipped: ${e.message}`),
  );
  return {
    server,
    ports,
    cache,
    debugEndpoints,
    async stop(graceMs) {
      stopPatchErrors();
      pipeline.stop();
      await server.close(graceMs);
    },
  };
}

/** The kind (key) of the store collection behind each registry input. */
export const REGISTRY_KINDS: Readonly<Record<keyof RegistryInputs, string>> = {
  services: kindKey("", "Service"),
  endpointSlices: kindKey("discovery.k8s.io", "EndpointSlice"),
  endpoints: kindKey("", "Endpoints"),
  pods: kindKey("", "Pod"),
  nodes: kindKey("", "Node"),
  serviceEntries: kindKey("networking.istio.io", "ServiceEntry"),
  workloadEntries: kindKey("networking.istio.io", "WorkloadEntry"),
  workloadGroups: kindKey("networking.istio.io", "WorkloadGroup"),
  namespaces: kindKey("", "Namespace"),
};

/**
 * The service registry over the store's collections (Services, EndpointSlices, Pods, ServiceEntries, ...),
 * in cluster `clusterId` (default Kubernetes) with `meshNetworks` (istiod's --networksConfig), which
 * pushes from it read too.
 */
export function storeRegistry(
  store: ConfigStore,
  mesh: MeshConfig,
  domainSuffix: string,
  topology: Pick<RegistryOptions, "clusterId" | "meshNetworks"> = {},
): ServiceRegistry {
  const inputs = Object.fromEntries(
    Object.entries(REGISTRY_KINDS).map(([input, kind]) => [input, store.collection(kind)]),
  ) as Record<keyof RegistryInputs, Collection<ConfigObject>>;
  return new ServiceRegistry(inputs, { domainSuffix, mesh, ...topology });
}

const conversions = new WeakMap<ServiceRegistry, Singleton<ConversionResult>>();

/**
 * The store's Gateway API objects converted to Istio config, with their statuses, kept live over the
 * store's collections and the registry's services. One per registry: pushes and the status writer share it.
 * The converted config is written back into the store as source GATEWAY_API_SOURCE, so that it reaches
 * pushes as Istio config changes naming the Gateways and VirtualServices that changed, as Istio's
 * gateway controller pushes its outputs (the Gateway API objects themselves push nothing).
 */
export function storeGatewayConversion(
  store: ConfigStore,
  registry: ServiceRegistry,
  domainSuffix: string,
): Singleton<ConversionResult> {
  let conversion = conversions.get(registry);
  if (!conversion) {
    const gatewayApi = (kind: string) => store.collection(kindKey(GATEWAY_GROUP, kind));
    conversion = liveConversion(
      {
        gatewayApi: {
          gatewayClasses: gatewayApi("GatewayClass"),
          gateways: gatewayApi("Gateway"),
          listenerSets: gatewayApi("ListenerSet"),
          referenceGrants: gatewayApi("ReferenceGrant"),
          backendTLSPolicies: gatewayApi("BackendTLSPolicy"),
          routes: ROUTE_KINDS.map(gatewayApi),
        },
        cluster: {
          services: store.collection(kindKey("", "Service")),
          secrets: store.collection(kindKey("", "Secret")),
          configMaps: store.collection(kindKey("", "ConfigMap")),
          namespaces: store.collection(kindKey("", "Namespace")),
          serviceEntries: store.collection(kindKey("networking.istio.io", "ServiceEntry")),
        },
        servicesByHostname: registryServiceView(registry),
      },
      { domainSuffix },
    );
    conversion.register((event) =>
      store.replace(GATEWAY_API_SOURCE, "converted", event.type === "delete" ? [] : event.new.config),
    );
    conversions.set(registry, conversion);
  }
  return conversion;
}

/** The feature flags that shape generated config: Istio's (PILOT_* environment settings) and Sluice's own. */
export type PushFeatures = Pick<
  PushInputs,
  | "persistentSessions"
  | "scopeGatewayToNamespace"
  | "mongoFilter"
  | "redisFilter"
  | "mysqlFilter"
  | "quicListeners"
  | "vhds"
  | "xdsCache"
>;

/** The feature flags as istiod reads them from its environment. */
export function pushFeaturesFromEnv(env: Record<string, string | undefined>): PushFeatures {
  // Go's strconv.ParseBool; anything else leaves the default, as Istio's env.Register does.
  const flag = (name: string, fallback: boolean) => parseGoBool(env[name] ?? "") ?? fallback;
  return {
    persistentSessions: flag("PILOT_ENABLE_PERSISTENT_SESSION_FILTER", false),
    scopeGatewayToNamespace: flag("PILOT_SCOPE_GATEWAY_TO_NAMESPACE", false),
    mongoFilter: flag("PILOT_ENABLE_MONGO_FILTER", true),
    redisFilter: flag("PILOT_ENABLE_REDIS_FILTER", false),
    mysqlFilter: flag("PILOT_ENABLE_MYSQL_FILTER", false),
    quicListeners: flag("PILOT_ENABLE_QUIC_LISTENERS", false),
    vhds: flag("SLUICE_ENABLE_VHDS", false),
    xdsCache: flag("PILOT_ENABLE_XDS_CACHE", true),
  };
}

/** The push context over what the store holds now, Istio config converted from Gateway API included. */
export function storePush(
  store: ConfigStore,
  registry: ServiceRegistry,
  mesh: MeshConfig,
  domainSuffix: string,
  previous?: PushContext,
  features: PushFeatures = {},
): PushContext {
  // From the first push on, the store holds the converted config too.
  storeGatewayConversion(store, registry, domainSuffix);
  return buildPushContext(
    {
      configs: store.list().map((s) => s.object),
      services: registry.services.list(),
      endpoints: registry.endpoints.list(),
      mesh,
      domainSuffix,
      meshNetworks: registry.meshNetworks,
      clusterId: registry.clusterId,
      ...features,
    },
    previous,
  );
}
