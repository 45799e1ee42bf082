// The shadow Service istiod makes for an InferencePool (its gateway controller's reconcileShadowService):
// headless, `<pool>-ip-<hash>`, selecting the pool's pods on its target ports, its labels saying where the
// endpoint picker is. Routes to the pool go to this Service (backends.ts reads the labels back).
import { createHash } from "node:crypto";
import type { ConfigObject } from "../config/index.ts";

/** The label naming the pool a shadow Service is for; a Service without it is not the pool's to manage. */
export const INFERENCE_POOL_LABEL = "istio.io/inferencepool-name";
export const EXTENSION_SERVICE_LABEL = "istio.io/inferencepool-extension-service";
export const EXTENSION_PORT_LABEL = "istio.io/inferencepool-extension-port";
export const EXTENSION_FAILURE_MODE_LABEL = "istio.io/inferencepool-extension-failure-mode";
/** istiod's constants.InternalServiceSemantics label, marking the Service as an InferencePool's. */
const SERVICE_SEMANTICS_LABEL = "internal.istio.io/service-semantics";
/** The first port's number; the others follow it. */
const FIRST_PORT = 54321;

/** The shadow Service's name: `<pool>-ip-<hash>`, the pool's name cut so that it fits 63 characters. */
export function inferencePoolServiceName(pool: string): string {
  const hash = createHash("sha256").update(pool).digest("hex").slice(0, 8);
  const base = pool.length + 4 + 8 > 63 ? pool.slice(0, 63 - 4 - 8) : pool;
  return `${base}-ip-${hash}`;
}

/** The fields read from an InferencePool (Sluice has no schema for the kind). */
interface PoolSpec {
  selector?: { matchLabels?: Record<string, string> };
  targetPorts?: { number: number }[];
  appProtocol?: string;
  endpointPickerRef?: { name?: string; port?: { number?: number }; failureMode?: string };
}

/**
 * The pool's shadow Service as istiod applies it, or undefined where istiod makes none (an endpoint
 * picker without a port).
 */
export function shadowService(pool: ConfigObject): ConfigObject | undefined {
  const spec = (pool.spec ?? {}) as PoolSpec;
  const picker = spec.endpointPickerRef ?? {};
  if (picker.port === undefined) return undefined;
  const name = pool.metadata.name ?? "";
  const selector = spec.selector?.matchLabels ?? {};
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: inferencePoolServiceName(name),
      namespace: pool.metadata.namespace,
      labels: {
        [INFERENCE_POOL_LABEL]: name,
        [EXTENSION_SERVICE_LABEL]: picker.name ?? "",
        [EXTENSION_PORT_LABEL]: String(picker.port.number ?? 0),
        // The API server defaults it to FailClose; unset, istiod writes it empty.
        [EXTENSION_FAILURE_MODE_LABEL]: picker.failureMode ?? "",
        [SERVICE_SEMANTICS_LABEL]: "inferencepool",
      },
      ownerReferences: [
        { apiVersion: "inference.networking.k8s.io/v1", kind: "InferencePool", name, uid: pool.metadata.uid ?? "" },
      ],
    },
    spec: {
      // An empty selector is left out, as Go's omitempty leaves it.
      ...(Object.keys(selector).length > 0 && { selector }),
      type: "ClusterIP",
      clusterIP: "None",
      ports: (spec.targetPorts ?? []).map((target, i) => ({
        name: `http-${i}`,
        protocol: "TCP",
        port: FIRST_PORT + i,
        targetPort: target.number,
        ...(spec.appProtocol && { appProtocol: spec.appProtocol }),
      })),
    },
  };
}
