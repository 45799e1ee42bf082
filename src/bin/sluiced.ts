// sluiced: the control plane (Istio's istiod). Flags and start-up only.
// It loads the mesh config, fills the config store from the config directory (watched), a cluster
// (--kubeconfig) and MeshConfig xds:// config sources, then serves ADS on --grpcAddr and
// --secureGRPCAddr, pushing every change through the debounced push pipeline.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { setFlagsFromString } from "node:v8";
import type { KubeConfig } from "@kubernetes/client-node";
import { Registry } from "prom-client";
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import {
  parseListenAddress,
  registerManagedClusters,
  registerRemoteSyncTimeouts,
  startAdminServer,
  startControlZ,
} from "../admin/index.ts";
import { rejectUnknownCommandLineFlags } from "../cli/flags.ts";
import {
  type ConfigObject,
  KINDS,
  kindEnabled,
  kindKey,
  loadMeshNetworks,
  type MeshConfig,
  type MeshNetworks,
  MeshWatcher,
  parseGoDuration,
} from "../config/index.ts";
import type { RemoteClusters, ServingCluster, TagWatcher, WorkloadAutoRegistration } from "../controllers/index.ts";
import { GatewayStatusWriter } from "../gatewayapi/index.ts";
import { IngressFollower } from "../ingress/index.ts";
import { DebugRegistry } from "../krt/index.ts";
import { LogScopes, parseOutputLevels } from "../log/index.ts";
import { type MeshPush, pushFeaturesFromEnv } from "../model/index.ts";
import { storeAmbientIndex, storeGatewayConversion, storePush, storeRegistry } from "../model/store-push.ts";
import type { ServiceRegistry } from "../registry/index.ts";
import { authenticatorEnv, buildAuthenticators } from "../security/authn/index.ts";
import {
  type CaSecretStore,
  type CertificateAuthority,
  caSettingsFromEnv,
  createIstioCa,
  FileCaStore,
  IstiodCertificate,
  istiodDnsNames,
  NodeAuthorizer,
  parseTrustedNodeAccounts,
} from "../security/ca/index.ts";
import {
  ConfigStore,
  DEFAULT_MAX_FILE_BYTES,
  FileSource,
  watchTextFile,
  XdsSource,
  type XdsSourceTls,
} from "../sources/index.ts";
import type { KubeClient, KubeSource } from "../sources/kube/index.ts";
import { envBool } from "../util/index.ts";
import { buildInfoString } from "../util/version.ts";
import {
  InjectionSettingsWatcher,
  nativeSidecarModeFromEnv,
  startWebhookServer,
  type WebhookServer,
} from "../webhooks/index.ts";
import {
  type Discovery,
  type DiscoveryOptions,
  maxReceiveMessageBytesFromEnv,
  pushThrottleFromEnv,
  startDiscovery,
  type TlsFiles,
  type TlsProviders,
} from "../xds/index.ts";

/** Istio's environment settings, read as istiod reads them. */
const env = process.env;
const envFlag = (name: string, fallback: boolean) => envBool(env, name, fallback);
/** An ambient feature flag: istiod's registerAmbient reads it only with PILOT_ENABLE_AMBIENT, else it is off. */
const ambientFlag = (name: string, withAmbient: boolean) =>
  envFlag("PILOT_ENABLE_AMBIENT", false) && envFlag(name, withAmbient);
/**
 * The kinds read from a cluster: those whose istiod flag is on, and not ServiceAccounts, which istiod's RBAC
 * does not read either (no analyzer needs them).
 */
const CLUSTER_KINDS = KINDS.filter(
  (kind) => !(kind.group === "" && kind.kind === "ServiceAccount") && kindEnabled(kind, (flag) => envFlag(flag, false)),
);

const argv = yargs(hideBin(process.argv))
  .scriptName("sluiced")
  .env("SLUICE")
  .option("configDir", {
    type: "string",
    describe: "Directory of Istio/Gateway API/Kubernetes YAML to serve (watched)",
  })
  .option("configFileMaxBytes", {
    type: "number",
    default: DEFAULT_MAX_FILE_BYTES,
    describe: "Largest file of --configDir that is read; a larger one is reported and its last good objects stay",
  })
  .option("kubeconfig", { type: "string", describe: "kubeconfig file of a cluster to take config and workloads from" })
  .option("meshConfig", { type: "string", describe: "MeshConfig YAML file (Istio's defaults when absent)" })
  .option("networksConfig", {
    type: "string",
    alias: "meshNetworks",
    describe: "MeshNetworks YAML file: endpoint networks and their gateways (multi-network EDS)",
  })
  .option("domain", { type: "string", default: "cluster.local", describe: "DNS domain suffix of the cluster" })
  .option("grpcAddr", { type: "string", default: ":15010", describe: "Plaintext ADS address; empty to disable" })
  .option("secureGRPCAddr", {
    type: "string",
    default: ":15012",
    describe: "TLS ADS address (needs --tlsCertFile and --tlsKeyFile); empty to disable",
  })
  .option("tlsCertFile", { type: "string", describe: "Server certificate (PEM) of the secure port" })
  .option("tlsKeyFile", { type: "string", describe: "Server private key (PEM) of the secure port" })
  .option("caCertFile", {
    type: "string",
    describe: "Roots that client certificates on the secure port are verified against",
  })
  .option("monitoringAddr", {
    type: "string",
    default: ":15014",
    describe: "HTTP address of /metrics, /version and the debug endpoints; empty: they move to --httpAddr",
  })
  .option("httpAddr", {
    type: "string",
    default: ":8080",
    describe: "HTTP address of /ready and the debug endpoints; empty to disable",
  })
  .option("profile", { type: "boolean", default: true, describe: "CPU and heap profiles under /debug/pprof/" })
  .option("httpsAddr", {
    type: "string",
    default: ":15017",
    describe: "HTTPS address of the admission webhooks (/validate, /inject); empty to disable",
  })
  .option("injectionValuesFile", {
    type: "string",
    describe: "Istio's injector values (YAML: global.*, sidecarInjectorWebhook.*) for /inject (followed)",
  })
  .option("injectionConfigFile", {
    type: "string",
    describe:
      "Istio's injector config (YAML: policy, selectors, injectedAnnotations, defaultTemplates, aliases) for /inject (followed)",
  })
  .option("caDir", {
    type: "string",
    describe: "Directory keeping the self-signed root CA across restarts (file mode; in-memory when absent)",
  })
  .option("cacertsDir", {
    type: "string",
    describe: "Plugged-in CA certificates (ca-cert.pem, ca-key.pem, root-cert.pem, cert-chain.pem); ROOT_CA_DIR",
  })
  .option("clusterID", { type: "string", default: env.CLUSTER_ID ?? "Kubernetes", describe: "This cluster's ID" })
  .option("plugin", {
    type: "string",
    array: true,
    default: [] as string[],
    describe: "Generator plugin module (repeatable)",
  })
  .option("keepaliveInterval", {
    type: "string",
    default: "30s",
    describe: "gRPC keepalive: a connection nothing was read from for this long is pinged",
  })
  .option("keepaliveTimeout", {
    type: "string",
    default: "10s",
    describe: "gRPC keepalive: a pinged connection silent for this long is closed",
  })
  .option("keepaliveMaxServerConnectionAge", {
    type: "string",
    describe: "Close connections older than this so clients rebalance across replicas (default: never)",
  })
  .option("debounceAfter", {
    type: "string",
    default: env.PILOT_DEBOUNCE_AFTER ?? "100ms",
    describe: "Quiet period before a push (PILOT_DEBOUNCE_AFTER)",
  })
  .option("debounceMax", {
    type: "string",
    default: env.PILOT_DEBOUNCE_MAX ?? "10s",
    describe: "Longest a change waits for a push (PILOT_DEBOUNCE_MAX)",
  })
  .option("enableEdsDebounce", {
    type: "boolean",
    default: envFlag("PILOT_ENABLE_EDS_DEBOUNCE", true),
    describe: "Debounce endpoint-only pushes too (PILOT_ENABLE_EDS_DEBOUNCE)",
  })
  .option("ctrlz_port", {
    type: "number",
    default: 9876,
    describe: "Port of ControlZ (logging scopes, `sluice admin log`); -1 to disable",
  })
  .option("ctrlz_address", {
    type: "string",
    default: "localhost",
    describe: "Address ControlZ listens on; * for every address",
  })
  .option("log_output_level", {
    type: "string",
    default: "default:info",
    describe: "Istio's <scope>:<level>,... (levels none|fatal|error|warn|info|debug; scope all overrides)",
  })
  .check((a) => {
    parseOutputLevels(a.log_output_level);
    if (!(Number.isSafeInteger(a.configFileMaxBytes) && a.configFileMaxBytes > 0)) {
      throw new Error(`--configFileMaxBytes must be a positive whole number of bytes, got ${a.configFileMaxBytes}`);
    }
    return true;
  })
  // Not .strict(): it would also reject SLUICE_* variables meant for other tools; check only the command line.
  .check(rejectUnknownCommandLineFlags(hideBin(process.argv)), true)
  .help()
  .parseSync();

