// What one config file contributes to the store, given its new text and what it contributed before.
//
// Every document is judged on its own, so one bad document never takes its neighbours down:
// - a document that decodes and validates defines its object;
// - a document that decodes but fails validation keeps its object's last good version from this
//   file (or adds nothing, if there was none);
// - a document that does not decode (a syntax error, a file caught half-written) names no object, so
//   while any document of the file is unreadable, no object leaves the file: those the new text does
//   not define keep their last good version. Objects are removed once the whole file decodes again.
// An object defined twice in one file is reported at the second place and the first one counts.
// Kinds outside the mesh's API groups (a Deployment in a directory of manifests) are skipped with a
// warning; an unknown kind or version in an Istio or Gateway API group is a problem (a typo, likely).
import { decodeConfigText } from "../../config/decode.ts";
import { type ConfigObject, KINDS, lookupKind, parseApiVersion } from "../../config/index.ts";
import { collectionKeyOf, objectKeyOf } from "../store.ts";
import { admitObject, describeIssue } from "../store-admit.ts";
import type { SourceProblem } from "../types.ts";

export interface FileLoad {
  /** The objects the file contributes now, to replace what it contributed before. */
  objects: ConfigObject[];
  problems: SourceProblem[];
  /** Validation warnings, to be logged; they do not keep an object out. */
  warnings: SourceProblem[];
}

export function loadFile(source: string, file: string, text: string, previous: readonly ConfigObject[]): FileLoad {
  const problems: SourceProblem[] = [];
  const warnings: SourceProblem[] = [];
  const lastGood = new Map(previous.map((obj) => [refOf(obj), obj]));
  const inForce = new Map<string, ConfigObject>();
  /** The line each object was first defined at. */
  const definedAt = new Map<string, number>();
  let decodedAll = true;

  for (const doc of decodeConfigText(text, file)) {
    const where = `${file}:${doc.position.line}`;
    if (!doc.object) {
      decodedAll = false;
      problems.push({ source, where, message: doc.error ?? "unreadable document" });
      continue;
    }
    if (isForeignKind(doc.object)) {
      warnings.push({
        source,
        where,
        message: `${doc.object.apiVersion} ${doc.object.kind} is not a kind Sluice reads; skipped`,
      });
      continue;
    }
    const admission = admitObject(doc.object);
    const ref = refOf(admission.object);
    const firstLine = definedAt.get(ref);
    if (firstLine !== undefined) {
      problems.push({ source, where, message: `${ref} is already defined at line ${firstLine}; this one is ignored` });
      continue;
    }
    definedAt.set(ref, doc.position.line);
    for (const w of admission.warnings) warnings.push({ source, where, message: `${ref}: ${describeIssue(w)}` });
    if (admission.errors.length > 0) {
      for (const e of admission.errors) problems.push({ source, where, message: `${ref}: ${describeIssue(e)}` });
      const kept = lastGood.get(ref);
      if (kept) inForce.set(ref, kept);
      continue;
    }
    inForce.set(ref, admission.object);
  }
  if (!decodedAll) {
    for (const [ref, obj] of lastGood) if (!definedAt.has(ref)) inForce.set(ref, obj);
  }
  return { objects: [...inForce.values()], problems, warnings };
}

/** Mesh config groups: Istio's and the Gateway API's. */
const MESH_GROUPS = new Set(KINDS.filter((k) => k.family !== "kubernetes").map((k) => k.group));

/** Not a kind Sluice knows, nor one of a mesh config group: nothing Sluice would read. */
function isForeignKind(obj: ConfigObject): boolean {
  return !lookupKind(obj.apiVersion, obj.kind) && !MESH_GROUPS.has(parseApiVersion(obj.apiVersion).group);
}

/** "group/Kind namespace/name": how problems name an object, and the identity objects are matched by. */
function refOf(obj: ConfigObject): string {
  const key = objectKeyOf(obj);
  return `${key.kindKey} ${collectionKeyOf(key)}`;
}
