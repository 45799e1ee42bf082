// The face of analysis/ to other folders: what they import from it, re-exported (issue 27; see
// test/architecture/layers.test.ts). Re-exports only.
export { type ClusterConfig, readCluster } from "./cluster.ts";
export { chunkLines } from "./field-lines.ts";
export { type InClusterAnalysis, inClusterAnalysis, type StatusFinding, type StatusMessage } from "./incluster.ts";
export { isWorseThanOrEqualTo, type Level, type Message } from "./message.ts";
export { MESSAGES } from "./messages.ts";
export { CONFIG_ANALYSIS_URL, formatMessages, type OutputFormat } from "./output.ts";
export { ALL_ANALYZERS, selectAnalyzers } from "./registry.ts";
export { resourceKind } from "./resource.ts";
export { type AnalysisInput, FILE_EXCLUDED_KINDS, runAnalysis, skippedAnalyzers } from "./run.ts";
