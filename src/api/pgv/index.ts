// Envoy's protoc-gen-validate constraints, checked against generated resources.
export { type CheckOptions, checkMessage, type Violation } from "./check.ts";
