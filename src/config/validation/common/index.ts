// Validators every Istio kind shares (validation-rules.md §2). Single-rule checks come in two forms:
// `xxxError(...)` returns the message (for callers that compose or prefix it) and `validateXxx(..., out)`
// reports it on a Findings positioned at the field.

export * from "./ciphers.ts";
export * from "./destination.ts";
export * from "./durations.ts";
export * from "./enums.ts";
export * from "./exportto.ts";
export * from "./format.ts";
export * from "./gateways.ts";
export * from "./headers.ts";
export * from "./hosts.ts";
export * from "./json.ts";
export * from "./labels.ts";
export * from "./match.ts";
export * from "./net.ts";
export * from "./ports.ts";
export * from "./report.ts";
export * from "./retries.ts";
export * from "./selectors.ts";
export * from "./trafficpolicy.ts";
