// The Telemetry API for one proxy: access logs, tracing and istio.stats config per listener class,
// from the Telemetries that apply to it (root namespace, namespace, workload) over MeshConfig's
// defaultProviders and extensionProviders.
import type { MeshConfig } from "../../config/index.ts";
import type { Telemetry } from "../../config/types/index.ts";
import type { ProxyNode } from "../../model/index.ts";
import type { RegistryService } from "../authz/index.ts";
import type { ListenerClass } from "../httpfilter/listener-class.ts";
import { mergeAccessLogging, telemetryAccessLogs } from "./accesslog.ts";
import { mergeMetrics, statsConfig } from "./metrics.ts";
import { applicableTelemetries, workloadMode } from "./select.ts";
import { buildHcmTracing, mergeTracing } from "./tracing.ts";
import type { ProxyTelemetry } from "./types.ts";

export { applicableTelemetries } from "./select.ts";
export type { HcmTracing, ProxyTelemetry } from "./types.ts";

export interface TelemetryInputs {
  mesh: MeshConfig;
  proxy: ProxyNode;
  rootNamespace: string;
  /** The Telemetries attaching to the proxy (root namespace and its own, oldest first). */
  telemetries: readonly Telemetry[];
  /** Registry services, for resolving the providers' `service` to clusters. */
  services: readonly RegistryService[];
  report?: (problem: string) => void;
}

/** The proxy's telemetry, each answer computed once per listener class. */
export function buildProxyTelemetry(inputs: TelemetryInputs): ProxyTelemetry {
  const { mesh, proxy, services, report } = inputs;
  const chain = applicableTelemetries(inputs.telemetries, inputs.rootNamespace, proxy.configNamespace);
  const metrics = mergeMetrics(chain, mesh);
  const memo = <T>(compute: (listenerClass: ListenerClass) => T) => {
    const cache = new Map<ListenerClass, T>();
    return (listenerClass: ListenerClass): T => {
      if (!cache.has(listenerClass)) cache.set(listenerClass, compute(listenerClass));
      return cache.get(listenerClass) as T;
    };
  };
  return {
    accessLogs: memo((listenerClass) => {
      const providers = mergeAccessLogging(chain, mesh, workloadMode(listenerClass));
      const logs = providers && telemetryAccessLogs(providers, mesh, services, report);
      // Istio's builders fall back to the mesh's accessLogFile whenever Telemetry yields no log at all.
      return logs && logs.length > 0 ? logs : undefined;
    }),
    tracing: memo((listenerClass) =>
      buildHcmTracing(mergeTracing(chain, mesh, workloadMode(listenerClass)), mesh, proxy, services, report),
    ),
    stats: memo((listenerClass) => statsConfig(metrics, mesh, listenerClass, proxy.type === "waypoint")),
  };
}
