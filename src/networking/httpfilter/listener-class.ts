// Which kind of HTTP connection manager a listener builds (Istio's ListenerClass): read by the HTTP
// filters, the listener builders and the Telemetry API alike.
/** Istio's ListenerClass: which kind of HTTP connection manager the filters are for. */
export type ListenerClass = "sidecarInbound" | "sidecarOutbound" | "gateway";
