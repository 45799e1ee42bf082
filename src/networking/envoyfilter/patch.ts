// One EnvoyFilter config patch, compiled (patch-set.ts makes them), and the error of one that cannot
// be applied: what the appliers and the status (status.ts) speak of.
import type { Message } from "@bufbuild/protobuf";
import type { EnvoyFilterConfigPatches, EnvoyFilterConfigPatchesMatch } from "../../config/types/index.ts";

export type ApplyTo = Exclude<NonNullable<EnvoyFilterConfigPatches["applyTo"]>, "INVALID">;
export type Operation = Exclude<NonNullable<NonNullable<EnvoyFilterConfigPatches["patch"]>["operation"]>, "INVALID">;
export type PatchContext = NonNullable<EnvoyFilterConfigPatchesMatch["context"]>;

/** One config patch, ready to apply. */
export interface Patch {
  /** Unique in the process: patches are compiled once per EnvoyFilter object. */
  id: number;
  /** `namespace/name` of its EnvoyFilter (Istio's Key, the metric's name label). */
  filter: string;
  /** Its index in the filter's configPatches. */
  index: number;
  applyTo: ApplyTo;
  operation: Operation;
  match: EnvoyFilterConfigPatchesMatch;
  context: PatchContext;
  /** The decoded value; absent for REMOVE. Never mutated: appliers clone it. */
  value?: Message;
  proxyVersion?: RegExp;
}

/** A patch skipped before or while applying, and why. */
export interface PatchError {
  filter: string;
  index: number;
  /** The patch's applyTo, when it has a valid one. */
  applyTo?: ApplyTo;
  /** Field path inside the patch (`patch.value.filterChains[0].bogus`); empty for the patch itself. */
  path: string;
  message: string;
}

/** An error of `patch` at `path` inside it. */
export function patchError(patch: Patch, path: string, message: string): PatchError {
  return { filter: patch.filter, index: patch.index, applyTo: patch.applyTo, path, message };
}
