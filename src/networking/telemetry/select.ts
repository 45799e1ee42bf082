// Which Telemetry resources shape a proxy's telemetry (Istio's applicableTelemetries): the oldest
// mesh-wide one of the root namespace, the oldest namespace-wide one of the proxy's namespace, and the
// oldest one selecting the workload there (by labels or targetRefs). Later ones override earlier ones.
import type { Telemetry } from "../../config/types/index.ts";
import type { ListenerClass } from "../httpfilter/listener-class.ts";

/** Istio's WorkloadMode a listener class reports as. */
export type WorkloadMode = "CLIENT" | "SERVER";

export function workloadMode(listenerClass: ListenerClass): WorkloadMode {
  return listenerClass === "sidecarInbound" ? "SERVER" : "CLIENT";
}

/** A mode selector (`match.mode`) applies to a mode: unset and CLIENT_AND_SERVER apply to both. */
export function modeMatches(selected: string | undefined, mode: WorkloadMode): boolean {
  return selected === undefined || selected === "CLIENT_AND_SERVER" || selected === mode;
}

function selectsWorkloads(telemetry: Telemetry): boolean {
  const spec = telemetry.spec ?? {};
  return (
    Object.keys(spec.selector?.matchLabels ?? {}).length > 0 ||
    spec.targetRef !== undefined ||
    (spec.targetRefs ?? []).length > 0
  );
}

/**
 * The applicable Telemetries, root first. `attached` are those attaching to the proxy (root
 * namespace and its own namespace, oldest first, selectors and targetRefs already checked).
 */
export function applicableTelemetries(
  attached: readonly Telemetry[],
  rootNamespace: string,
  proxyNamespace: string,
): Telemetry[] {
  const inNamespace = (ns: string) => attached.filter((t) => (t.metadata.namespace ?? "") === ns);
  const chain: Telemetry[] = [];
  const root = inNamespace(rootNamespace).find((t) => !selectsWorkloads(t));
  if (root) chain.push(root);
  const own = inNamespace(proxyNamespace);
  if (proxyNamespace !== rootNamespace) {
    const namespaceWide = own.find((t) => !selectsWorkloads(t));
    if (namespaceWide) chain.push(namespaceWide);
  }
  const workload = own.find(selectsWorkloads);
  if (workload) chain.push(workload);
  return chain;
}
