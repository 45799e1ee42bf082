// The model assembled from the config store, as sluiced runs it (the part of Istio's bootstrap that
// builds the service registry and the Gateway API controller over the config store, and the push
// context over what they hold): the registry over the store's collections, the Gateway API objects
// converted live and written back into the store, and the push context of what the store holds now.
// The xDS layer only receives what is built here (xds/discovery.ts takes the builder).
import { AmbientIndex, type AmbientOptions } from "../ambient/index.ts";
import { kindKey, type MeshConfig } from "../config/index.ts";
import {
  type ConversionResult,
  GATEWAY_API_SOURCE,
  GATEWAY_GROUP,
  GATEWAY_X_GROUP,
  type GatewayApiFeatures,
  liveConversion,
  ROUTE_KINDS,
  registryServiceView,
} from "../gatewayapi/index.ts";
import type { Singleton } from "../krt/index.ts";
import { type ClusterInputs, type RegistryInputs, type RegistryOptions, ServiceRegistry } from "../registry/index.ts";
import type { ConfigStore } from "../sources/index.ts";
import { buildPushContext, type MeshPush } from "./mesh-push.ts";
import type { PushFeatures } from "./push-features.ts";
import { pushInputs, type WaypointIndex } from "./push-inputs.ts";
import { PUSH_KINDS } from "./push-kinds.ts";

/** The kind (key) of the store collection behind each registry input. */
export const REGISTRY_KINDS = {
  services: kindKey("", "Service"),
  endpointSlices: kindKey("discovery.k8s.io", "EndpointSlice"),
  endpoints: kindKey("", "Endpoints"),
  pods: kindKey("", "Pod"),
  nodes: kindKey("", "Node"),
  serviceEntries: kindKey("networking.istio.io", "ServiceEntry"),
  workloadEntries: kindKey("networking.istio.io", "WorkloadEntry"),
  workloadGroups: kindKey("networking.istio.io", "WorkloadGroup"),
  namespaces: kindKey("", "Namespace"),
} as const satisfies Record<keyof RegistryInputs, string>;

/**
 * The service registry over the store's collections (Services, EndpointSlices, Pods, ServiceEntries, ...),
 * in cluster `clusterId` (default Kubernetes) with `meshNetworks` (istiod's --networksConfig), which
 * pushes from it read too.
 */
export function storeRegistry(
  store: ConfigStore,
  mesh: MeshConfig,
  domainSuffix: string,
  topology: Pick<RegistryOptions, "clusterId" | "meshNetworks"> = {},
): ServiceRegistry {
  const inputs: RegistryInputs = {
    services: store.collection(REGISTRY_KINDS.services),
    endpointSlices: store.collection(REGISTRY_KINDS.endpointSlices),
    endpoints: store.collection(REGISTRY_KINDS.endpoints),
    pods: store.collection(REGISTRY_KINDS.pods),
    nodes: store.collection(REGISTRY_KINDS.nodes),
    serviceEntries: store.collection(REGISTRY_KINDS.serviceEntries),
    workloadEntries: store.collection(REGISTRY_KINDS.workloadEntries),
    workloadGroups: store.collection(REGISTRY_KINDS.workloadGroups),
    namespaces: store.collection(REGISTRY_KINDS.namespaces),
  };
  return new ServiceRegistry(inputs, { domainSuffix, mesh, ...topology });
}

/** The kinds (keys) a remote cluster's registry reads: its Kubernetes kinds, no Istio config. */
export const CLUSTER_KINDS = {
  services: REGISTRY_KINDS.services,
  endpointSlices: REGISTRY_KINDS.endpointSlices,
  endpoints: REGISTRY_KINDS.endpoints,
  pods: REGISTRY_KINDS.pods,
  nodes: REGISTRY_KINDS.nodes,
  namespaces: REGISTRY_KINDS.namespaces,
} as const satisfies Record<keyof ClusterInputs, string>;

/** A remote cluster's part of the registry (`ServiceRegistry.addCluster`) over the store its source fills. */
export function storeClusterInputs(store: ConfigStore): ClusterInputs {
  return {
    services: store.collection(CLUSTER_KINDS.services),
    endpointSlices: store.collection(CLUSTER_KINDS.endpointSlices),
    endpoints: store.collection(CLUSTER_KINDS.endpoints),
    pods: store.collection(CLUSTER_KINDS.pods),
    nodes: store.collection(CLUSTER_KINDS.nodes),
    namespaces: store.collection(CLUSTER_KINDS.namespaces),
  };
}