/** What each of sluiced's logging scopes covers, as ControlZ (`sluice admin log`) lists them. */
const SCOPE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  default: "Unscoped logging messages.",
  admin: "The monitoring and debug HTTP server",
  ads: "ADS: the xDS server, its streams and pushes",
  ca: "The certificate authority and istiod's certificate",
  config: "Config loading and validation",
  gateway: "Gateway API status",
  ingress: "Kubernetes Ingress conversion and status",
  "ip-autoallocate": "ServiceEntry IP address allocation",
  kube: "The Kubernetes config source",
  leader: "Leader election",
  mesh: "Mesh config",
  namespace: "The root certificate in every namespace",
  webhooks: "The injection and validation webhooks",
  wle: "WorkloadEntry auto-registration",
};
const logScopes = new LogScopes("sluiced", parseOutputLevels(argv.log_output_level), "info", SCOPE_DESCRIPTIONS);
const log = logScopes.root;
/** A logger for one of Istio's scopes (ads, ca, kube, ...), at the level --log_output_level gives it. */
const scoped = (scope: string) => logScopes.logger(scope);

/** A Go duration flag in milliseconds. */
function durationMs(flag: string, value: string): number {
  const parsed = parseGoDuration(value);
  if ("error" in parsed) throw new Error(`--${flag}: ${parsed.error}`);
  return parsed.ms;
}

/** PILOT_ANALYSIS_INTERVAL; as istiod, 10 s when it is under a second or not a duration. */
function analysisIntervalMs(): number {
  const value = env.PILOT_ANALYSIS_INTERVAL ?? "10s";
  const parsed = parseGoDuration(value);
  if (!("error" in parsed) && parsed.ms >= 1000) return parsed.ms;
  log.warn({ PILOT_ANALYSIS_INTERVAL: value }, "not a duration of a second or more: 10s is used");
  return 10_000;
}

/** PILOT_WORKLOAD_ENTRY_GRACE_PERIOD, a Go duration; default 10 s as istiod. */
function workloadEntryGraceMs(): number {
  const value = env.PILOT_WORKLOAD_ENTRY_GRACE_PERIOD ?? "10s";
  const parsed = parseGoDuration(value);
  if ("error" in parsed) throw new Error(`PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: ${parsed.error}`);
  return parsed.ms;
}

/** What start-up started, to be stopped on shutdown (in reverse order). */
interface Running {
  stop(): Promise<void> | void;
}

/** The Kubernetes source's module (imported only with a cluster) and the client controllers share. */
interface ClusterAccess {
  kube: typeof import("../sources/kube/index.ts");
  client: KubeClient;
}

/** A ConfigMap of istiod's revision: `base` for the default revision, else `base-<REVISION>`. */
function revisionedName(base: string): string {
  const revision = env.REVISION ?? "";
  return revision === "" || revision === "default" ? base : `${base}-${revision}`;
}

/** Where the mesh config and the mesh networks come from, each followed as it changes. */
interface MeshSource {
  watcher: MeshWatcher;
  /** The file or ConfigMap read, for logs. */
  from: string;
  /** meshNetworks YAML at start (--networksConfig, or the ConfigMap's meshNetworks key). */
  networks: string | undefined;
  /** Where the mesh networks come from, for logs. */
  networksFrom: string;
  /** Tells `listener` the meshNetworks YAML each time it changes. */
  onNetworksChange(listener: (text: string | undefined) => void): void;
}

/**
 * The mesh config as istiod finds it: the --meshConfig file, else (with a cluster) the `mesh` key of
 * the ConfigMap `istio` (`istio-<REVISION>`) in POD_NAMESPACE, else Istio's defaults; the file or
 * ConfigMap is followed, and a change that does not load is logged and changes nothing.
 */
async function startMeshSource(cluster: ClusterAccess | undefined, running: Running[]): Promise<MeshSource> {
  const meshLog = scoped("mesh");
  const follow = (watcher: MeshWatcher, from: string) => (text: string | undefined) => {
    const update = watcher.update(text);
    if ("error" in update)
      meshLog.error({ from, err: update.error.message }, "mesh config not changed: it does not load");
    else if (update.changed) {
      for (const warning of update.warnings) meshLog.warn({ from }, warning);
      meshLog.info({ from }, "mesh config changed");
    }
  };
  // The mesh networks' listener comes once the registry exists; changes before then are the start's.
  let networksListener: (text: string | undefined) => void = () => {};
  const onNetworksChange = (listener: (text: string | undefined) => void) => {
    networksListener = listener;
  };
  const networksFile = argv.networksConfig ? readFileSync(argv.networksConfig, "utf8") : undefined;
  if (argv.networksConfig) {
    const watch = watchTextFile(argv.networksConfig, (text) => networksListener(text), { initial: networksFile });
    running.push({ stop: () => watch.close() });
  }
  const fileSource = { networks: networksFile, networksFrom: argv.networksConfig ?? "none", onNetworksChange };
  if (argv.meshConfig) {
    const text = readFileSync(argv.meshConfig, "utf8");
    const watcher = new MeshWatcher(text);
    const watch = watchTextFile(argv.meshConfig, follow(watcher, argv.meshConfig), { initial: text });
    running.push({ stop: () => watch.close() });
    return { watcher, from: argv.meshConfig, ...fileSource };
  }
  if (!cluster) return { watcher: new MeshWatcher(), from: "defaults", ...fileSource };
  const at = { namespace: env.POD_NAMESPACE ?? "istio-system", name: revisionedName("istio") };
  const from = `ConfigMap ${at.namespace}/${at.name}`;
  const texts = await cluster.kube.readConfigMapKeys(cluster.client, at.namespace, at.name, ["mesh", "meshNetworks"]);
  const watcher = new MeshWatcher(texts.mesh);
  const followMesh = follow(watcher, from);
  let networks = texts.meshNetworks;
  const watch = cluster.kube.watchConfigMapKeys(
    cluster.client,
    // --networksConfig wins over the ConfigMap's meshNetworks, as istiod's file does.
    { ...at, keys: argv.networksConfig ? ["mesh"] : ["mesh", "meshNetworks"] },
    texts,
    (next) => {
      followMesh(next.mesh);
      if (!argv.networksConfig && next.meshNetworks !== networks) {
        networks = next.meshNetworks;
        networksListener(networks);
      }
    },
    meshLog,
  );
  running.push(watch);
  if (argv.networksConfig) return { watcher, from, ...fileSource };
  return { watcher, from, networks: texts.meshNetworks, networksFrom: from, onNetworksChange };
}

