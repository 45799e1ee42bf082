// What the file and memory sources do to an object before it may enter the store: the defaulting
// kubectl apply would do, then the one validation path every source shares.
import { type ConfigObject, type Issue, lookupKindAnyVersion, validateObject } from "../config/index.ts";

/** Where an object without a namespace lands, as with kubectl apply. */
export const DEFAULT_NAMESPACE = "default";

export interface Admission {
  /** The object as it would be stored (namespace defaulted); store it only if `errors` is empty. */
  object: ConfigObject;
  errors: Issue[];
  warnings: Issue[];
}

export function admitObject(obj: ConfigObject): Admission {
  // By group and kind alone, so an object at a version Sluice does not serve has the same identity
  // (and keeps its last good version) rather than losing its namespace.
  const namespaced = lookupKindAnyVersion(obj.apiVersion, obj.kind)?.namespaced ?? false;
  const object =
    namespaced && !obj.metadata.namespace
      ? { ...obj, metadata: { ...obj.metadata, namespace: DEFAULT_NAMESPACE } }
      : obj;
  const { errors, warnings } = validateObject(object);
  return { object, errors, warnings };
}

/** One finding as a line of text: "path: message". */
export function describeIssue(issue: Issue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}