const conversions = new WeakMap<ServiceRegistry, Singleton<ConversionResult>>();

/**
 * The store's Gateway API objects converted to Istio config, with their statuses, kept live over the
 * store's collections and the registry's services. One per registry: pushes and the status writer share it.
 * The converted config is written back into the store as source GATEWAY_API_SOURCE, so that it reaches
 * pushes as Istio config changes naming the Gateways and VirtualServices that changed, as Istio's
 * gateway controller pushes its outputs (the Gateway API objects themselves push nothing).
 */
export function storeGatewayConversion(
  store: ConfigStore,
  registry: ServiceRegistry,
  domainSuffix: string,
  features: GatewayApiFeatures = {},
): Singleton<ConversionResult> {
  let conversion = conversions.get(registry);
  if (!conversion) {
    const gatewayApi = (kind: string) => store.collection(kindKey(GATEWAY_GROUP, kind));
    conversion = liveConversion(
      {
        gatewayApi: {
          gatewayClasses: store.collection(kindKey(GATEWAY_GROUP, "GatewayClass")),
          gateways: store.collection(kindKey(GATEWAY_GROUP, "Gateway")),
          listenerSets: gatewayApi("ListenerSet"),
          referenceGrants: gatewayApi("ReferenceGrant"),
          backendTLSPolicies: gatewayApi("BackendTLSPolicy"),
          xBackends: store.collection(kindKey(GATEWAY_X_GROUP, "XBackend")),
          xBackendTrafficPolicies: store.collection(kindKey(GATEWAY_X_GROUP, "XBackendTrafficPolicy")),
          ...(features.inferenceExtension && {
            inferencePools: store.collection(kindKey("inference.networking.k8s.io", "InferencePool")),
          }),
          routes: ROUTE_KINDS.map(gatewayApi),
        },
        cluster: {
          services: store.collection(kindKey("", "Service")),
          secrets: store.collection(kindKey("", "Secret")),
          configMaps: store.collection(kindKey("", "ConfigMap")),
          namespaces: store.collection(kindKey("", "Namespace")),
          serviceEntries: store.collection(kindKey("networking.istio.io", "ServiceEntry")),
        },
        servicesByHostname: registryServiceView(registry),
      },
      { domainSuffix, alphaGatewayApi: features.alphaGatewayApi },
    );
    conversion.register((event) =>
      store.replace(GATEWAY_API_SOURCE, "converted", event.type === "delete" ? [] : event.new.config),
    );
    conversions.set(registry, conversion);
  }
  return conversion;
}

/** The ambient index over the store's collections (Pods, Services, entries, Namespaces, Nodes, policies, Gateways). */
export function storeAmbientIndex(store: ConfigStore, options: AmbientOptions): AmbientIndex {
  return new AmbientIndex(
    {
      pods: store.collection(REGISTRY_KINDS.pods),
      services: store.collection(REGISTRY_KINDS.services),
      serviceEntries: store.collection(REGISTRY_KINDS.serviceEntries),
      workloadEntries: store.collection(REGISTRY_KINDS.workloadEntries),
      namespaces: store.collection(REGISTRY_KINDS.namespaces),
      nodes: store.collection(REGISTRY_KINDS.nodes),
      authorizationPolicies: store.collection(PUSH_KINDS.authorizationPolicy),
      peerAuthentications: store.collection(PUSH_KINDS.peerAuthentication),
      gateways: store.collection(kindKey(GATEWAY_GROUP, "Gateway")),
      gatewayClasses: store.collection(kindKey(GATEWAY_GROUP, "GatewayClass")),
    },
    options,
  );
}

/**
 * The push context over what the store holds now, Istio config converted from Gateway API included;
 * the kinds, services and endpoints whose krt collections did not change since `previous` keep its indexes.
 */
export function storePush(
  store: ConfigStore,
  registry: ServiceRegistry,
  mesh: MeshConfig,
  domainSuffix: string,
  previous?: MeshPush,
  features: PushFeatures & GatewayApiFeatures = {},
  waypoints?: WaypointIndex,
): MeshPush {
  const { alphaGatewayApi, inferenceExtension, ...pushFeatures } = features;
  // From the first push on, the store holds the converted config too.
  storeGatewayConversion(store, registry, domainSuffix, { alphaGatewayApi, inferenceExtension });
  const inputs = pushInputs(
    store,
    registry,
    mesh,
    { domainSuffix, meshNetworks: registry.meshNetworks, clusterId: registry.clusterId, waypoints, ...pushFeatures },
    previous?.snapshot.inputs,
  );
  return buildPushContext(inputs, previous);
}
