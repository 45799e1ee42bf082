// The memory source, for tests and embedders: objects put in by code go through the same defaulting
// and validation as files do. An invalid object is reported and its last good version stays.
import { type ConfigObject, keyString, type ObjectKey, objectKeyOf } from "../config/index.ts";
import { type Admission, admitObject, describeIssue } from "./store-admit.ts";
import type { ConfigWriter } from "./types.ts";

export class MemorySource {
  constructor(
    private readonly writer: ConfigWriter,
    readonly source = "memory",
  ) {}

  /** Adds or updates an object; returns what validation found (nothing is stored when there are errors). */
  apply(obj: ConfigObject): Admission {
    const admission = admitObject(obj);
    const key = objectKeyOf(admission.object);
    const where = problemScope(key);
    this.writer.reportProblems(
      this.source,
      where,
      admission.errors.map((e) => ({ source: this.source, where, message: describeIssue(e) })),
    );
    if (admission.errors.length === 0) this.writer.upsert(this.source, admission.object);
    return admission;
  }

  delete(key: ObjectKey): void {
    this.writer.reportProblems(this.source, problemScope(key), []);
    this.writer.delete(this.source, key);
  }
}

/** Problems are kept per object, as the Kubernetes source keeps them: "group/Kind namespace/name". */
function problemScope(key: ObjectKey): string {
  return keyString(key);
}
