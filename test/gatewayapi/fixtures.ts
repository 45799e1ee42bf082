// Gateway API objects the Gateway API tests share: Gateway `web` in infra accepting HTTP routes from
// every namespace on port 80, HTTPRoute `shop` sending shop.example.com to Service `cart` (apps), and
// objects of the kinds istiod reads under a flag.
import type { ConfigObject } from "../../src/config/index.ts";

export const GATEWAY_API_VERSION = "gateway.networking.k8s.io/v1";

export const WEB_GATEWAY: ConfigObject = {
  apiVersion: GATEWAY_API_VERSION,
  kind: "Gateway",
  metadata: { name: "web", namespace: "infra" },
  spec: {
    gatewayClassName: "istio",
    listeners: [{ name: "http", port: 80, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } }],
  },
};

export const CART_SERVICE: ConfigObject = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "cart", namespace: "apps" },
  spec: { clusterIP: "10.96.0.5", ports: [{ name: "http", port: 8080 }], selector: { app: "cart" } },
};

/** HTTPRoute `shop` on `web`: requests under `path` go to cart:8080. */
export function shopRoute(path: string): ConfigObject {
  return {
    apiVersion: GATEWAY_API_VERSION,
    kind: "HTTPRoute",
    metadata: { name: "shop", namespace: "apps" },
    spec: {
      parentRefs: [{ name: "web", namespace: "infra" }],
      hostnames: ["shop.example.com"],
      rules: [
        { matches: [{ path: { type: "PathPrefix", value: path } }], backendRefs: [{ name: "cart", port: 8080 }] },
      ],
    },
  };
}

/**
 * The kinds istiod reads only under a flag, in one namespace: XBackend `external` (TLS to api.example.net),
 * XBackendTrafficPolicy `web` (a retry budget for Service `web`), and InferencePool `pool` with its
 * endpoint picker Service `epp` (its shadow Service is the InferencePoolServices controller's to make).
 */
export function gatedKindObjects(namespace: string): ConfigObject[] {
  const gwx = "gateway.networking.x-k8s.io/v1alpha1";
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "epp", namespace },
      spec: { ports: [{ name: "grpc", port: 9002 }], selector: { app: "epp" } },
    },
    {
      apiVersion: gwx,
      kind: "XBackend",
      metadata: { name: "external", namespace },
      spec: {
        type: "ExternalHostname",
        externalHostname: { hostname: "api.example.net" },
        port: { port: 443 },
        protocol: "HTTP",
        tls: { mode: "ServerOnly", validation: { hostname: "api.example.net", wellKnownCACertificates: "System" } },
      },
    },
    {
      apiVersion: gwx,
      kind: "XBackendTrafficPolicy",
      metadata: { name: "web", namespace },
      spec: { targetRefs: [{ group: "", kind: "Service", name: "web" }], retryConstraint: { budget: { percent: 20 } } },
    },
    {
      apiVersion: "inference.networking.k8s.io/v1",
      kind: "InferencePool",
      metadata: { name: "pool", namespace },
      spec: {
        selector: { matchLabels: { app: "model" } },
        targetPorts: [{ number: 8000 }],
        endpointPickerRef: { name: "epp", port: { number: 9002 } },
      },
    },
  ];
}

/** Backend references to the XBackend and the InferencePool of gatedKindObjects. */
export const GATED_BACKEND_REFS = [
  { group: "gateway.networking.x-k8s.io", kind: "XBackend", name: "external" },
  { group: "inference.networking.k8s.io", kind: "InferencePool", name: "pool", port: 80 },
];
