// A Gateway template's input for unit tests: a Gateway of class istio, `web` in `edge`, with Istio's
// default mesh and values, changed by `overrides`.
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import type { GatewayTemplateInput } from "../../src/webhooks/inject/kube-gateway.ts";
import { DEFAULT_INJECTION_SETTINGS } from "../../src/webhooks/inject/settings.ts";

export function gatewayTemplateInput(overrides: Partial<GatewayTemplateInput> = {}): GatewayTemplateInput {
  return {
    gateway: { metadata: { name: "web", namespace: "edge", uid: "u-1" } },
    gatewayClass: "istio",
    controllerLabel: "istio.io-gateway-controller",
    deploymentName: "web-istio",
    serviceAccount: "web-istio",
    ports: [{ name: "status-port", port: 15021, protocol: "TCP", appProtocol: "tcp" }],
    serviceType: "LoadBalancer",
    clusterId: "Kubernetes",
    kubeVersion: 135,
    revision: "",
    namespaceAnnotations: {},
    infrastructureLabels: {},
    infrastructureAnnotations: {},
    proxyConfig: DEFAULT_MESH_CONFIG.defaultConfig ?? {},
    mesh: DEFAULT_MESH_CONFIG,
    settings: structuredClone({ ...DEFAULT_INJECTION_SETTINGS }),
    ...overrides,
  };
}
