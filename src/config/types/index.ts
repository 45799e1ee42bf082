// Typed config objects and specs of every kind. Istio kinds at the top level (`VirtualService`,
// `VirtualServiceSpec`); Gateway API kinds under `gatewayapi` (`gatewayapi.HTTPRoute`, `gatewayapi.GatewaySpec`),
// since both families have a Gateway; Kubernetes built-ins are the @kubernetes/client-node types. The Istio and
// Gateway API types are generated from the CRDs by scripts/gen-schemas.ts.
import type * as gatewayapi from "./gateway-api/index.gen.ts";

export type {
  V1ConfigMap,
  V1EndpointSlice,
  V1Endpoints,
  V1Namespace,
  V1Node,
  V1Pod,
  V1Secret,
  V1Service,
  V1ServiceAccount,
} from "@kubernetes/client-node";
export type * from "./istio/index.gen.ts";
export type { KindObjects } from "./kind-objects.gen.ts";
// KindObjects (kind-objects.gen.ts) is imported from its own module: it names Istio's ProxyConfig kind,
// which this index leaves to the mesh's ProxyConfig of the same name.
export type { gatewayapi };
