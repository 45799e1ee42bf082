// What the file and memory sources do to an object before it may enter the store: the defaulting
// kubectl apply would do, then the one validation path every source shares.
import { type ConfigObject, type Issue, lookupKind, validateObject } from "../config/index.ts";

/** Where an object without a namespace lands, as with kubectl apply. */
export const DEFAULT_NAMESPACE = "default";

export interface Admission {
  /** The object as it would be stored (namespace defaulted); store it only if `errors` is empty. */
  object: ConfigObject;
  errors: Issue[];
  warnings: Issue[];
}

export function admitObject(obj: ConfigObject): Admission {
  const namespaced = lookupKind(obj.apiVersion, obj.kind)?.namespaced ?? false;
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
