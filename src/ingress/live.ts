// The store's Ingresses kept converted (istiod's ingress controller): the Gateways and VirtualServices
// of convertIngresses written back into the store as source "ingress", so that they reach pushes as
// Istio config changes, recomputed when an Ingress, an IngressClass or the mesh config changes, or a
// Service while there are Ingresses (a backend may name its port). The store turns an unchanged
// result into no event.
import { type ConfigObject, kindKey, type MeshConfig } from "../config/index.ts";
import type { Unregister } from "../krt/index.ts";
import type { ConfigStore } from "../sources/index.ts";
import { convertIngresses } from "./convert.ts";

export const INGRESS_SOURCE = "ingress";

export interface IngressFollowerOptions {
  /** The mesh config in force (ingress class, controller mode, ingress gateway). */
  mesh: () => MeshConfig;
  domainSuffix: string;
  /** K8S_INGRESS_NS; default istio-system. */
  ingressNamespace?: string;
}

export class IngressFollower {
  readonly #store: Pick<ConfigStore, "collection" | "replace">;
  readonly #options: IngressFollowerOptions;
  readonly #unregister: Unregister[] = [];
  #scheduled = false;
  #converted = 0;

  constructor(store: Pick<ConfigStore, "collection" | "replace">, options: IngressFollowerOptions) {
    this.#store = store;
    this.#options = options;
  }

  /** Converts what the store holds now, then follows its changes. */
  start(): void {
    const ingresses = this.#store.collection(kindKey("networking.k8s.io", "Ingress"));
    this.#unregister.push(
      ingresses.registerBatch(() => this.refresh(), false),
      this.#store.collection(kindKey("networking.k8s.io", "IngressClass")).registerBatch(() => this.refresh(), false),
      this.#store.collection(kindKey("", "Service")).registerBatch(() => {
        if (ingresses.size > 0) this.refresh();
      }, false),
    );
    this.#convert();
  }

  stop(): void {
    for (const unregister of this.#unregister.splice(0)) unregister();
  }

  /** Converts again (coalesced to once per turn of the event loop's microtasks). */
  refresh(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#convert();
    });
  }

  #convert(): void {
    const ingresses = this.#store.collection(kindKey("networking.k8s.io", "Ingress")).list();
    // Nothing to convert now or before: the store need not be asked.
    if (ingresses.length === 0 && this.#converted === 0) return;
    const services = this.#store.collection(kindKey("", "Service"));
    const configs: ConfigObject[] = convertIngresses({
      ingresses,
      ingressClasses: this.#store.collection(kindKey("networking.k8s.io", "IngressClass")).list(),
      service: (namespace, name) => services.get(`${namespace}/${name}`),
      mesh: this.#options.mesh(),
      domainSuffix: this.#options.domainSuffix,
      ingressNamespace: this.#options.ingressNamespace,
    });
    this.#converted = configs.length;
    this.#store.replace(INGRESS_SOURCE, "converted", configs);
  }
}
