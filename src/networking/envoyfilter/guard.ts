// Patches applied to one generated resource without ever breaking it: the resource is cloned (the
// builders' output is shared between proxies), patched, and checked with the PGV rules Envoy
// enforces. When the patched resource breaks a rule the unpatched one kept, the patches are replayed
// one by one and each one that introduces a violation is skipped with an error.
import { clone, type DescMessage, type Message } from "@bufbuild/protobuf";
import { checkMessage, type Violation } from "../../api/pgv/index.ts";
import { weakTable } from "../../util/index.ts";
import { type ApplyTo, type Patch, patchError } from "./patch.ts";
import { PatchSet } from "./patch-set.ts";
import { envoyFilterStatus } from "./status.ts";

/** Where appliers say what each patch did to the resource. */
export class Marks {
  private readonly marks: [Patch, boolean][] = [];
  changed = false;

  mark(patch: Patch, applied: boolean): void {
    this.marks.push([patch, applied]);
    if (applied) this.changed = true;
  }

  flush(): void {
    for (const [patch, applied] of this.marks) envoyFilterStatus.record(patch, applied);
  }
}

/** Applies `subset` to `target` (a private clone) and returns it, or undefined when a patch removed it. */
export type Applier<T> = (subset: PatchSet, target: T, marks: Marks) => T | undefined;

/**
 * The violations that count: an Any of a type Sluice does not know (the Istio extensions the
 * builders send) is not a sign of broken config, and patch values cannot bring in such types.
 */
function violationsOf(schema: DescMessage, message: Message): Violation[] {
  return checkMessage(schema, message).filter((v) => v.rule !== "any.known_type");
}

function violationCounts(schema: DescMessage, message: Message): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of violationsOf(schema, message)) {
    const key = `${v.rule}|${v.message}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Violations of `patched` beyond those `original` already had (paths move when lists change). */
function newViolations(schema: DescMessage, before: Map<string, number>, patched: Message): Violation[] {
  const seen = new Map<string, number>();
  return violationsOf(schema, patched).filter((v) => {
    const key = `${v.rule}|${v.message}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    return n > (before.get(key) ?? 0);
  });
}

// Results per generated resource object, which the builders share between the proxies of a push:
// proxies getting the same patches in the same context get the same patched object (patched, checked
// and encoded once).
const RESULTS = weakTable<Message, Map<string, Message | undefined>>("envoyfilter/patchedResources");

/**
 * `original` with the patches of `kinds` applied; the original itself when none changes it.
 * `context` names everything besides the patches that `apply` reads (the patch context, ...).
 */
export function patchResource<T extends Message>(
  schema: DescMessage,
  original: T,
  set: PatchSet,
  kinds: readonly ApplyTo[],
  context: string,
  apply: Applier<T>,
): T | undefined {
  const candidates = kinds.flatMap((k) => set.of(k));
  if (candidates.length === 0) return original;
  const key = `${context}|${candidates.map((p) => p.id).join(",")}`;
  const results = set.memos.weak(RESULTS);
  const cached = results.get(original);
  if (cached?.has(key)) return cached.get(key) as T | undefined;
  const result = patchUncached(schema, original, candidates, apply);
  if (cached) cached.set(key, result);
  else results.set(original, new Map([[key, result]]));
  return result;
}

function patchUncached<T extends Message>(
  schema: DescMessage,
  original: T,
  candidates: readonly Patch[],
  apply: Applier<T>,
): T | undefined {
  const attempt = (patches: readonly Patch[]) => {
    const marks = new Marks();
    return { result: apply(new PatchSet(patches, []), clone(schema, original) as T, marks), marks };
  };
  const full = attempt(candidates);
  if (!full.marks.changed) {
    full.marks.flush();
    return original;
  }
  if (full.result === undefined) {
    full.marks.flush();
    return undefined;
  }
  // The common case, a clean result, costs one check; the original is checked only when it is not.
  if (violationsOf(schema, full.result).length === 0) {
    full.marks.flush();
    return full.result;
  }
  const before = violationCounts(schema, original);
  if (newViolations(schema, before, full.result).length === 0) {
    full.marks.flush();
    return full.result;
  }
  const allowed: Patch[] = [];
  for (const patch of candidates) {
    const trial = attempt([...allowed, patch]).result;
    const broken = trial ? newViolations(schema, before, trial) : [];
    if (broken.length === 0) {
      allowed.push(patch);
      continue;
    }
    const first = broken[0];
    envoyFilterStatus.error(
      patchError(
        patch,
        "patch.value",
        `the patched ${schema.typeName} "${resourceName(original)}" would be rejected by Envoy: ${first.path}: ${first.message}`,
      ),
    );
  }
  const final = attempt(allowed);
  final.marks.flush();
  return final.result;
}

function resourceName(message: Message): string {
  const name = (message as Message & { name?: unknown }).name;
  return typeof name === "string" ? name : "";
}
