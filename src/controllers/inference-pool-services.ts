// Istio's InferencePool shadow Service reconciler (pilot/pkg/config/kube/gateway, with
// ENABLE_GATEWAY_API_INFERENCE_EXTENSION): each pool that an HTTPRoute of one of our Gateways routes to
// gets the headless Service the conversion routes the pool's traffic to (gatewayapi's shadowService),
// server-side applied under istiod's field manager, again when the pool or its routes change, or when
// the Service is changed or deleted. A Service of that name without the pool label is someone else's and
// is left alone; a pool's Service is never deleted (its owner reference lets the garbage collector).
// Run by every replica, as istiod runs it.
import { type Logger, pino } from "pino";
import { type ConfigObject, kindKey } from "../config/index.ts";
import {
  GATEWAY_GROUP,
  hasGatewayParent,
  INFERENCE_POOL_LABEL,
  inferencePoolServiceName,
  shadowService,
} from "../gatewayapi/index.ts";
import type { Unregister } from "../krt/index.ts";
import type { ConfigStore } from "../sources/index.ts";
import type { KubeClient } from "../sources/kube/index.ts";
import { errorMessage } from "./kube-requests.ts";
import { controllerQueue, type WorkQueue } from "./work-queue.ts";

const POOL = kindKey("inference.networking.k8s.io", "InferencePool");
const HTTP_ROUTE = kindKey(GATEWAY_GROUP, "HTTPRoute");
const SERVICE = kindKey("", "Service");
/** istiod's field manager for the shadow Services. */
const FIELD_MANAGER = "istio.io/inference-pool-controller";
/** Attempts per pool and change (istiod's queue allows 5). */
const MAX_ATTEMPTS = 5;

export interface InferencePoolServicesOptions {
  client: KubeClient;
  store: Pick<ConfigStore, "collection" | "get">;
  /** The Kubernetes source's name: pools defined in files get no Service in the cluster. */
  source: string;
  log?: Logger;
}

/** The pools ("ns/name") an HTTPRoute routes to. */
function routedPools(route: ConfigObject): string[] {
  const rules = (route.spec as { rules?: { backendRefs?: Record<string, string>[] }[] } | undefined)?.rules ?? [];
  return rules.flatMap((rule) =>
    (rule.backendRefs ?? [])
      .filter((ref) => ref.group === "inference.networking.k8s.io" && ref.kind === "InferencePool")
      .map((ref) => `${ref.namespace || route.metadata.namespace}/${ref.name}`),
  );
}

export class InferencePoolServices {
  readonly #options: InferencePoolServicesOptions;
  readonly #log: Logger;
  readonly #queue: WorkQueue;
  #unregister: Unregister[] = [];

  constructor(options: InferencePoolServicesOptions) {
    this.#options = options;
    this.#log = options.log ?? pino({ level: "silent" });
    this.#queue = controllerQueue(
      (key) => this.#reconcile(key),
      MAX_ATTEMPTS,
      (key, err) => this.#log.error({ inferencePool: key, err: errorMessage(err) }, "shadow Service not applied"),
    );
  }

  start(): void {
    const { store } = this.#options;
    const key = (obj: ConfigObject) => `${obj.metadata.namespace}/${obj.metadata.name}`;
    this.#unregister = [
      store.collection(POOL).register((event) => {
        if (event.type !== "delete") this.#queue.add(key(event.new));
      }),
      // A route's parents (its status) decide whether a pool gets its Service.
      store.collection(HTTP_ROUTE).register((event) => {
        const routes = [event.type === "delete" ? undefined : event.new, event.type === "add" ? undefined : event.old];
        for (const pool of new Set(routes.flatMap((r) => (r ? routedPools(r) : [])))) this.#queue.add(pool);
      }),
      // A shadow Service changed or deleted by someone else is put back.
      store.collection(SERVICE).register((event) => {
        const service = event.type === "delete" ? event.old : event.type === "update" ? event.new : undefined;
        const pool = service?.metadata.labels?.[INFERENCE_POOL_LABEL];
        if (service && pool) this.#queue.add(`${service.metadata.namespace}/${pool}`);
      }),
    ];
  }

  stop(): void {
    for (const unregister of this.#unregister) unregister();
    this.#queue.stop();
  }

  /** Resolves once nothing is queued or being applied (for tests). */
  settled(): Promise<void> {
    return this.#queue.settled();
  }

  async #reconcile(key: string): Promise<void> {
    const { store, source, client } = this.#options;
    const [namespace, name] = key.split("/");
    const pool = store.get({ kind: POOL, namespace, name });
    if (pool?.source !== source) return;
    if (!hasGatewayParent(pool.object, store.collection(HTTP_ROUTE).list())) return;
    const service = shadowService(pool.object);
    if (!service) {
      this.#log.error({ inferencePool: key }, "invalid InferencePool: endpointPickerRef port is required");
      return;
    }
    const existing = store.get({ kind: SERVICE, namespace, name: inferencePoolServiceName(name) });
    if (existing && existing.object.metadata.labels?.[INFERENCE_POOL_LABEL] === undefined) {
      this.#log.debug({ inferencePool: key }, "a Service of the shadow Service's name is not the pool's: left alone");
      return;
    }
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/services/${encodeURIComponent(service.metadata.name ?? "")}`;
    await client.patch(
      `${path}?fieldManager=${encodeURIComponent(FIELD_MANAGER)}&force=true`,
      service,
      "application/apply-patch+yaml",
    );
  }
}
