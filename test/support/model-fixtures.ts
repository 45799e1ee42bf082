// Builders for model tests: config objects of any kind, registry services, and push snapshots.
import { type ConfigObject, DEFAULT_MESH_CONFIG, type MeshConfig } from "../../src/config/index.ts";
import type { ProxyNode } from "../../src/model/proxy.ts";
import { PushSnapshot } from "../../src/model/push-snapshot.ts";
import type { Service } from "../../src/registry/index.ts";
import { testService } from "./registry-inputs.ts";

const API_VERSIONS: Record<string, string> = {
  VirtualService: "networking.istio.io/v1",
  DestinationRule: "networking.istio.io/v1",
  Gateway: "networking.istio.io/v1",
  Sidecar: "networking.istio.io/v1",
  EnvoyFilter: "networking.istio.io/v1alpha3",
  PeerAuthentication: "security.istio.io/v1",
  RequestAuthentication: "security.istio.io/v1",
  AuthorizationPolicy: "security.istio.io/v1",
  Telemetry: "telemetry.istio.io/v1",
  WasmPlugin: "extensions.istio.io/v1alpha1",
  TrafficExtension: "extensions.istio.io/v1alpha1",
};

/** A config object; `created` is a second offset giving its creationTimestamp (age order). */
export function cfg<Spec>(
  kind: string,
  namespace: string,
  name: string,
  spec: Spec,
  options: { created?: number; annotations?: Record<string, string> } = {},
): ConfigObject<Spec> {
  return {
    apiVersion: API_VERSIONS[kind] ?? "v1",
    kind,
    metadata: {
      name,
      namespace,
      creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, options.created ?? 0)).toISOString(),
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec,
  };
}

/** A Kubernetes service `name.namespace.svc.cluster.local` (or a ServiceEntry host when `registry` is External). */
export function svc(name: string, namespace: string, overrides: Partial<Service> = {}): Service {
  return testService({
    hostname: `${name}.${namespace}.svc.cluster.local`,
    namespace,
    name,
    objectName: name,
    ports: [{ name: "http", port: 80, protocol: "HTTP", targetPort: 8080 }],
    addresses: ["10.0.0.1"],
    defaultAddress: "10.0.0.1",
    selector: { app: name },
    ...overrides,
  });
}

export function snapshot(
  configs: readonly ConfigObject[],
  services: readonly Service[] = [],
  mesh: Partial<MeshConfig> = {},
): PushSnapshot {
  return new PushSnapshot({ configs, services, mesh: { ...DEFAULT_MESH_CONFIG, ...mesh } });
}

/** The proxy fields the model reads. */
export function proxy(
  type: ProxyNode["type"],
  configNamespace: string,
  labels: Record<string, string> = {},
): Pick<ProxyNode, "type" | "configNamespace" | "labels"> {
  return { type, configNamespace, labels };
}