/**
 * Follows the mesh networks: a change that loads is in force in the registry and pushed to every
 * proxy (endpoints' networks and network gateways); one that does not is logged and changes nothing.
 */
function followMeshNetworks(source: MeshSource, registry: ServiceRegistry, pushAll: () => void): void {
  const meshLog = scoped("mesh");
  source.onNetworksChange((text) => {
    let networks: MeshNetworks;
    try {
      networks = loadMeshNetworks(text);
    } catch (err) {
      meshLog.error(
        { from: source.networksFrom, err: (err as Error).message },
        "mesh networks not changed: they do not load",
      );
      return;
    }
    registry.setMeshNetworks(networks);
    meshLog.info({ from: source.networksFrom }, "mesh networks changed");
    pushAll();
  });
}

/**
 * Push contexts of the config store: the service registry as krt collections over the store, and
 * the model's indexed snapshot built from it and the objects in force at push time.
 */
function pushContexts(
  store: ConfigStore,
  meshes: MeshWatcher,
  networks: string | undefined,
  domainSuffix: string,
  krt: DebugRegistry,
) {
  // The registry takes the trust domain and root namespace in force at start; a push, the config now.
  const registry = storeRegistry(store, meshes.mesh, domainSuffix, {
    meshNetworks: loadMeshNetworks(networks),
    clusterId: argv.clusterID,
  });
  // Ambient's index, with PILOT_ENABLE_AMBIENT as istiod (off by default: WDS then answers nothing).
  const ambient = envFlag("PILOT_ENABLE_AMBIENT", false)
    ? storeAmbientIndex(store, {
        clusterId: argv.clusterID,
        domainSuffix,
        systemNamespace: env.POD_NAMESPACE ?? "istio-system",
        trustDomain: meshes.mesh.trustDomain ?? "cluster.local",
        rootNamespace: () => meshes.mesh.rootNamespace ?? "istio-system",
        dryRunPolicies: envFlag("AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY", false),
        allowFromWaypoint: envFlag("PILOT_AUTO_ALLOW_WAYPOINT_POLICY", false),
        status: envFlag("AMBIENT_ENABLE_STATUS", true),
        log: scoped("ambient"),
        debug: krt,
      })
    : undefined;
  const features = pushFeaturesFromEnv(env);
  // Waypoint proxies read the ambient index live, as istiod's push context does.
  const build = (previous?: MeshPush) =>
    storePush(store, registry, meshes.mesh, domainSuffix, previous, features, ambient);
  return { build, registry, ambient, countServices: (push: MeshPush) => push.snapshot.services.all.length };
}

/** The xds:// config sources of the mesh config (Istio's configSources); other schemes are not served. */
function configSources(mesh: MeshConfig, store: ConfigStore): XdsSource[] {
  const sources: XdsSource[] = [];
  for (const configSource of mesh.configSources ?? []) {
    const address = configSource.address ?? "";
    const url = URL.canParse(address) ? new URL(address) : undefined;
    if (url?.protocol !== "xds:") {
      log.warn({ address }, "config source ignored: only xds:// config sources are supported");
      continue;
    }
    sources.push(
      new XdsSource({
        address: url.host,
        writer: store,
        namespace: mesh.rootNamespace ?? "istio-system",
        tls: sourceTls(configSource.tlsSettings),
        log: scoped("config").child({ source: "xds", address: url.host }),
      }),
    );
  }
  return sources;
}

/** Client TLS of a config source: SIMPLE or MUTUAL with PEM file paths, as Istio's ClientTLSSettings. */
function sourceTls(settings: Record<string, unknown> | undefined): XdsSourceTls | undefined {
  if (settings?.mode !== "SIMPLE" && settings?.mode !== "MUTUAL") return undefined;
  const file = (key: string) => (typeof settings[key] === "string" ? readFileSync(settings[key]) : undefined);
  return {
    caCertificates: file("caCertificates"),
    clientCertificate: file("clientCertificate"),
    privateKey: file("privateKey"),
  };
}

/**
 * The TLS of the secure port: the certificate files when given, else a certificate from the CA (as
 * istiod's self-signed DNS certificate); undefined (logged) when the port is disabled.
 */
function secureTls(istiodCertificate: IstiodCertificate | undefined): TlsFiles | TlsProviders | undefined {
  if (!argv.secureGRPCAddr) return undefined;
  if ((!argv.tlsCertFile || !argv.tlsKeyFile) && istiodCertificate) {
    return { identity: istiodCertificate, roots: istiodCertificate };
  }
  if (!argv.tlsCertFile || !argv.tlsKeyFile) {
    log.warn(
      { secureGRPCAddr: argv.secureGRPCAddr },
      'secure xDS port disabled: no server certificate (--tlsCertFile, --tlsKeyFile) and no CA (ENABLE_CA_SERVER); pass --secureGRPCAddr "" to silence this',
    );
    return undefined;
  }
  return { certFile: argv.tlsCertFile, keyFile: argv.tlsKeyFile, caFile: argv.caCertFile };
}

/**
 * Istio's CA: plugged-in certificates (--cacertsDir / ROOT_CA_DIR) or a self-signed root kept in
 * --caDir, the cluster's istio-ca-secret, or memory; plus istiod's own serving certificate from it.
 */
