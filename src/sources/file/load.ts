// What one config file contributes to the store, given its new text and what it contributed before.
//
// A file is applied whole or not at all, and one bad object never takes its neighbours down:
// - while any document of the file does not decode (a syntax error: most often a file caught
//   half-written), nothing of the new text is applied: the file's last good objects all stay;
// - a document that decodes and validates defines its object;
// - a document that decodes but fails validation keeps its object's last good version from this
//   file (or adds nothing, if there was none);
// - a document of an unknown kind in a mesh API group (`VirtualServce`, a typo likely) names no
//   object Sluice can tell, so while the file holds one, no object leaves the file: those the new
//   text does not define keep their last good version (the misspelled one among them).
// An object defined twice in one file is reported at the second place and the first one counts.
// Kinds outside the mesh's API groups (a Deployment in a directory of manifests) are skipped with a
// warning.
//
// Judging the documents (decode, default, validate) is `judgeDocuments`, a pure function of the text
// whose result is plain data, so that large files can be judged on a worker thread (judge.ts);
// `applyVerdicts` then weighs the verdicts against the file's last good objects.
import {
  type ConfigObject,
  decodeConfigText,
  KINDS,
  keyString,
  lookupKindAnyVersion,
  objectKeyOf,
  parseApiVersion,
} from "../../config/index.ts";
import { admitObject, describeIssue } from "../store-admit.ts";
import type { SourceProblem } from "../types.ts";

export interface FileLoad {
  /** The objects the file contributes now, to replace what it contributed before. */
  objects: ConfigObject[];
  problems: SourceProblem[];
  /** Validation warnings, to be logged; they do not keep an object out. */
  warnings: SourceProblem[];
}

/** What one document of a file says, judged on its own. Plain data: it may cross from a worker thread. */
export type DocumentVerdict =
  /** Does not decode: a syntax error, or not an object with apiVersion and kind. */
  | { verdict: "unreadable"; problem: SourceProblem }
  /** Of a kind outside the mesh's API groups: skipped. */
  | { verdict: "foreign"; warning: SourceProblem }
  /** Of an unknown kind in a mesh API group: which object it stands for cannot be told. */
  | { verdict: "unidentified"; problem: SourceProblem }
  /** An object, valid if `errors` is empty. */
  | {
      verdict: "object";
      /** "group/Kind namespace/name": how problems name an object, and the identity objects are matched by. */
      ref: string;
      line: number;
      where: string;
      object: ConfigObject;
      errors: string[];
      warnings: string[];
    };

export function loadFile(source: string, file: string, text: string, previous: readonly ConfigObject[]): FileLoad {
  return applyVerdicts(source, judgeDocuments(source, file, text), previous);
}

/** Decodes, defaults and validates every document of `text`. */
export function judgeDocuments(source: string, file: string, text: string): DocumentVerdict[] {
  return decodeConfigText(text, file).map((doc): DocumentVerdict => {
    const where = `${file}:${doc.position.line}`;
    if (!doc.object) return { verdict: "unreadable", problem: { source, where, message: doc.error ?? "unreadable" } };
    const known = lookupKindAnyVersion(doc.object.apiVersion, doc.object.kind) !== undefined;
    if (!known && !MESH_GROUPS.has(parseApiVersion(doc.object.apiVersion).group)) {
      const message = `${doc.object.apiVersion} ${doc.object.kind} is not a kind Sluice reads; skipped`;
      return { verdict: "foreign", warning: { source, where, message } };
    }
    const admission = admitObject(doc.object);
    const ref = refOf(admission.object);
    if (!known) {
      const cause = admission.errors.map(describeIssue).join("; ");
      const message = `${ref}: ${cause}; until this document is fixed, no object leaves ${file}`;
      return { verdict: "unidentified", problem: { source, where, message } };
    }
    return {
      verdict: "object",
      ref,
      line: doc.position.line,
      where,
      object: admission.object,
      errors: admission.errors.map(describeIssue),
      warnings: admission.warnings.map(describeIssue),
    };
  });
}

/** The file's objects given its documents' verdicts and its last good objects. */
export function applyVerdicts(
  source: string,
  verdicts: readonly DocumentVerdict[],
  previous: readonly ConfigObject[],
): FileLoad {
  const problems: SourceProblem[] = [];
  const warnings: SourceProblem[] = [];
  const lastGood = new Map(previous.map((obj) => [refOf(obj), obj]));
  const inForce = new Map<string, ConfigObject>();
  /** The line each object was first defined at. */
  const definedAt = new Map<string, number>();
  let decodedAll = true;
  let identifiedAll = true;

  for (const doc of verdicts) {
    switch (doc.verdict) {
      case "unreadable":
        decodedAll = false;
        problems.push(doc.problem);
        continue;
      case "foreign":
        warnings.push(doc.warning);
        continue;
      case "unidentified":
        identifiedAll = false;
        problems.push(doc.problem);
        continue;
    }
    const { ref, where } = doc;
    const firstLine = definedAt.get(ref);
    if (firstLine !== undefined) {
      problems.push({ source, where, message: `${ref} is already defined at line ${firstLine}; this one is ignored` });
      continue;
    }
    definedAt.set(ref, doc.line);
    for (const w of doc.warnings) warnings.push({ source, where, message: `${ref}: ${w}` });
    if (doc.errors.length > 0) {
      for (const e of doc.errors) problems.push({ source, where, message: `${ref}: ${e}` });
      const kept = lastGood.get(ref);
      if (kept) inForce.set(ref, kept);
      continue;
    }
    inForce.set(ref, doc.object);
  }
  if (!decodedAll) return { objects: [...previous], problems, warnings };
  if (!identifiedAll) {
    for (const [ref, obj] of lastGood) if (!definedAt.has(ref)) inForce.set(ref, obj);
  }
  return { objects: [...inForce.values()], problems, warnings };
}

/** Mesh config groups: Istio's and the Gateway API's. */
const MESH_GROUPS = new Set(KINDS.filter((k) => k.family !== "kubernetes").map((k) => k.group));

function refOf(obj: ConfigObject): string {
  return keyString(objectKeyOf(obj));
}
