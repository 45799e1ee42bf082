// The namespace controller in a remote cluster, as istiod runs it there (its multicluster registry):
// only when istiod controls that cluster from outside (EXTERNAL_ISTIOD=true, checked by the caller)
// and the remote cluster's system namespace names this control plane's cluster, or `*`, in its
// annotation topology.istio.io/controlPlaneClusters (read once, retried while the API server errs; a
// missing namespace means no). Then, while this replica holds the Lease
// istio-namespace-controller-election in that cluster's system namespace (holder key `^<revision>`,
// istiod's mark of a holder electing from another cluster), the CA's roots are published into the
// ConfigMap istio-ca-root-cert of every namespace of that cluster the discoverySelectors select, as in
// the config cluster (RootCertPublisher, over the remote cluster's Namespaces and a watch of its
// ConfigMaps of that name).
import { setTimeout as delay } from "node:timers/promises";
import { type Logger, pino } from "pino";
import { type ConfigObject, type KindInfo, lookupKind } from "../config/index.ts";
import { type Collection, StaticCollection } from "../krt/index.ts";
import { Informer, type KubeClient } from "../sources/kube/index.ts";
import { errorMessage, isStatus } from "./kube-requests.ts";
import { defaultRevisionPreempts, LeaseElection } from "./lease-election.ts";
import { ROOT_CERT_CONFIGMAP, RootCertPublisher } from "./root-cert-publisher.ts";

/** The annotation of a remote cluster's system namespace naming the clusters whose control planes may lead there. */
export const CONTROL_PLANE_CLUSTERS_ANNOTATION = "topology.istio.io/controlPlaneClusters";

const CONFIG_MAP = lookupKind("v1", "ConfigMap") as KindInfo;
const NAMESPACE_ELECTION = "istio-namespace-controller-election";

export interface RemoteNamespaceControllerOptions {
  /** The remote cluster's ID (for the logs). */
  clusterId: string;
  /** A client of the remote cluster. */
  client: KubeClient;
  /** The remote cluster's Namespaces the control plane sees (its store's collection; discoverySelectors apply). */
  namespaces: Collection<ConfigObject>;
  /** The system namespace (POD_NAMESPACE), in the remote cluster too. */
  systemNamespace: string;
  /** This control plane's cluster ID, looked for in the annotation. */
  configClusterId: string;
  /** This replica's identity in the Lease (POD_NAME). */
  identity: string;
  revision: string;
  /** PILOT_ENABLE_LEADER_ELECTION=false: lead without a Lease. */
  leaderElection: boolean;
  rootCert: () => string;
  onRootCertChange: (listener: () => void) => () => void;
  /** PILOT_CA_CERT_CONFIGMAP; default istio-ca-root-cert. */
  configMapName?: string;
  /** The first wait between attempts to read the system namespace; default 1 s, doubling to 30 s. */
  retryMs?: number;
  log?: Logger;
}

/** Whether the annotation's value lets the control plane of cluster `clusterId` lead. */
export function namesControlPlaneCluster(value: string | undefined, clusterId: string): boolean {
  if (value === undefined) return false;
  return value.split(",").some((cluster) => cluster === "*" || cluster === clusterId);
}

export class RemoteNamespaceController {
  readonly #options: RemoteNamespaceControllerOptions;
  readonly #log: Logger;
  readonly #stopping = new AbortController();
  #election: LeaseElection | undefined;
  #stopLeading: (() => void) | undefined;
  #publisher: RootCertPublisher | undefined;
  /** Settles once the decision to lead (or not) has been made and acted on. */
  #started: Promise<boolean> | undefined;

  constructor(options: RemoteNamespaceControllerOptions) {
    this.#options = options;
    this.#log = options.log ?? pino({ level: "silent" });
  }