async function startCa(mesh: MeshConfig, kubeConfig: KubeConfig | undefined, running: Running[]) {
  const settings = caSettingsFromEnv(env);
  const namespace = env.POD_NAMESPACE ?? "istio-system";
  let store: CaSecretStore | undefined;
  if (argv.caDir) store = new FileCaStore(argv.caDir);
  else if (kubeConfig) {
    const { KubeCaSecretStore } = await import("../security/ca/kube-store.ts");
    store = new KubeCaSecretStore(kubeConfig, namespace);
  }
  const istioCa = await createIstioCa({
    ...settings,
    cacertsDir: argv.cacertsDir ?? settings.cacertsDir,
    trustDomain: mesh.trustDomain ?? "cluster.local",
    store,
    log: scoped("ca"),
  });
  running.push({ stop: () => istioCa.stop() });
  log.info({ kind: istioCa.kind, store: store?.location ?? "memory" }, "CA ready");
  const dnsNames = istiodDnsNames({
    namespace,
    revision: env.REVISION,
    customHosts: (env.ISTIOD_CUSTOM_HOST ?? "").split(",").filter((host) => host !== ""),
  });
  const istiodCertificate = await IstiodCertificate.issue(istioCa.ca, dnsNames, {
    log: scoped("ca"),
  });
  return { ca: istioCa.ca, istiodCertificate };
}

/**
 * CA_TRUSTED_NODE_ACCOUNTS: the node proxies (ztunnel) that may ask the CA for the identities of the
 * pods on their node, found among the store's Pods; none (Istio's default) refuses every such request.
 */
function nodeAuthorizer(store: ConfigStore): NodeAuthorizer | undefined {
  const { accounts, invalid } = parseTrustedNodeAccounts(env.CA_TRUSTED_NODE_ACCOUNTS);
  for (const entry of invalid) scoped("ca").warn(`Invalid CA_TRUSTED_NODE_ACCOUNTS, ignoring: ${entry}`);
  if (accounts.length === 0) return undefined;
  scoped("ca").info({ accounts: accounts.map((a) => `${a.namespace}/${a.name}`) }, "CA: node authorizer on");
  return new NodeAuthorizer(accounts, store.collection(kindKey("", "Pod")));
}

/**
 * ControlZ's logging scopes on --ctrlz_address:--ctrlz_port (`sluice admin log`); as in istiod, a port
 * already taken is logged and sluiced goes on without it.
 */
async function startControlZServer(running: Running[]): Promise<void> {
  if (argv.ctrlz_port < 0) return;
  try {
    const ctrlz = await startControlZ(logScopes, argv.ctrlz_address, argv.ctrlz_port);
    running.push(ctrlz);
    log.info({ ctrlzPort: ctrlz.port }, "ControlZ listening");
  } catch (err) {
    log.error({ err: (err as Error).message }, "ControlZ not started");
  }
}

/** What a controller run by a Lease's holder is: started on winning it, stopped on losing it. */
interface Controller {
  start(): void;
  stop(): void;
}

/** An election as istiod runs it: prioritized (the default revision takes it over), or one per revision. */
interface Election {
  id: string;
  /** istiod's per-revision elections: the Lease `<id>-<REVISION>`, without a holder key. */
  perRevision?: boolean;
}

/**
 * Runs the controller `make` builds while this replica holds the Lease of `election` in the system
 * namespace (identity POD_NAME), as istiod runs its single-writer controllers; with
 * PILOT_ENABLE_LEADER_ELECTION=false every replica runs it. A prioritized election's Lease carries
 * this revision as its holder key, and the default tag's revision takes it from other revisions.
 */
async function whileLeading(
  election: Election,
  client: KubeClient,
  tags: TagWatcher,
  make: () => Controller,
  running: Running[],
) {
  if (!envFlag("PILOT_ENABLE_LEADER_ELECTION", true)) {
    const controller = make();
    controller.start();
    running.push(controller);
    return;
  }
  const { defaultRevisionPreempts, LeaseElection } = await import("../controllers/index.ts");
  const revision = env.REVISION || "default";
  const lease = new LeaseElection({
    client,
    namespace: env.POD_NAMESPACE ?? "istio-system",
    name: election.perRevision ? `${election.id}-${revision}` : election.id,
    identity: env.POD_NAME || `unknown-${hostname()}`,
    ...(election.perRevision
      ? {}
      : { key: revision, preempts: defaultRevisionPreempts(revision, () => tags.defaultTagRevision()) }),
    run: (signal) => {
      const controller = make();
      controller.start();
      signal.addEventListener("abort", () => controller.stop());
    },
    log: scoped("leader"),
  });
  lease.start();
  running.push(lease);
}

/**
 * Which revision tags name this revision, and which is the default revision (istiod's tag watcher):
 * whose Gateways and statuses are this revision's, and who wins prioritized elections.
 */
async function startTagWatcher(client: KubeClient, running: Running[]): Promise<TagWatcher> {
  const { TagWatcher } = await import("../controllers/index.ts");
  const tags = new TagWatcher({
    client,
    revision: env.REVISION || "default",
    systemNamespace: env.POD_NAMESPACE ?? "istio-system",
    log: scoped("tag-watcher"),
  });
  tags.start();
  running.push(tags);
  return tags;
}

/** The CA's roots in every namespace's istio-ca-root-cert ConfigMap (Istio's namespace controller). */
async function startRootCertPublisher(
  store: ConfigStore,
  client: KubeClient,
  tags: TagWatcher,
  ca: CertificateAuthority,
  running: Running[],
): Promise<void> {
  const { ELECTION_IDS, RootCertPublisher } = await import("../controllers/index.ts");
  const make = () =>
    new RootCertPublisher({
      client,
      namespaces: store.collection(kindKey("", "Namespace")),
      configMaps: store.collection(kindKey("", "ConfigMap")),
      rootCert: () => ca.bundle.rootCertPem,
      onRootCertChange: (listener) => ca.onBundleChange(listener),
      configMapName: env.PILOT_CA_CERT_CONFIGMAP,
      log: scoped("namespace"),
    });
  await whileLeading({ id: ELECTION_IDS.namespaceController }, client, tags, make, running);
}

/**
 * The Deployments, Services and ServiceAccounts of the Gateways of class `istio` (and, with ambient, the
 * waypoints and east-west gateways), made by the holder of
 * istiod's per-revision Lease istio-gateway-deployment-<REVISION>.
 */
async function startGatewayDeployments(
  store: ConfigStore,
  source: string,
  client: KubeClient,
  tags: TagWatcher,
  meshes: MeshWatcher,
  injection: InjectionSettingsWatcher,
  running: Running[],
): Promise<void> {
  const { ELECTION_IDS, GatewayDeploymentController } = await import("../controllers/index.ts");
  const make = () =>
    new GatewayDeploymentController({
      client,
      store,
      source,
      mesh: () => meshes.mesh,
      onMeshChange: (listener) => meshes.onChange(listener),
      injection: () => injection.settings,
      onInjectionChange: (listener) => injection.onChange(listener),
      revision: env.REVISION || "default",
      tags,
      systemNamespace: env.POD_NAMESPACE ?? "istio-system",
      clusterId: argv.clusterID,
      copyLabelsAnnotations: envFlag("PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS", true),
      ambientWaypoints: ambientFlag("PILOT_ENABLE_AMBIENT_WAYPOINTS", true),
      ambientMultiNetwork: ambientFlag("AMBIENT_ENABLE_MULTI_NETWORK", false),
      log: scoped("gateway"),
    });
  await whileLeading({ id: ELECTION_IDS.gatewayDeployment, perRevision: true }, client, tags, make, running);
}

