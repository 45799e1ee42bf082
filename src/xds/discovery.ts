// The discovery service as sluiced runs it (Istio's DiscoveryServer wiring): the generator registry
// (api, istio.io/debug, event, plus plugins), the ADS server on its ports, and the push pipeline
// from the config store. Start it once the first config load is done. The push contexts it serves are
// built outside it (the model's storePush, given as `build`).
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { AmbientIndex } from "../ambient/index.ts";
import { XdsCache } from "../configgen/index.ts";
import { type MeshPush, type PushSnapshot, sameKeptInputs, type TriggerReason } from "../model/index.ts";
import { envoyFilterStatus, registerEnvoyFilterMetrics } from "../networking/envoyfilter/index.ts";
import type { EndpointLookup, WorkloadServices } from "../registry/index.ts";
import { CaMetrics, type CertificateAuthority, certificateService, type NodeAuthorizer } from "../security/ca/index.ts";
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
import { rdsGenerator } from "./generators/rds.ts";
import { sdsGenerator } from "./generators/sds.ts";
import { type ConfigGetter, storeSecrets } from "./generators/secrets.ts";
import { statusGenerator } from "./generators/status.ts";
import { rdsWithVhdsGenerator, vhdsGenerator } from "./generators/vhds.ts";
import type { DebounceOptions } from "./pipeline/debounce.ts";
import { PipelineMetrics } from "./pipeline/metrics.ts";
import { type ChangeSource, type PushContextBuilder, PushPipeline } from "./pipeline/pipeline.ts";
import { proxyNeedsPush } from "./proxy-needs-push.ts";
import { registerPushStatusMetrics } from "./push-status-metrics.ts";
import { type Authenticator, ClientCertAuthenticator } from "./server/auth.ts";
import { XdsMetrics } from "./server/metrics.ts";
import { type BoundPorts, type ConnectionHooks, type ListenOptions, XdsServer } from "./server/server.ts";
import { TypeUrl } from "./types.ts";

export interface DiscoveryOptions {
  store: ChangeSource & ConfigLister & ConfigGetter;
  /** The push context of the first config load. */
  initialPush: MeshPush;
  /**
   * The service registry: its endpoints, and which services a Pod or WorkloadEntry change reaches. With
   * it the Envoy generators (CDS, EDS, LDS, RDS, SDS from the store's Secrets) and NDS are registered;
   * without it a workload change pushes nothing.
   */
  endpoints?: EndpointLookup & WorkloadServices;
  build: PushContextBuilder<PushSnapshot>;
  countServices?: (push: MeshPush) => number;
  rootNamespace: string;
  domainSuffix: string;
  debounce: DebounceOptions;
  /** PILOT_PUSH_THROTTLE: proxies pushed at once, and responses built and written at once (default 100). */
  pushThrottle?: number;
  /** The ambient index (PILOT_ENABLE_AMBIENT): WDS serves its addresses and policies, and pushes what changes in them. */
  ambient?: AmbientIndex;
  /** ENABLE_XDS_API_GENERATOR_AUTH. */
  apiAuth: boolean;
  debugAuth: DebugAuthOptions;
  /** The chain on the TLS port (security/authn's buildAuthenticators); default the client certificate alone. */
  authenticators?: readonly Authenticator[];
  /** The CA: with it, IstioCertificateService is served on the TLS port (as istiod, 15012 only). */
  ca?: CertificateAuthority;
  /** CA_TRUSTED_NODE_ACCOUNTS' node authorizer: node proxies asking the CA for the pods on their node. */
  nodeAuthorizer?: NodeAuthorizer;
  /** ISTIO_MULTIROOT_MESH: PCDS sends the CA's trust bundle (default false: PCDS answers nothing). */
  multiRootMesh?: boolean;
  /** Generator plugin modules (`--plugin`). */
  plugins: readonly string[];
  listen: ListenOptions;
  /** Told of proxies connecting and disconnecting (WorkloadEntry auto-registration). */
  connectionHooks?: ConnectionHooks;
  metrics?: Registry;
  log: Logger;
}

export interface Discovery {
  server: XdsServer<PushSnapshot>;
  ports: BoundPorts;
  /** The xDS cache the generators build with; /debug/cachez shows it. */
  cache: XdsCache;
  /** The endpoints served over `istio.io/debug`; the admin server registers its handlers here. */
  debugEndpoints: DebugEndpoints;
  /** Pushes everything to every proxy, rebuilt, for a change the store does not hold (the mesh config). */
  pushAll(reason: TriggerReason): void;
  /** Stops pushing, then closes the ports and ends every stream (they reconnect elsewhere). */
  stop(graceMs?: number): Promise<void>;
}

export async function startDiscovery(options: DiscoveryOptions): Promise<Discovery> {
  const { log } = options;
  const generators = new GeneratorRegistry<PushSnapshot>();
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
  const addresses = workloadGenerator(options.ambient);
  generators.register(TypeUrl.Address, addresses);
  generators.register(TypeUrl.Workload, addresses);
  generators.register(TypeUrl.WorkloadAuthorization, workloadAuthorizationGenerator(options.ambient));
  const secrets = storeSecrets(options.store);
  if (options.endpoints) {
    generators.register(TypeUrl.Cluster, cdsGenerator(options.endpoints, cache));
    generators.register(TypeUrl.Endpoint, edsGenerator(options.endpoints, cache));
    generators.register(TypeUrl.Listener, ldsGenerator(options.endpoints, cache));
    generators.register(TypeUrl.Route, rdsWithVhdsGenerator(rdsGenerator(cache), cache));
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
    onQuiet: () => cache.dropAtRest(),
    initialPush: options.initialPush,
    pushConcurrency: options.pushThrottle,
    authenticators: options.authenticators ?? [new ClientCertAuthenticator()],
    proxyNeedsPush,
    connectionHooks: options.connectionHooks,
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
        nodeAuthorizer: options.nodeAuthorizer,
        log: log.child({ component: "ca" }),
        metrics: options.metrics ? new CaMetrics(options.metrics, options.ca) : undefined,
      }),
    );
  }
  const ports = await server.listen(options.listen);
  const pipeline = new PushPipeline({
    store: options.store,
    services: options.endpoints,
    server,
    build: options.build,
    sameState: (previous, next) => sameKeptInputs(previous.snapshot.inputs, next.snapshot.inputs),
    countServices: options.countServices,
    debounce: options.debounce,
    domainSuffix: options.domainSuffix,
    metrics: options.metrics ? new PipelineMetrics(options.metrics) : undefined,
    log: log.child({ component: "push" }),
  });
  pipeline.start();
  const stopAddressPushes = options.ambient?.onAddressesChanged((names, waypoints) =>
    pipeline.pushAddresses(names, waypoints),
  );
  const stopPolicyPushes = options.ambient?.onPoliciesChanged((names) => pipeline.pushPolicies(names));
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
    pushAll: (reason) => pipeline.pushAll(reason),
    async stop(graceMs) {
      stopPatchErrors();
      stopAddressPushes?.();
      stopPolicyPushes?.();
      pipeline.stop();
      await server.close(graceMs);
    },
  };
}