  /** Reads whether to lead, then joins the election if so. */
  start(): void {
    this.#started ??= this.#shouldLead().then((lead) => {
      if (this.#stopping.signal.aborted) return false;
      this.#log.info({ cluster: this.#options.clusterId, lead }, "should join leader-election for remote cluster");
      if (lead) this.#lead();
      return lead;
    });
  }

  /** Resolves with whether this replica competes for the remote cluster's namespace controller (for tests). */
  decided(): Promise<boolean> {
    return this.#started ?? Promise.resolve(false);
  }

  /** Resolves once the publisher, if running, has nothing queued (for tests). */
  async settled(): Promise<void> {
    await this.#publisher?.settled();
  }

  stop(): void {
    this.#stopping.abort();
    this.#stopLeading?.();
    void this.#election?.stop();
  }

  async #shouldLead(): Promise<boolean> {
    const { client, systemNamespace, configClusterId, clusterId } = this.#options;
    // A list by name: the reader's list grant is enough, where a GET would need another.
    const path = `/api/v1/namespaces?fieldSelector=${encodeURIComponent(`metadata.name=${systemNamespace}`)}`;
    let waitMs = this.#options.retryMs ?? 1000;
    while (!this.#stopping.signal.aborted) {
      try {
        const list = (await client.request("GET", path, undefined, this.#stopping.signal)) as {
          items?: ConfigObject[];
        };
        const namespace = list.items?.[0];
        return namesControlPlaneCluster(
          namespace?.metadata.annotations?.[CONTROL_PLANE_CLUSTERS_ANNOTATION],
          configClusterId,
        );
      } catch (err) {
        if (this.#stopping.signal.aborted) return false;
        if (isStatus(err, 404)) return false;
        this.#log.warn(
          { cluster: clusterId, namespace: systemNamespace, err: errorMessage(err), retryMs: waitMs },
          "remote cluster's system namespace not read",
        );
        await delay(waitMs, undefined, { signal: this.#stopping.signal }).catch(() => {});
        waitMs = Math.min(waitMs * 2, 30_000);
      }
    }
    return false;
  }

  #lead(): void {
    const { client, systemNamespace, identity, revision, clusterId } = this.#options;
    const run = (signal?: AbortSignal) => {
      const stop = this.#runPublisher();
      if (signal) signal.addEventListener("abort", stop);
      else this.#stopLeading = stop;
    };
    if (!this.#options.leaderElection) {
      run();
      return;
    }
    this.#election = new LeaseElection({
      client,
      namespace: systemNamespace,
      name: NAMESPACE_ELECTION,
      identity,
      key: `^${revision}`,
      // istiod follows the default revision of the remote cluster here; without its webhooks read, no
      // default revision: only the second rule of the comparison applies, and an elector from another
      // cluster never takes the Lease from a live holder.
      preempts: defaultRevisionPreempts(revision, () => "", true),
      run,
      log: this.#log.child({ cluster: clusterId }),
    });
    this.#election.start();
  }

  /** Publishes the roots into the remote cluster's namespaces until the returned function is called. */
  #runPublisher(): () => void {
    const { client, namespaces, rootCert, onRootCertChange, clusterId } = this.#options;
    const name = this.#options.configMapName ?? ROOT_CERT_CONFIGMAP;
    const configMaps = new StaticCollection<ConfigObject>([], {
      keyOf: (cm) => `${cm.metadata.namespace}/${cm.metadata.name}`,
    });
    const informer = new Informer(
      CONFIG_MAP,
      client,
      {
        replaceAll: (objects) => configMaps.reset(objects),
        apply: (type, object) => {
          if (type === "DELETED") configMaps.delete(`${object.metadata.namespace}/${object.metadata.name}`);
          else configMaps.upsert(object);
        },
      },
      {
        backoff: { initialMs: 1000, maxMs: 30_000 },
        notInstalledRetryMs: 60_000,
        listPageSize: 500,
        fieldSelector: `metadata.name=${name}`,
        log: this.#log,
      },
    );
    const publisher = new RootCertPublisher({
      client,
      namespaces,
      configMaps,
      rootCert,
      onRootCertChange,
      configMapName: name,
      log: this.#log.child({ cluster: clusterId }),
    });
    this.#publisher = publisher;
    informer.start();
    // Published once the ConfigMaps there are known: a namespace's ConfigMap is updated, not created twice.
    let stopped = false;
    void informer.synced.then(() => {
      if (!stopped) publisher.start();
    });
    this.#log.info({ cluster: clusterId }, "starting namespace controller for remote cluster");
    return () => {
      stopped = true;
      informer.stop();
      publisher.stop();
    };
  }
}