/**
 * The caBundle of this revision's webhook configurations kept to the CA of istiod's certificate, which
 * the webhooks serve with (INJECTION_WEBHOOK_CONFIG_NAME / VALIDATION_WEBHOOK_CONFIG_NAME "" turn each off).
 */
async function startWebhookPatcher(
  client: KubeClient,
  istiodCertificate: IstiodCertificate,
  running: Running[],
): Promise<void> {
  const { WebhookPatcher } = await import("../controllers/index.ts");
  const patcher = new WebhookPatcher({
    client,
    revision: env.REVISION,
    caBundle: () => istiodCertificate.current.caBundlePem,
    // The certificate is reissued whenever the CA's roots change.
    onCaBundleChange: (listener) => {
      istiodCertificate.addCaCertificateListener(listener);
      return () => istiodCertificate.removeCaCertificateListener(listener);
    },
    namespace: env.POD_NAMESPACE ?? "istio-system",
    mutating: (env.INJECTION_WEBHOOK_CONFIG_NAME ?? "istio-sidecar-injector") !== "",
    validating: (env.VALIDATION_WEBHOOK_CONFIG_NAME ?? "istio-istio-system") !== "",
    log: scoped("webhooks"),
  });
  patcher.start();
  running.push(patcher);
}

/**
 * The injection settings as istiod finds them: the --injectionConfigFile and --injectionValuesFile
 * files, else with a cluster the `config` and `values` keys of the ConfigMap istio-sidecar-injector
 * (`istio-sidecar-injector-<REVISION>`) in POD_NAMESPACE, else Istio's defaults; the files or the
 * ConfigMap are followed, and a text that does not parse is logged and changes nothing.
 */
async function startInjectionSettings(
  cluster: ClusterAccess | undefined,
  running: Running[],
): Promise<InjectionSettingsWatcher> {
  const options = { revision: env.REVISION ?? "", log: scoped("webhooks") };
  const files = { config: argv.injectionConfigFile, values: argv.injectionValuesFile };
  if (files.config || files.values) {
    const read = (path: string | undefined) => (path ? readFileSync(path, "utf8") : undefined);
    const texts = { config: read(files.config), values: read(files.values) };
    const from = { config: files.config ?? "no injection config file", values: files.values ?? "no values file" };
    const watcher = new InjectionSettingsWatcher(texts, { ...options, from });
    for (const key of ["config", "values"] as const) {
      const path = files[key];
      if (!path) continue;
      const watch = watchTextFile(path, (text) => watcher.update({ [key]: text }), { initial: texts[key] });
      running.push({ stop: () => watch.close() });
    }
    return watcher;
  }
  if (!cluster)
    return new InjectionSettingsWatcher(
      { config: undefined, values: undefined },
      { ...options, from: { config: "defaults", values: "defaults" } },
    );
  const at = { namespace: env.POD_NAMESPACE ?? "istio-system", name: revisionedName("istio-sidecar-injector") };
  const keys = ["config", "values"] as const;
  const texts = await cluster.kube.readConfigMapKeys(cluster.client, at.namespace, at.name, keys);
  const configMap = `ConfigMap ${at.namespace}/${at.name}`;
  const from = { config: `${configMap} key config`, values: `${configMap} key values` };
  const watcher = new InjectionSettingsWatcher({ config: texts.config, values: texts.values }, { ...options, from });
  if (texts.config === undefined && texts.values === undefined) {
    options.log.info({ configMap }, "no injection config or values: Istio's defaults until the ConfigMap has them");
  }
  const watch = cluster.kube.watchConfigMapKeys(
    cluster.client,
    { ...at, keys },
    texts,
    (next) => watcher.update({ config: next.config, values: next.values }),
    options.log,
  );
  running.push(watch);
  return watcher;
}

/**
 * The admission webhooks on --httpsAddr, with the --tlsCertFile certificate or istiod's from the CA
 * (followed as it is reissued); undefined (logged) without either.
 */
async function startWebhooks(
  meshes: MeshWatcher,
  store: ConfigStore,
  istiodCertificate: IstiodCertificate | undefined,
  ready: () => boolean,
  metrics: Registry,
  cluster: ClusterAccess | undefined,
  injection: InjectionSettingsWatcher,
  running: Running[],
): Promise<WebhookServer | undefined> {
  const files =
    argv.tlsCertFile && argv.tlsKeyFile
      ? { cert: readFileSync(argv.tlsCertFile), key: readFileSync(argv.tlsKeyFile) }
      : undefined;
  const pem =
    files ??
    (istiodCertificate && { cert: istiodCertificate.current.certChainPem, key: istiodCertificate.current.keyPem });
  if (!pem) {
    log.warn(
      { httpsAddr: argv.httpsAddr },
      'webhooks disabled: no certificate (--tlsCertFile or the CA); pass --httpsAddr "" to silence this',
    );
    return undefined;
  }
  const { host, port } = parseListenAddress(argv.httpsAddr);
  const webhooks = await startWebhookServer({
    ...pem,
    host,
    port,
    mesh: () => meshes.mesh,
    injection: () => injection.settings,
    nativeSidecarMode: nativeSidecarModeFromEnv(),
    nodes: () => store.collection(kindKey("", "Node")).list(),
    proxyConfigs: () => store.collection(kindKey("networking.istio.io", "ProxyConfig")).list(),
    validation: { domain: argv.domain },
    metrics,
    ready,
    log: scoped("webhooks"),
  });
  if (!files && istiodCertificate) {
    istiodCertificate.addIdentityCertificateListener((update) => {
      if (update) webhooks.updateCertificate(update.certificate, update.privateKey);
    });
    if (cluster) await startWebhookPatcher(cluster.client, istiodCertificate, running);
  }
  log.info({ httpsAddr: argv.httpsAddr, port: webhooks.port }, "webhooks listening");
  return webhooks;
}

/**
 * The multicluster secret controller over the config cluster's Secrets in POD_NAMESPACE (started once
 * discovery serves, so that a cluster joining pushes).
 */
async function remoteClusters(
  store: ConfigStore,
  registry: ServiceRegistry,
  meshes: MeshWatcher,
  metrics: Registry,
  onCount: ((remote: number) => void) | undefined,
  ca: CertificateAuthority | undefined,
): Promise<RemoteClusters> {
  const { RemoteClusters } = await import("../controllers/index.ts");
  // istiod leads the namespace controller of a remote cluster only as an external control plane, and
  // only where it publishes the roots in its own cluster.
  const whileServing = ca && envFlag("EXTERNAL_ISTIOD", false) ? await remoteNamespaceController(ca) : undefined;
  return new RemoteClusters({
    secrets: store.collection(kindKey("", "Secret")),
    namespace: env.POD_NAMESPACE ?? "istio-system",
    registry,
    discoverySelectors: () => meshes.mesh.discoverySelectors ?? [],
    onCount,
    // Each remote cluster's own mesh config (its trust domain), named as the config cluster's.
    meshConfigMap: revisionedName("istio"),
    syncTimeoutMs: remoteClusterTimeoutMs(),
    onSyncTimeout: registerRemoteSyncTimeouts(metrics),
    ...(whileServing ? { whileServing } : {}),
    log: scoped("multicluster"),
  });
}

