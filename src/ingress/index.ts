// Kubernetes Ingress → Istio Gateways and VirtualServices, as istiod converts it.
export { convertIngresses, type IngressInputs } from "./convert.ts";
