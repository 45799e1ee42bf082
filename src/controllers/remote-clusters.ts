// Istio's multicluster secret controller (pkg/kube/multicluster): the Secrets labelled
// istio/multiCluster=true in the system namespace name remote clusters, each data key a cluster ID and
// its value a kubeconfig. Each remote cluster gets a Kubernetes source of the registry's Kubernetes
// kinds only (Services, EndpointSlices, Endpoints, Pods, Nodes, Namespaces: Istio config is the config
// cluster's), writing into a store of its own, whose collections the registry adds under that cluster
// ID once the source has listed everything. A changed kubeconfig starts a new source, which replaces
// the old one once it has listed (the old one serves until then); a key or secret that goes away
// removes its cluster. A kubeconfig that does not load is logged, naming the secret and key, and
// skipped: the clusters it would have replaced keep serving. A kubeconfig is never logged.
// As istiod's, the controller has synced (`hasSynced`, what sluiced waits for before it serves) once
// every remote cluster has listed or has been listing for longer than the sync timeout
// (PILOT_REMOTE_CLUSTER_TIMEOUT; 0 sets no timeout: a cluster that never lists is waited for forever);
// a cluster that timed out joins whenever it does list.
// Each remote cluster's own mesh config (the ConfigMap `istio`, or `istio-<revision>`, key `mesh`, in
// its system namespace) gives the trust domain of its workloads' and Services' identities, as istiod's
// per-cluster mesh watcher: Istio's default (cluster.local) when the ConfigMap or its trustDomain is
// missing, the config cluster's while it cannot be read (not yet listed, no permission), the last
// good one while it does not parse or validate. A change re-adds the cluster to the registry and
// pushes everything.
import { createHash } from "node:crypto";
import { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { parse } from "yaml";
import { type ConfigObject, KINDS, kindKey, loadMeshConfig } from "../config/index.ts";
import type { Collection, Unregister } from "../krt/index.ts";
import { CLUSTER_KINDS, storeClusterInputs } from "../model/store-push.ts";
import type { ClusterInputs } from "../registry/index.ts";
import { type ConfigEvent, ConfigStore } from "../sources/index.ts";
import {
  type ConfigMapKeysWatch,
  KubeClient,
  KubeSource,
  type LabelSelector,
  watchConfigMapKeys,
} from "../sources/kube/index.ts";

/** The label of the secrets that name remote clusters. */
export const MULTICLUSTER_SECRET_LABEL = "istio/multiCluster";

/** The registry's side: remote clusters' parts come and go under their IDs. */
export interface RemoteClusterRegistry {
  readonly clusterId: string;
  /** `trustDomain`: the cluster's own (its mesh config's); none, the config cluster's. */
  addCluster(clusterId: string, inputs: ClusterInputs, trustDomain?: string): void;
  removeCluster(clusterId: string): void;
}

export interface RemoteClustersOptions {
  /** The config cluster's Secrets (the config store's). */
  secrets: Collection<ConfigObject>;
  /** The system namespace (POD_NAMESPACE), the only one whose secrets are read. */
  namespace: string;
  registry: RemoteClusterRegistry;
  /** The mesh's discoverySelectors now (applied to remote clusters' namespaces too). */
  discoverySelectors: () => readonly LabelSelector[];
  /** Told the number of remote clusters whenever it changes (istiod_managed_clusters{cluster_type="remote"}). */
  onCount?: (remote: number) => void;
  /** The remote clusters' mesh ConfigMap in their system namespace: `istio`, or `istio-<revision>`; default istio. */
  meshConfigMap?: string;
  /** How long a cluster may list before the controller counts as synced without it; 0 or none: no limit. */
  syncTimeoutMs?: number;
  /** Told of each cluster that timed out (remote_cluster_sync_timeouts_total). */
  onSyncTimeout?: (clusterId: string) => void;
  /**
   * Runs beside each cluster while it serves (what istiod runs per remote cluster: its namespace
   * controller); stopped when the cluster is replaced or removed.
   */
  whileServing?: (cluster: ServingCluster) => { stop(): void };
  log: Logger;
}

/** A remote cluster that serves: its ID, how to reach it, and the store its source fills. */
export interface ServingCluster {
  id: string;
  kubeConfig: KubeConfig;
  store: ConfigStore;
}

/** A cluster as /debug/clusterz lists it. */
export interface RemoteClusterInfo {
  id: string;
  secretName: string;
  syncStatus: "synced" | "syncing" | "timeout";
}

/** One remote cluster's source and store, from one kubeconfig. */
interface RemoteCluster {
  id: string;
  /** "namespace/name" of the secret naming it. */
  secret: string;
  /** sha256 of its kubeconfig: the same text again changes nothing. */
  sha: string;
  kubeConfig: KubeConfig;
  source: KubeSource;
  store: ConfigStore;
  synced: boolean;
  /** Listing for longer than the sync timeout. */
  timedOut: boolean;
  timer?: ReturnType<typeof setTimeout>;
  /** The trust domain of its mesh config; undefined while unread: the config cluster's. */
  trustDomain?: string;
  /** Whether its mesh ConfigMap has been listed. */
  meshSeen?: boolean;
  /** Follows its mesh ConfigMap. */
  meshWatch?: ConfigMapKeysWatch;
  unsubscribe?: Unregister;
  beside?: { stop(): void };
}

/** Istio's default trust domain: a remote cluster's when its mesh config names none. */
const DEFAULT_TRUST_DOMAIN = "cluster.local";

const REMOTE_KINDS = KINDS.filter((kind) =>
  (Object.values(CLUSTER_KINDS) as string[]).includes(kindKey(kind.group, kind.kind)),
);

export class RemoteClusters {
  readonly #options: RemoteClustersOptions;
  /** The cluster serving under each ID. */
  readonly #serving = new Map<string, RemoteCluster>();
  /** A cluster listing before it replaces (or joins as) the one of its ID. */
  readonly #starting = new Map<string, RemoteCluster>();
  readonly #handlers = new Set<(events: readonly ConfigEvent[]) => void>();
  #unregister: Unregister | undefined;
  #onClusterChange: () => void = () => {};
  /** Resolved by `#checkSynced` once `hasSynced()` holds. */
  readonly #syncWaiters: (() => void)[] = [];

  constructor(options: RemoteClustersOptions) {
    this.#options = options;
  }

  /**
   * Follows the secrets from now on (those already there first); `onClusterChange` is told when a
   * cluster joined, was replaced or left the registry (a full push, Istio's ClusterUpdate).
   */
  start(onClusterChange: () => void): void {
    this.#onClusterChange = onClusterChange;
    this.#unregister ??= this.#options.secrets.register((event) => {
      const secret = event.type === "delete" ? event.old : event.new;
      if ((secret.metadata.namespace ?? "") !== this.#options.namespace) return;
      const key = `${secret.metadata.namespace}/${secret.metadata.name}`;
      const labelled = event.type !== "delete" && secret.metadata.labels?.[MULTICLUSTER_SECRET_LABEL] === "true";
      this.#reconcile(key, labelled ? secretData(secret) : new Map());
    });
    this.#checkSynced();
  }

  /**
   * Whether the secrets there at start have been read and every cluster has listed or timed out (istiod's
   * multicluster controller HasSynced): until then sluiced neither serves nor is ready.
   */
  hasSynced(): boolean {
    if (this.#unregister === undefined) return false;
    for (const cluster of this.#starting.values()) if (!cluster.timedOut) return false;
    return true;
  }

  /** Resolves once `hasSynced()` holds. */
  whenSynced(): Promise<void> {
    if (this.hasSynced()) return Promise.resolve();
    return new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  stop(): void {
    this.#unregister?.();
    this.#unregister = undefined;
    for (const cluster of [...this.#starting.values(), ...this.#serving.values()]) this.#close(cluster);
    this.#starting.clear();
    this.#serving.clear();
  }

  /** The store events of every remote cluster serving (endpoint changes to push). */
  onChange(handler: (events: readonly ConfigEvent[]) => void): Unregister {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  /** New discoverySelectors (a mesh config reload), for every remote cluster's namespaces. */
  setDiscoverySelectors(selectors: readonly LabelSelector[]): void {
    for (const cluster of [...this.#starting.values(), ...this.#serving.values()])
      cluster.source.setDiscoverySelectors(selectors);
  }

  /** Every remote cluster, serving or still listing, by ID. */
  clusters(): RemoteClusterInfo[] {
    const all = new Map<string, RemoteClusterInfo>();
    for (const c of this.#serving.values()) all.set(c.id, { id: c.id, secretName: c.secret, syncStatus: "synced" });
    for (const c of this.#starting.values())
      if (!all.has(c.id))
        all.set(c.id, { id: c.id, secretName: c.secret, syncStatus: c.timedOut ? "timeout" : "syncing" });
    return [...all.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /** Brings the clusters of secret `key` in line with its data (cluster ID → kubeconfig text; none when gone). */
  #reconcile(key: string, data: ReadonlyMap<string, string>): void {
    const { log, registry } = this.#options;
    for (const cluster of [...this.#serving.values(), ...this.#starting.values()]) {
      if (cluster.secret === key && !data.has(cluster.id)) this.#remove(cluster.id);
    }
    for (const [id, text] of data) {
      const where = { secret: key, cluster: id };
      if (id === registry.clusterId) {
        log.info(where, "remote secret ignored: the cluster ID is the config cluster's own");
        continue;
      }
      const current = this.#starting.get(id) ?? this.#serving.get(id);
      if (current && current.secret !== key) {
        log.warn(
          { ...where, registeredBy: current.secret },
          "remote secret ignored: the cluster is already registered",
        );
        continue;
      }
      const sha = createHash("sha256").update(text).digest("hex");
      if (current?.sha === sha) continue;
      const kubeConfig = remoteKubeConfig(text);
      if (kubeConfig instanceof Error) {
        // Never the kubeconfig itself: it holds the cluster's credentials.
        log.error({ ...where, reason: kubeConfig.message }, "remote secret skipped: its kubeconfig does not load");
        continue;
      }
      this.#begin({ id, secret: key, sha, kubeConfig });
    }
    this.#count();
    this.#checkSynced();
  }

  #begin(spec: { id: string; secret: string; sha: string; kubeConfig: KubeConfig }): void {
    const { log } = this.#options;
    const store = new ConfigStore({ log: log.child({ cluster: spec.id }) });
    const source = new KubeSource({
      kubeConfig: spec.kubeConfig,
      writer: store,
      kinds: REMOTE_KINDS,
      discoverySelectors: this.#options.discoverySelectors(),
      log: log.child({ cluster: spec.id }),
    });
    const cluster: RemoteCluster = {
      id: spec.id,
      secret: spec.secret,
      sha: spec.sha,
      kubeConfig: spec.kubeConfig,
      source,
      store,
      synced: false,
      timedOut: false,
    };
    const superseded = this.#starting.get(spec.id);
    if (superseded) this.#close(superseded);
    this.#starting.set(spec.id, cluster);
    const timeoutMs = this.#options.syncTimeoutMs ?? 0;
    if (timeoutMs > 0) {
      cluster.timer = setTimeout(() => this.#timedOut(cluster, timeoutMs), timeoutMs);
      cluster.timer.unref();
    }
    cluster.meshWatch = this.#watchMesh(cluster);
    log.info({ cluster: spec.id, secret: spec.secret }, "remote cluster: listing");
    source.start().then(
      () => this.#synced(cluster),
      (err: Error) => log.error({ cluster: spec.id, err: err.message }, "remote cluster did not start"),
    );
  }

  /** Still listing after the sync timeout: the controller no longer waits for it. */
  #timedOut(cluster: RemoteCluster, timeoutMs: number): void {
    cluster.timer = undefined;
    if (this.#starting.get(cluster.id) !== cluster) return;
    cluster.timedOut = true;
    this.#options.log.error(
      { cluster: cluster.id, secret: cluster.secret, timeoutMs },
      "remote cluster did not sync within PILOT_REMOTE_CLUSTER_TIMEOUT",
    );
    this.#options.onSyncTimeout?.(cluster.id);
    this.#checkSynced();
  }

  #checkSynced(): void {
    if (this.#syncWaiters.length === 0 || !this.hasSynced()) return;
    for (const resolve of this.#syncWaiters.splice(0)) resolve();
  }

  /** A listed cluster joins the registry, replacing the one serving under its ID. */
  #synced(cluster: RemoteCluster): void {
    // Replaced or removed while listing.
    if (this.#starting.get(cluster.id) !== cluster) return;
    this.#starting.delete(cluster.id);
    clearTimeout(cluster.timer);
    const previous = this.#serving.get(cluster.id);
    cluster.synced = true;
    this.#options.registry.addCluster(cluster.id, storeClusterInputs(cluster.store), cluster.trustDomain);
    cluster.unsubscribe = cluster.store.onChange((events) => {
      for (const handler of this.#handlers) handler(events);
    });
    this.#serving.set(cluster.id, cluster);
    if (previous) this.#close(previous);
    cluster.beside = this.#options.whileServing?.({
      id: cluster.id,
      kubeConfig: cluster.kubeConfig,
      store: cluster.store,
    });
    this.#options.log.info({ cluster: cluster.id, secret: cluster.secret }, "remote cluster: serving");
    this.#onClusterChange();
    this.#checkSynced();
  }

  #remove(id: string): void {
    const starting = this.#starting.get(id);
    if (starting) this.#close(starting);
    this.#starting.delete(id);
    const serving = this.#serving.get(id);
    if (!serving) {
      this.#checkSynced();
      return;
    }
    this.#serving.delete(id);
    this.#close(serving);
    this.#options.registry.removeCluster(id);
    this.#options.log.info({ cluster: id, secret: serving.secret }, "remote cluster removed");
    this.#onClusterChange();
    this.#checkSynced();
  }

  /** Follows the cluster's mesh ConfigMap for its trust domain. */
  #watchMesh(cluster: RemoteCluster): ConfigMapKeysWatch {
    const { log, namespace } = this.#options;
    const name = this.#options.meshConfigMap ?? "istio";
    const seen = (text: string | undefined) => {
      let trustDomain: string | undefined = DEFAULT_TRUST_DOMAIN;
      if (text !== undefined) {
        try {
          trustDomain = loadMeshConfig(text).mesh.trustDomain || undefined;
        } catch (err) {
          log.warn(
            { cluster: cluster.id, configMap: `${namespace}/${name}`, err: (err as Error).message },
            "remote cluster's mesh config is invalid: its last trust domain kept",
          );
          // Nothing good read before: Istio's defaults.
          if (cluster.meshSeen) return;
          trustDomain = DEFAULT_TRUST_DOMAIN;
        }
      }
      cluster.meshSeen = true;
      // Unread, the config cluster's (undefined) was in force.
      if (trustDomain === cluster.trustDomain) return;
      cluster.trustDomain = trustDomain;
      log.info(
        { cluster: cluster.id, trustDomain: trustDomain ?? "(the config cluster's)" },
        "remote cluster's trust domain",
      );
      // Serving already: its part of the registry again, with the new identities.
      if (this.#serving.get(cluster.id) === cluster) {
        this.#options.registry.addCluster(cluster.id, storeClusterInputs(cluster.store), trustDomain);
        this.#onClusterChange();
      }
    };
    // No initial read: until the first listing the config cluster's trust domain holds.
    return watchConfigMapKeys(
      new KubeClient(cluster.kubeConfig),
      { namespace, name, keys: ["mesh"] },
      undefined,
      (texts) => seen(texts.mesh),
      log.child({ cluster: cluster.id }),
    );
  }

  #close(cluster: RemoteCluster): void {
    clearTimeout(cluster.timer);
    cluster.meshWatch?.stop();
    cluster.beside?.stop();
    cluster.unsubscribe?.();
    cluster.source.stop();
  }

  #count(): void {
    this.#options.onCount?.(new Set([...this.#serving.keys(), ...this.#starting.keys()]).size);
  }
}

/** A Secret's data, decoded: key → text. */
function secretData(secret: ConfigObject): Map<string, string> {
  const data = (secret.data ?? {}) as Record<string, string>;
  return new Map(Object.entries(data).map(([key, value]) => [key, Buffer.from(value, "base64").toString("utf8")]));
}

/** Credentials that read local files or run programs: a secret's author must not make sluiced use them (as Istio's sanitizeKubeConfig). */
const UNTRUSTED_USER_FIELDS = ["client-certificate", "client-key", "tokenFile", "token-file", "exec"];

/**
 * The kubeconfig of a remote secret, or why it cannot be used. The reasons never quote the text (a
 * YAML error's excerpt would show credentials).
 */
export function remoteKubeConfig(text: string): KubeConfig | Error {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch {
    return new Error("not YAML");
  }
  if (typeof raw !== "object" || raw === null) return new Error("not a kubeconfig object");
  const config = raw as {
    "current-context"?: unknown;
    contexts?: { name?: string; context?: { cluster?: string; user?: string } }[];
    clusters?: { name?: string; cluster?: { server?: unknown } }[];
    users?: { name?: string; user?: Record<string, unknown> }[];
  };
  const contextName = config["current-context"];
  if (typeof contextName !== "string" || contextName === "") return new Error("no current-context");
  const context = (config.contexts ?? []).find((c) => c?.name === contextName)?.context;
  if (!context) return new Error(`current-context ${contextName} is not among its contexts`);
  const cluster = (config.clusters ?? []).find((c) => c?.name === context.cluster)?.cluster;
  if (typeof cluster?.server !== "string" || cluster.server === "")
    return new Error(`context ${contextName} names no cluster with a server`);
  for (const { name, user } of config.users ?? []) {
    for (const field of UNTRUSTED_USER_FIELDS) {
      if (user?.[field] !== undefined) return new Error(`user ${name}: ${field} is not allowed`);
    }
    const provider = (user?.["auth-provider"] as { name?: string } | undefined)?.name;
    if (provider !== undefined && provider !== "oidc")
      return new Error(`user ${name}: auth provider ${provider} is not allowed`);
  }
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromString(text);
  } catch {
    return new Error("not a kubeconfig");
  }
  return kubeConfig;
}