/** PILOT_REMOTE_CLUSTER_TIMEOUT: 30 s unless set; 0 waits for remote clusters without limit; not a duration: the default, as istiod. */
function remoteClusterTimeoutMs(): number {
  const value = env.PILOT_REMOTE_CLUSTER_TIMEOUT;
  if (value === undefined || value === "") return 30_000;
  const parsed = parseGoDuration(value);
  if ("error" in parsed) {
    log.warn({ PILOT_REMOTE_CLUSTER_TIMEOUT: value, reason: parsed.error }, "not a duration: 30s used");
    return 30_000;
  }
  return parsed.ms;
}

/** The namespace controller run beside each remote cluster that serves (when this replica should lead there). */
async function remoteNamespaceController(
  ca: CertificateAuthority,
): Promise<(cluster: ServingCluster) => { stop(): void }> {
  const { RemoteNamespaceController } = await import("../controllers/index.ts");
  const { KubeClient } = await import("../sources/kube/index.ts");
  return (cluster) => {
    const controller = new RemoteNamespaceController({
      clusterId: cluster.id,
      client: new KubeClient(cluster.kubeConfig),
      namespaces: cluster.store.collection(kindKey("", "Namespace")),
      systemNamespace: env.POD_NAMESPACE ?? "istio-system",
      configClusterId: argv.clusterID,
      identity: env.POD_NAME || `unknown-${hostname()}`,
      revision: env.REVISION || "default",
      leaderElection: envFlag("PILOT_ENABLE_LEADER_ELECTION", true),
      rootCert: () => ca.bundle.rootCertPem,
      onRootCertChange: (listener) => ca.onBundleChange(listener),
      configMapName: env.PILOT_CA_CERT_CONFIGMAP,
      log: scoped("namespace"),
    });
    controller.start();
    return controller;
  };
}

/** The store's changes and the remote clusters' (their endpoints), as the push pipeline follows them. */
function withRemoteChanges(store: ConfigStore, remotes: RemoteClusters): DiscoveryOptions["store"] {
  return {
    onChange: (handler) => {
      const unregister = [store.onChange(handler), remotes.onChange(handler)];
      return () => {
        for (const each of unregister) each();
      };
    },
    list: (kind) => store.list(kind),
    get: (key) => store.get(key),
  };
}

