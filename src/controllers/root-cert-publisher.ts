// Istio's namespace controller: the mesh's root certificate published as the ConfigMap
// `istio-ca-root-cert` (key `root-cert.pem`, label istio.io/config=true) in every namespace the
// control plane sees (discoverySelectors apply), so that workloads' agents can verify istiod before
// they hold a certificate. A namespace added, its ConfigMap changed or deleted, or the CA's roots
// rotated: the ConfigMap is created or its key set again. Kubernetes' own system namespaces are left
// alone (kube-system is not: ztunnel may run there). Other keys of the ConfigMap are kept.
import { type Logger, pino } from "pino";
import type { ConfigObject } from "../config/index.ts";
import type { Collection } from "../krt/index.ts";
import { errorMessage, isStatus, type KubeRequests } from "./kube-requests.ts";
import { controllerQueue, type WorkQueue } from "./work-queue.ts";

export const ROOT_CERT_CONFIGMAP = "istio-ca-root-cert";
export const ROOT_CERT_KEY = "root-cert.pem";
const CONFIG_LABEL = { "istio.io/config": "true" };
/** Istio's inject.IgnoredNamespaces without kube-system. */
const IGNORED_NAMESPACES = new Set(["kube-public", "kube-node-lease", "local-path-storage"]);
/** Attempts per namespace and change (5 ms doubling between them), as Istio's namespace controller. */
const MAX_ATTEMPTS = 5;

export interface RootCertPublisherOptions {
  client: KubeRequests;
  /** The namespaces the control plane sees (the store's Namespace collection). */
  namespaces: Collection<ConfigObject>;
  /** The cluster's ConfigMaps (the store's ConfigMap collection). */
  configMaps: Collection<ConfigObject>;
  /** The roots to publish, PEM. */
  rootCert: () => string;
  /** Tells `listener` of every change of the roots; returns how to stop telling. */
  onRootCertChange: (listener: () => void) => () => void;
  /** PILOT_CA_CERT_CONFIGMAP; default istio-ca-root-cert. */
  configMapName?: string;
  log?: Logger;
}

type ConfigMap = ConfigObject & { data?: Record<string, string> };

export class RootCertPublisher {
  readonly #options: RootCertPublisherOptions;
  readonly #name: string;
  readonly #log: Logger;
  /** The published ConfigMaps as the store last saw them, by namespace. */
  readonly #published = new Map<string, ConfigMap>();
  readonly #queue: WorkQueue;
  readonly #stops: (() => void)[] = [];

  constructor(options: RootCertPublisherOptions) {
    this.#options = options;
    this.#name = options.configMapName ?? ROOT_CERT_CONFIGMAP;
    this.#log = options.log ?? pino({ level: "silent" });
    this.#queue = controllerQueue(
      (namespace) => this.#reconcile(namespace),
      MAX_ATTEMPTS,
      (namespace, err) =>
        this.#log.error({ namespace, configMap: this.#name, err: errorMessage(err) }, "root certificate not published"),
    );
  }

  /** Publishes into every namespace, then follows namespaces, the ConfigMaps and the roots. */
  start(): void {
    const { namespaces, configMaps, onRootCertChange } = this.#options;
    this.#stops.push(
      configMaps.register((event) => {
        const cm = (event.new ?? event.old) as ConfigMap;
        if (cm.metadata.name !== this.#name) return;
        const namespace = cm.metadata.namespace ?? "";
        if (event.type === "delete") this.#published.delete(namespace);
        else this.#published.set(namespace, cm);
        this.#enqueue(namespace);
      }),
      namespaces.register((event) => {
        if (event.type !== "delete") this.#enqueue(event.new.metadata.name ?? "");
      }),
      onRootCertChange(() => {
        for (const ns of namespaces.list()) this.#enqueue(ns.metadata.name ?? "");
      }),
    );
  }

  stop(): void {
    for (const stop of this.#stops.splice(0)) stop();
    this.#queue.stop();
  }

  /** Resolves once nothing is queued or being written (for tests). */
  settled(): Promise<void> {
    return this.#queue.settled();
  }

  #enqueue(namespace: string): void {
    if (!IGNORED_NAMESPACES.has(namespace)) this.#queue.add(namespace);
  }

  async #reconcile(namespace: string): Promise<void> {
    const ns = this.#options.namespaces.get(namespace);
    // Gone, no longer selected, or being deleted: nothing can be created there.
    if (!ns || (ns as { status?: { phase?: string } }).status?.phase === "Terminating") return;
    const root = this.#options.rootCert();
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`;
    const current = this.#published.get(namespace);
    if (!current) {
      const created: ConfigMap = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: this.#name, namespace, labels: { ...CONFIG_LABEL } },
        data: { [ROOT_CERT_KEY]: root },
      };
      try {
        await this.#options.client.request("POST", path, created);
        this.#log.info({ namespace, configMap: this.#name }, "root certificate published");
      } catch (err) {
        // Already there (the store has not seen it yet), or the namespace went away meanwhile.
        if (isStatus(err, 409) || isStatus(err, 404)) return;
        if (isStatus(err, 403)) {
          this.#log.info({ namespace, configMap: this.#name }, "root certificate not written: no permission to");
          return;
        }
        throw err;
      }
      return;
    }
    if (current.data?.[ROOT_CERT_KEY] === root) return;
    // The object as the store saw it (its resourceVersion a precondition): a newer one makes this a 409,
    // retried once the store has it.
    await this.#options.client.request("PUT", `${path}/${encodeURIComponent(this.#name)}`, {
      ...current,
      data: { ...current.data, [ROOT_CERT_KEY]: root },
    });
    this.#log.info({ namespace, configMap: this.#name }, "root certificate updated");
  }
}
