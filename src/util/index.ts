// The face of util/ to other folders: what they import from it, re-exported (issue 27; see
// test/architecture/layers.test.ts). Re-exports only.

export { compareStrings } from "./compare.ts";
export { copyWith } from "./copy-with.ts";
export { deepFreeze } from "./deep-freeze.ts";
export { envBool, parseGoBool } from "./go-bool.ts";
export { hostSubsetOf, hostsMatch, isWildcard } from "./hosts.ts";
export { trimMallocHeap } from "./malloc-trim.ts";
export {
  type MapTable,
  type MemoStats,
  MemoStore,
  type Memos,
  mapTable,
  NO_MEMOS,
  objectTable,
  type WeakTable,
  weakTable,
} from "./memo.ts";
export { NameMemo } from "./name-memo.ts";
export { OverlayMap } from "./overlay-map.ts";