async function start(running: Running[]): Promise<void> {
  const metrics = new Registry();
  const krt = new DebugRegistry();
  // The cluster of --kubeconfig, else (no --configDir, in a pod) the pod's own through its
  // ServiceAccount, as istiod; the client is imported only then: it takes a large share of the start.
  const mayUseCluster = argv.kubeconfig !== undefined || (argv.configDir === undefined && env.KUBERNETES_SERVICE_HOST);
  const kube = mayUseCluster ? await import("../sources/kube/index.ts") : undefined;
  const kubeConfig =
    kube && (argv.kubeconfig !== undefined || kube.inCluster()) ? kube.loadKubeConfig(argv.kubeconfig) : undefined;
  // One client for every controller's reads and writes (the sources keep their own).
  const kubeClient = kube && kubeConfig ? new kube.KubeClient(kubeConfig) : undefined;
  const access = kube && kubeClient && { kube, client: kubeClient };
  const meshSource = await startMeshSource(access, running);
  const meshes = meshSource.watcher;
  // What is read only at start: the CA's trust domain, the root namespace, the xds:// config sources.
  const mesh = meshes.mesh;
  for (const warning of meshes.warnings) log.warn({ meshConfig: meshSource.from }, warning);
  log.info(
    { from: meshSource.from, trustDomain: mesh.trustDomain, rootNamespace: mesh.rootNamespace },
    "mesh config loaded",
  );
  const authenticators = await buildAuthenticators({
    trustDomain: mesh.trustDomain ?? "cluster.local",
    ...authenticatorEnv(env),
    kube: kubeConfig ? { kubeConfig, clusterId: argv.clusterID, clusterAliases: {} } : undefined,
  });
  // A bad JWT_RULE, or an issuer whose discovery fails: istiod refuses to start too.
  if (authenticators instanceof Error) throw authenticators;
  const debugAuth = {
    systemNamespace: mesh.rootNamespace ?? "istio-system",
    allowedNamespaces: (env.DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES ?? "").split(",").filter((ns) => ns !== ""),
    enabled: envFlag("ENABLE_DEBUG_ENDPOINT_AUTH", true),
  };
  // Up first and stopped last: /ready answers 503 until discovery serves.
  let discoveryReady = false;
  const admin = await startAdminServer({
    monitoringAddr: argv.monitoringAddr,
    httpAddr: argv.httpAddr,
    readiness: { discovery: () => discoveryReady },
    metrics,
    // Istio's version.Info.String(), on /version and pilot_info.
    version: buildInfoString(),
    authenticators,
    debugAuth,
    profiling: argv.profile,
    debugOnHttp: envFlag("ENABLE_DEBUG_ON_HTTP", true),
    metricsLocalhostOnly: envFlag("METRICS_LOCALHOST_ACCESS_ONLY", false),
    log: scoped("admin"),
  });
  running.push(admin);
  log.info({ monitoringPort: admin.monitoringPort, httpPort: admin.httpPort }, "admin HTTP server listening");
  await startControlZServer(running);

  // An object both in the config directory and in the cluster: the file wins.
  const store = new ConfigStore({
    sourceOrder: ["file", "kubernetes", "xds"],
    metrics,
    debug: krt,
    log: scoped("config"),
  });
  if (argv.configDir) {
    const files = new FileSource({
      dir: argv.configDir,
      store,
      maxFileBytes: argv.configFileMaxBytes,
      log: scoped("config").child({ source: "file" }),
    });
    running.push(files);
    await files.start();
  }
  let cluster: KubeSource | undefined;
  let setRemoteClusters: ((remote: number) => void) | undefined;
  if (kube && kubeConfig) {
    setRemoteClusters = registerManagedClusters(metrics);
    const events = new kube.KubeEventMetrics(metrics);
    cluster = new kube.KubeSource({
      kubeConfig,
      kinds: CLUSTER_KINDS,
      writer: store,
      discoverySelectors: mesh.discoverySelectors ?? [],
      // Config labelled istio.io/rev for another revision is not this control plane's.
      revision: env.REVISION || "default",
      onEvent: (kind, event) => events.record(kind, event),
      log: scoped("kube"),
    });
    running.push(cluster);
    log.info({ kubeconfig: argv.kubeconfig ?? "in-cluster" }, "listing the cluster");
    await cluster.start();
  }
  for (const source of configSources(mesh, store)) {
    running.push(source);
    log.info("waiting for an xds:// config source to send every kind");
    await source.start();
  }
  // Ingresses the mesh handles, as Gateways and VirtualServices in the store (source "ingress").
  const ingresses = new IngressFollower(store, {
    mesh: () => meshes.mesh,
    domainSuffix: argv.domain,
    ingressNamespace: env.K8S_INGRESS_NS,
  });
  ingresses.start();
  running.push(ingresses);

  const byKind: Record<string, number> = {};
  for (const { key } of store.list()) byKind[key.kind] = (byKind[key.kind] ?? 0) + 1;
  scoped("config").info(
    { configDir: argv.configDir, objects: store.list().length, byKind, problems: store.problems().length },
    "config loaded",
  );

  const pushes = pushContexts(store, meshes, meshSource.networks, argv.domain, krt);
  const tags = kubeClient ? await startTagWatcher(kubeClient, running) : undefined;
  if (cluster && kubeClient && tags) {
    // Gateway API statuses go back to the cluster (file-defined objects keep theirs local), written by
    // the holder of istiod's per-revision gateway status Lease for the objects of this revision's tags.
    const { ELECTION_IDS, IngressStatusWriter, IpAutoallocator } = await import("../controllers/index.ts");
    const target = cluster;
    const namespaceLabels = (name: string | undefined) => {
      const namespace = name ? store.get({ kind: kindKey("", "Namespace"), namespace: "", name }) : undefined;
      return namespace ? (namespace.object.metadata.labels ?? {}) : undefined;
    };
    // Whose statuses these are: the objects of this revision's tags (istiod's IsMine).
    const ownership = {
      owns: (obj: ConfigObject) => tags.isMine(obj.metadata, namespaceLabels(obj.metadata.namespace)),
      onOwnsChange: (listener: () => void) => tags.onChange(listener),
    };
    const make = () =>
      new GatewayStatusWriter({
        conversion: storeGatewayConversion(store, pushes.registry, argv.domain, pushFeaturesFromEnv(env)),
        store,
        target,
        ...ownership,
        log: scoped("gateway"),
      });
    await whileLeading({ id: ELECTION_IDS.gatewayStatus, perRevision: true }, kubeClient, tags, make, running);
    // Ingress statuses: the ingress gateway's addresses, written by the holder of istio-leader for the
    // Ingresses of this revision's tags.
    const makeIngressStatus = () =>
      new IngressStatusWriter({
        store,
        target,
        meshes,
        ingressNamespace: env.K8S_INGRESS_NS,
        ...ownership,
        log: scoped("ingress"),
      });
    await whileLeading({ id: ELECTION_IDS.ingress }, kubeClient, tags, makeIngressStatus, running);
    // ServiceEntry addresses in their status, written by the holder of istio-ip-autoallocate.
    if (envFlag("PILOT_ENABLE_IP_AUTOALLOCATE", true)) {
      const options = {
        store,
        target,
        ipv4Prefix: env.PILOT_IP_AUTOALLOCATE_IPV4_PREFIX,
        ipv6Prefix: env.PILOT_IP_AUTOALLOCATE_IPV6_PREFIX,
        log: scoped("ip-autoallocate"),
      };
      // Made once now so that a bad prefix stops the start, as it stops istiod's.
      new IpAutoallocator(options);
      const makeAllocator = () => new IpAutoallocator(options);
      await whileLeading({ id: ELECTION_IDS.ipAutoallocate }, kubeClient, tags, makeAllocator, running);
    }
    // Analysis messages in the Istio objects' status, written by the holder of istio-analyze-leader.
    if (envFlag("PILOT_ENABLE_ANALYSIS", false)) {
      const { AnalysisStatusWriter } = await import("../controllers/index.ts");
      const { inClusterAnalysis } = await import("../analysis/index.ts");
      const kinds = new Set(CLUSTER_KINDS.map((kind) => kindKey(kind.group, kind.kind)));
      const analysis = inClusterAnalysis(kinds, env.POD_NAMESPACE ?? "istio-system");
      const maxDelayMs = analysisIntervalMs();
      const makeAnalysisStatus = () =>
        new AnalysisStatusWriter({ store, target, analysis, maxDelayMs, log: scoped("analysis") });
      await whileLeading({ id: ELECTION_IDS.analyze }, kubeClient, tags, makeAnalysisStatus, running);
    }
    // Ambient's conditions on Services, ServiceEntries, WorkloadEntries and AuthorizationPolicies,
    // written by the holder of istio-status-leader (AMBIENT_ENABLE_STATUS).
    const reporters = pushes.ambient?.statusReporters ?? [];
    if (reporters.length > 0) {
      const { AmbientStatusWriter, storeStatusTarget } = await import("../controllers/index.ts");
      const statusTarget = storeStatusTarget(store, target);
      const makeAmbientStatus = () =>
        new AmbientStatusWriter({ reporters, target: statusTarget, log: scoped("ambient-status") });
      await whileLeading({ id: ELECTION_IDS.status }, kubeClient, tags, makeAmbientStatus, running);
    }
  }
  const needsCa = Boolean(argv.secureGRPCAddr || argv.httpsAddr) && envFlag("ENABLE_CA_SERVER", true);
  const ca = needsCa ? await startCa(mesh, kubeConfig, running) : undefined;
  // The CA whose roots are published in this cluster's namespaces (and, as istiod, in remote ones').
  const publishing = ca && kubeClient && tags ? ca.ca : undefined;
  if (publishing && kubeClient && tags) await startRootCertPublisher(store, kubeClient, tags, publishing, running);
  // Remote clusters of the multicluster secrets: their endpoints join the registry's services.
  const remotes = cluster
    ? await remoteClusters(store, pushes.registry, meshes, metrics, setRemoteClusters, publishing)
    : undefined;
  // The injector's settings: the webhooks inject with them, the Gateway deployments are made with them.
  const injection = argv.httpsAddr || cluster ? await startInjectionSettings(access, running) : undefined;
  let webhooks: WebhookServer | undefined;
  if (argv.httpsAddr && injection) {
    webhooks = await startWebhooks(
      meshes,
      store,
      ca?.istiodCertificate,
      () => discoveryReady,
      metrics,
      access,
      injection,
      running,
    );
    if (webhooks) running.push(webhooks);
  }
  // The built-in GatewayClasses, created by every replica when missing (istiod's class controller).
  if (cluster && kubeClient && envFlag("PILOT_ENABLE_GATEWAY_API_GATEWAYCLASS_CONTROLLER", true)) {
    const { GatewayClassCreator } = await import("../controllers/index.ts");
    const classes = new GatewayClassCreator({
      client: kubeClient,
      store,
      source: cluster.source,
      defaultClassName: env.PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME,
      remoteClass: envFlag("PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API", true),
      // Ambient's flags count only with PILOT_ENABLE_AMBIENT, as istiod's registerAmbient.
      waypointClass: ambientFlag("PILOT_ENABLE_AMBIENT_WAYPOINTS", true),
      eastWestClass: ambientFlag("AMBIENT_ENABLE_MULTI_NETWORK", false),
      log: scoped("gateway"),
    });
    classes.start();
    running.push(classes);
  }
  // The InferencePools' shadow Services, applied by every replica (istiod's reconciler, with the extension on).
  if (cluster && kubeClient && envFlag("ENABLE_GATEWAY_API_INFERENCE_EXTENSION", false)) {
    const { InferencePoolServices } = await import("../controllers/index.ts");
    const shadows = new InferencePoolServices({
      client: kubeClient,
      store,
      source: cluster.source,
      log: scoped("gateway"),
    });
    shadows.start();
    running.push(shadows);
  }
  if (cluster && kubeClient && tags && injection && envFlag("PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER", true)) {
    await startGatewayDeployments(store, cluster.source, kubeClient, tags, meshes, injection, running);
  }
  // WorkloadEntries of the VMs connecting with AUTO_REGISTER_GROUP, or naming an existing entry with
  // WORKLOAD_ENTRY, written by the replica they connect to (istiod's, not a leader's); stopped after
  // discovery, whose close marks them disconnected. Off only when both features are, as istiod's.
  let autoRegistration: WorkloadAutoRegistration | undefined;
  const autoRegister = envFlag("PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION", true);
  const healthChecks = envFlag("PILOT_ENABLE_WORKLOAD_ENTRY_HEALTHCHECKS", true);
  if (cluster && (autoRegister || healthChecks)) {
    const { WorkloadAutoRegistration } = await import("../controllers/index.ts");
    autoRegistration = new WorkloadAutoRegistration({
      store,
      target: cluster,
      instanceId: env.POD_NAME || `unknown-${hostname()}`,
      gracePeriodMs: workloadEntryGraceMs(),
      validateIdentity: envFlag("ISTIO_WORKLOAD_ENTRY_VALIDATE_IDENTITY", true),
      autoRegistration: autoRegister,
      healthChecks,
      maxConnectionAgeMs: argv.keepaliveMaxServerConnectionAge
        ? durationMs("keepaliveMaxServerConnectionAge", argv.keepaliveMaxServerConnectionAge)
        : undefined,
      log: scoped("wle"),
    });
    autoRegistration.start();
    running.push(autoRegistration);
  }
  // The remote clusters there at start have listed (or PILOT_REMOTE_CLUSTER_TIMEOUT has run out for
  // them) before discovery serves and /ready says so, as istiod; one joining later pushes everything.
  let onClusterChange = () => {};
  if (remotes) {
    remotes.start(() => onClusterChange());
    running.push(remotes);
    if (!remotes.hasSynced()) {
      scoped("multicluster").info({ clusters: remotes.clusters().length }, "waiting for remote clusters to sync");
      await remotes.whenSynced();
      scoped("multicluster").info({ clusters: remotes.clusters() }, "remote clusters synced");
    }
  }
  const tls = secureTls(ca?.istiodCertificate);
  const maxAge = argv.keepaliveMaxServerConnectionAge;
  const discovery: Discovery = await startDiscovery({
    store: remotes ? withRemoteChanges(store, remotes) : store,
    initialPush: pushes.build(),
    endpoints: pushes.registry,
    ambient: pushes.ambient,
    build: (previous) => pushes.build(previous),
    countServices: pushes.countServices,
    rootNamespace: mesh.rootNamespace ?? "istio-system",
    domainSuffix: argv.domain,
    debounce: {
      afterMs: durationMs("debounceAfter", argv.debounceAfter),
      maxMs: durationMs("debounceMax", argv.debounceMax),
      edsDebounce: argv.enableEdsDebounce,
    },
    pushThrottle: pushThrottleFromEnv(env),
    apiAuth: envFlag("ENABLE_XDS_API_GENERATOR_AUTH", true),
    debugAuth,
    authenticators,
    ca: tls ? ca?.ca : undefined,
    nodeAuthorizer: tls && ca ? nodeAuthorizer(store) : undefined,
    multiRootMesh: envFlag("ISTIO_MULTIROOT_MESH", false),
    plugins: argv.plugin,
    listen: {
      grpcAddr: argv.grpcAddr,
      secureGrpcAddr: tls ? argv.secureGRPCAddr : undefined,
      tls,
      keepaliveTimeMs: durationMs("keepaliveInterval", argv.keepaliveInterval),
      keepaliveTimeoutMs: durationMs("keepaliveTimeout", argv.keepaliveTimeout),
      maxConnectionAgeMs: maxAge ? durationMs("keepaliveMaxServerConnectionAge", maxAge) : undefined,
      maxReceiveMessageBytes: maxReceiveMessageBytesFromEnv(env),
    },
    connectionHooks: autoRegistration,
    metrics,
    log: scoped("ads"),
  });
  running.push(discovery);
  admin.attachDebug(discovery.debugEndpoints, {
    server: discovery.server,
    cache: discovery.cache,
    store,
    registry: pushes.registry,
    ambient: pushes.ambient,
    // Read at each request: the config in force now.
    get mesh() {
      return meshes.mesh;
    },
    krt,
    unsafeAdminEndpoints: envFlag("UNSAFE_ENABLE_ADMIN_ENDPOINTS", false),
    injectTemplates: webhooks && (() => webhooks.injectTemplates()),
    // The cluster source has listed everything by now.
    clusters: cluster
      ? () => [{ id: argv.clusterID, secretName: "", syncStatus: "synced" }, ...(remotes?.clusters() ?? [])]
      : undefined,
  });
  onClusterChange = () => discovery.pushAll("clusterupdate");
  followMeshNetworks(meshSource, pushes.registry, () => discovery.pushAll("global"));
  // A new mesh config: namespaces selected anew, then everything pushed again, built with it.
  meshes.onChange((next) => {
    cluster?.setDiscoverySelectors(next.discoverySelectors ?? []);
    remotes?.setDiscoverySelectors(next.discoverySelectors ?? []);
    ingresses.refresh();
    pushes.ambient?.setTrustDomain(next.trustDomain ?? "cluster.local");
    discovery.pushAll("global");
  });
  discoveryReady = true;
  log.info(
    { grpcAddr: argv.grpcAddr, grpcPort: discovery.ports.grpcPort, securePort: discovery.ports.securePort },
    "xDS server listening",
  );
}

