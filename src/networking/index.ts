// The face of networking/ to other folders: what they import from it, re-exported (issue 27; see
// test/architecture/layers.test.ts). Re-exports only.
export { toDuration } from "./duration.ts";
