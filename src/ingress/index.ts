// Kubernetes Ingress → Istio Gateways and VirtualServices, as istiod converts it, and kept so in the store.
export { convertIngresses, handlesIngress, type IngressInputs } from "./convert.ts";
export { INGRESS_SOURCE, IngressFollower, type IngressFollowerOptions } from "./live.ts";
