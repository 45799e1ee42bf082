// The status of every Ingress of this revision the mesh handles (istiod's ingress status, written by the
// holder of istio-leader): `status.loadBalancer.ingress` lists the addresses of the ingress gateway's Service
// (meshConfig.ingressService in K8S_INGRESS_NS): its load balancer's IPs and host names and its
// external IPs, or its external name; IPs as `ip`, the rest as `hostname`, sorted by host name then IP.
// Written through the status subresource only when it differs from the Ingress's own, and only for the
// Ingresses of this revision (`owns`: istiod's RegisterStatus asks its tag watcher's IsMine, over the
// Ingress's istio.io/rev, else its namespace's); those of another revision are left to it. A write
// refused because the Ingress changed meanwhile is tried again with the store's newer copy.
import { isIP } from "node:net";
import { isDeepStrictEqual } from "node:util";
import { type Logger, pino } from "pino";
import { type ConfigObject, kindKey, type MeshWatcher } from "../config/index.ts";
import { handlesIngress } from "../ingress/index.ts";
import { latest, type Unregister } from "../krt/index.ts";
import type { ConfigStore } from "../sources/index.ts";
import { compareStrings } from "../util/index.ts";
import { errorMessage } from "./kube-requests.ts";
import { WorkQueue } from "./work-queue.ts";

/** Where statuses go: the Kubernetes source the Ingresses come from (KubeSource). */
export interface IngressStatusTarget {
  readonly source: string;
  writeStatus(obj: ConfigObject, status: unknown): Promise<ConfigObject>;
}

export interface IngressStatusOptions {
  store: Pick<ConfigStore, "collection" | "get">;
  target: IngressStatusTarget;
  /** The mesh config in force (ingress class and service), followed as it changes. */
  meshes: Pick<MeshWatcher, "mesh" | "onChange">;
  /** K8S_INGRESS_NS; default istio-system. */
  ingressNamespace?: string;
  /** Whether an Ingress is this revision's (the tag watcher's IsMine); default every one. */
  owns?: (obj: ConfigObject) => boolean;
  /** Tells `listener` when `owns` may answer otherwise (a revision tag moved); returns how to stop telling. */
  onOwnsChange?: (listener: () => void) => () => void;
  log?: Logger;
}

type LoadBalancerIngress = { ip: string } | { hostname: string };

const INGRESS = kindKey("networking.k8s.io", "Ingress");

export class IngressStatusWriter {
  readonly #options: IngressStatusOptions;
  readonly #log: Logger;
  readonly #queue: WorkQueue;
  readonly #unregister: Unregister[] = [];

  constructor(options: IngressStatusOptions) {
    this.#options = options;
    this.#log = options.log ?? pino({ level: "silent" });
    this.#queue = new WorkQueue({
      reconcile: (key) => this.#reconcile(key),
      retryDelayMs: (retry) => Math.min(200 * 2 ** retry, 30_000),
      onFailure: (key, err) => {
        if (err) this.#log.warn({ ingress: key, err: errorMessage(err) }, "Ingress status not written");
      },
    });
  }

  start(): void {
    const { store } = this.#options;
    const ingresses = store.collection(INGRESS);
    const services = store.collection(kindKey("", "Service"));
    this.#unregister.push(
      ingresses.register((event) => {
        if (event.type !== "delete") this.#queue.add(ingresses.keyOf(event.new));
      }),
      services.registerBatch((events) => {
        const gateway = this.#gatewayServiceKey();
        if (events.some((e) => services.keyOf(latest(e)) === gateway)) this.refresh();
      }, false),
      store.collection(kindKey("networking.k8s.io", "IngressClass")).registerBatch(() => this.refresh(), false),
      this.#options.meshes.onChange(() => this.refresh()),
    );
    // An Ingress a tag moved to this revision gets its status now, not at its next change.
    if (this.#options.onOwnsChange) this.#unregister.push(this.#options.onOwnsChange(() => this.refresh()));
  }

  stop(): void {
    for (const unregister of this.#unregister.splice(0)) unregister();
    this.#queue.stop();
  }

  /** Every Ingress looked at again. */
  refresh(): void {
    const ingresses = this.#options.store.collection(INGRESS);
    for (const ingress of ingresses.list()) this.#queue.add(ingresses.keyOf(ingress));
  }

  #gatewayServiceKey(): string {
    return `${this.#options.ingressNamespace ?? "istio-system"}/${this.#options.meshes.mesh.ingressService ?? ""}`;
  }

  async #reconcile(key: string): Promise<boolean> {
    const { store, target, meshes } = this.#options;
    const [namespace, name] = key.split("/");
    const stored = store.get({ kind: INGRESS, namespace, name });
    // Gone, or defined by a file (no status to write there).
    if (!stored || stored.source !== target.source) return true;
    const ingress = stored.object;
    const classes = store.collection(kindKey("networking.k8s.io", "IngressClass")).list();
    if (!handlesIngress(meshes.mesh, ingress, classes)) return true;
    if (this.#options.owns && !this.#options.owns(ingress)) return true;
    const status = { loadBalancer: { ingress: this.#addresses() } };
    const current = (ingress as { status?: { loadBalancer?: { ingress?: unknown[] } } }).status;
    if (isDeepStrictEqual(current?.loadBalancer?.ingress ?? [], status.loadBalancer.ingress)) return true;
    await target.writeStatus(ingress, status);
    this.#log.info({ ingress: key }, "Ingress status written");
    return true;
  }

  /** Istio's runningAddresses over the ingress gateway's Service, as sliceToStatus lists them. */
  #addresses(): LoadBalancerIngress[] {
    const service = this.#options.store.collection(kindKey("", "Service")).get(this.#gatewayServiceKey()) as
      | {
          spec?: { type?: string; externalName?: string; externalIPs?: string[] };
          status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
        }
      | undefined;
    if (!service) return [];
    const addresses =
      service.spec?.type === "ExternalName"
        ? [service.spec.externalName ?? ""]
        : [
            ...(service.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || ""),
            ...(service.spec?.externalIPs ?? []),
          ];
    const entries: LoadBalancerIngress[] = addresses
      .filter((a) => a !== "")
      .map((a) => (isIP(a) ? { ip: a } : { hostname: a }));
    const text = (e: LoadBalancerIngress, field: "ip" | "hostname") =>
      field in e ? (e as Record<string, string>)[field] : "";
    return entries.sort(
      (a, b) =>
        compareStrings(text(a, "hostname"), text(b, "hostname")) || compareStrings(text(a, "ip"), text(b, "ip")),
    );
  }
}