// V8 starts a full collection once the heap outgrows the last one's live size by a factor it adapts,
// which after the idle collection that follows a mass sync was a few percent: the next push, however
// small, set off a mark of the whole heap (141-184 ms of marking steps in a 200-proxy push, on a
// 250 MB heap). Go's default, under which istiod runs (GOGC=100), waits for the heap to double.
setFlagsFromString("--heap-growing-percent=100");
// V8 drops the bytecode of functions not run through a few full collections, and the idle collection
// after a sync (a memory-reducing one) ages it fast: the first push after a quiet spell then ran
// its path cold, recompiling as it went (an endpoint change's push to 200 proxies 159 ms, against
// 31-68 ms for later ones; 54 ms with flushing off), and the idle collections themselves took
// 300-330 ms instead of 120-145. Sluiced's code is what it serves with; keeping it costs no RSS
// that the bench could tell apart.
setFlagsFromString("--no-flush-bytecode");

const running: Running[] = [];
try {
  await start(running);
} catch (err) {
  log.fatal((err as Error).message);
  process.exit(1);
}
// Stay up until told to stop, as a control plane does; SIGINT/SIGTERM stop accepting, drain the
// streams and exit 0.
const keepAlive = setInterval(() => {}, 1 << 30);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    log.info({ signal }, "shutting down");
    clearInterval(keepAlive);
    for (const r of running.reverse()) await r.stop();
    log.info("stopped");
    process.exit(0);
  });
}
