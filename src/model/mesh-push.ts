// The mesh's push: a push context over the model's PushSnapshot, as buildPushContext makes it. The
// generators, the push-context builders and the debug endpoints read `push.snapshot` through these
// types; the ADS server and the push pipeline stay generic over the snapshot (push-context.ts).
import { newPushContext, type PushContext, type PushRequest } from "./push-context.ts";
import type { PushInputs } from "./push-inputs.ts";
import { PushSnapshot } from "./push-snapshot.ts";

/** A push context over the mesh's snapshot. */
export type MeshPush = PushContext<PushSnapshot>;
/** A push request carrying a mesh push context. */
export type MeshPushRequest = PushRequest<PushSnapshot>;

/**
 * The push context over `inputs`. Indexes whose inputs are the same objects as in `previous` are
 * reused (with their Sidecar scopes), so a push after an endpoint-only change rebuilds nothing.
 */
export function buildPushContext(inputs: PushInputs, previous?: MeshPush, now = new Date()): MeshPush {
  const push = newPushContext(new PushSnapshot(inputs, previous?.snapshot), now);
  for (const { host, subset } of push.snapshot.destinationRules.duplicateSubsets) {
    push.status.add(
      "pilot_destrule_subsets",
      host,
      "",
      `Duplicate subset ${subset} found while merging destination rules for ${host}`,
    );
  }
  return push;
}
