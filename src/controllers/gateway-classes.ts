// Istio's GatewayClass controller: the built-in classes (`istio`, `istio-remote` for gateways of
// other networks, and with ambient `istio-waypoint` and `istio-east-west`) are created when the cluster has none of that name, and again when deleted. An
// existing class is never changed, so users may edit or replace it. Run by every replica, without an
// election, as istiod: only creates, and the first create wins.
import { type Logger, pino } from "pino";
import { type ConfigObject, kindKey } from "../config/index.ts";
import { EASTWEST_CONTROLLER, GATEWAY_CONTROLLER, MESH_CONTROLLER, UNMANAGED_CONTROLLER } from "../gatewayapi/index.ts";
import type { Unregister } from "../krt/index.ts";
import type { ConfigStore } from "../sources/index.ts";
import { errorMessage, isStatus, type KubeRequests } from "./kube-requests.ts";
import { controllerQueue, type WorkQueue } from "./work-queue.ts";

const GATEWAY_CLASS = kindKey("gateway.networking.k8s.io", "GatewayClass");
/** Attempts per class and change, 5 ms doubling between them (istiod's queue allows 25). */
const MAX_ATTEMPTS = 25;

/** The classes istiod creates, with its descriptions. */
const BUILTIN_CLASSES: Readonly<Record<string, { controllerName: string; description: string }>> = {
  istio: { controllerName: GATEWAY_CONTROLLER, description: "The default Istio GatewayClass" },
  "istio-remote": {
    controllerName: UNMANAGED_CONTROLLER,
    description: "Remote to this cluster. Does not deploy or affect configuration.",
  },
  "istio-waypoint": { controllerName: MESH_CONTROLLER, description: "The default Istio waypoint GatewayClass" },
  "istio-east-west": {
    controllerName: EASTWEST_CONTROLLER,
    description: "The default GatewayClass for Istio East West Gateways",
  },
};

export interface GatewayClassCreatorOptions {
  client: KubeRequests;
  store: Pick<ConfigStore, "collection" | "get">;
  /** The Kubernetes source's name: a class defined in a file is not the cluster's. */
  source: string;
  /** PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME: the name of the `istio` class. */
  defaultClassName?: string;
  /** PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API: whether `istio-remote` is created; default true. */
  remoteClass?: boolean;
  /** PILOT_ENABLE_AMBIENT_WAYPOINTS (with PILOT_ENABLE_AMBIENT): whether `istio-waypoint` is created; default false. */
  waypointClass?: boolean;
  /** AMBIENT_ENABLE_MULTI_NETWORK (with PILOT_ENABLE_AMBIENT): whether `istio-east-west` is created; default false. */
  eastWestClass?: boolean;
  log?: Logger;
}

export class GatewayClassCreator {
  readonly #options: GatewayClassCreatorOptions;
  readonly #log: Logger;
  readonly #classes: Map<string, { controllerName: string; description: string }>;
  readonly #queue: WorkQueue;
  #unregister: Unregister | undefined;

  constructor(options: GatewayClassCreatorOptions) {
    this.#options = options;
    this.#log = options.log ?? pino({ level: "silent" });
    this.#classes = new Map([[options.defaultClassName || "istio", BUILTIN_CLASSES.istio]]);
    const optional = {
      "istio-remote": options.remoteClass ?? true,
      "istio-waypoint": options.waypointClass,
      "istio-east-west": options.eastWestClass,
    };
    for (const [name, wanted] of Object.entries(optional)) if (wanted) this.#classes.set(name, BUILTIN_CLASSES[name]);
    this.#queue = controllerQueue(
      (name) => this.#reconcile(name),
      MAX_ATTEMPTS,
      (name, err) => this.#log.error({ gatewayClass: name, err: errorMessage(err) }, "GatewayClass not created"),
    );
  }

  start(): void {
    this.#unregister = this.#options.store.collection(GATEWAY_CLASS).register((event) => {
      if (event.type === "delete" && this.#classes.has(event.old.metadata.name ?? "")) {
        this.#queue.add(event.old.metadata.name ?? "");
      }
    });
    for (const name of this.#classes.keys()) this.#queue.add(name);
  }

  stop(): void {
    this.#unregister?.();
    this.#queue.stop();
  }

  /** Resolves once nothing is queued or being written (for tests). */
  settled(): Promise<void> {
    return this.#queue.settled();
  }

  async #reconcile(name: string): Promise<void> {
    const existing = this.#options.store.get({ kind: GATEWAY_CLASS, namespace: "", name });
    if (existing?.source === this.#options.source) return;
    const spec = this.#classes.get(name);
    if (!spec) return;
    const gatewayClass: ConfigObject = {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GatewayClass",
      metadata: { name },
      spec: { ...spec },
    };
    try {
      await this.#options.client.request("POST", "/apis/gateway.networking.k8s.io/v1/gatewayclasses", gatewayClass);
      this.#log.info({ gatewayClass: name }, "GatewayClass created");
    } catch (err) {
      // Another replica (or the user) made it first; the store will have it.
      if (isStatus(err, 409)) return;
      throw err;
    }
  }
}
