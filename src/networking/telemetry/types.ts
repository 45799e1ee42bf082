// What the Telemetry API gives one proxy's listener builders (index.ts builds it), kept apart from
// the builders so that the HTTP filter and listener types can name it.
import type { JsonObject } from "@bufbuild/protobuf";
import type { accesslog, hcm } from "../../api/index.ts";
import type { ListenerClass } from "../httpfilter/listener-class.ts";

/** What the listener builders ask of the Telemetry API, per listener class. */
export interface ProxyTelemetry {
  /** The access logs; undefined when Telemetry yields none (the mesh's accessLogFile applies then, as in Istio). */
  accessLogs(listenerClass: ListenerClass): accesslog.AccessLog[] | undefined;
  /** The HCM tracing config (legacy mesh settings when no Telemetry tracing applies). */
  tracing(listenerClass: ListenerClass): HcmTracing;
  /** The istio.stats config; undefined when no Prometheus provider collects metrics for the class. */
  stats(listenerClass: ListenerClass): JsonObject | undefined;
}

/** What the HCM gets from tracing: its tracing config (none: no tracing) and the request id sampling flag. */
export interface HcmTracing {
  tracing?: hcm.HttpConnectionManager_Tracing;
  useRequestIdForTraceSampling: boolean;
}
