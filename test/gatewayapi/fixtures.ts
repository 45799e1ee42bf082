// Gateway API objects the Gateway API tests share: Gateway `web` in infra accepting HTTP routes from
// every namespace on port 80, and HTTPRoute `shop` sending shop.example.com to Service `cart` (apps).
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
