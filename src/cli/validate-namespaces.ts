// The namespaces `sluice validate` assumes, read by its help (validate.ts) and its checks
// (validate-report.ts, validate-workloads.ts).

/** Namespace of a namespaced object that names none, as istioctl and kubectl assume. */
export const DEFAULT_NAMESPACE = "default";

/** Objects here are exempt from istioctl's workload checks (Service ports, Deployment labels). */
export const ISTIO_SYSTEM_NAMESPACE = "istio-system";
