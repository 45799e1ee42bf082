// What sluiced runs over a cluster's Gateway API objects, for tests: the Kubernetes source into a store,
// the live conversion (with the given istiod flags) and its status writer, and the InferencePool shadow
// Service controller.
import type { KubeConfig } from "@kubernetes/client-node";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { InferencePoolServices } from "../../src/controllers/index.ts";
import { type GatewayApiFeatures, GatewayStatusWriter } from "../../src/gatewayapi/index.ts";
import { storeGatewayConversion, storeRegistry } from "../../src/model/store-push.ts";
import { ConfigStore } from "../../src/sources/index.ts";
import { KubeClient, KubeSource, type LabelSelector } from "../../src/sources/kube/index.ts";

export interface GatewayControllers {
  store: ConfigStore;
  kube: KubeSource;
  statuses: GatewayStatusWriter;
  shadows: InferencePoolServices;
  stop(): void;
}

export async function startGatewayControllers(
  kubeConfig: KubeConfig,
  features: GatewayApiFeatures,
  discoverySelectors?: readonly LabelSelector[],
): Promise<GatewayControllers> {
  const store = new ConfigStore({ sourceOrder: ["kubernetes"] });
  const kube = new KubeSource({ kubeConfig, writer: store, discoverySelectors, backoff: { initialMs: 5, maxMs: 20 } });
  await kube.start();
  const registry = storeRegistry(store, DEFAULT_MESH_CONFIG, "cluster.local");
  const conversion = storeGatewayConversion(store, registry, "cluster.local", features);
  const statuses = new GatewayStatusWriter({ conversion, store, target: kube, retryMs: 10 });
  statuses.start();
  const shadows = new InferencePoolServices({ client: new KubeClient(kubeConfig), store, source: kube.source });
  shadows.start();
  return {
    store,
    kube,
    statuses,
    shadows,
    stop() {
      shadows.stop();
      statuses.stop();
      kube.stop();
    },
  };
}
