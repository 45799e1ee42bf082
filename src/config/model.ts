// The shapes every stage of the config pipeline shares: a config object as read from a source,
// and the findings (errors, warnings) that decoding and validation report about it.

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  resourceVersion?: string;
  generation?: number;
  uid?: string;
  creationTimestamp?: string;
  [key: string]: unknown;
}

/** A Kubernetes-style object: Istio CRDs, Gateway API kinds and the built-in kinds the mesh reads. */
export interface ConfigObject<Spec = unknown> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Spec;
  status?: unknown;
  /** Built-in kinds (Service, Secret, ...) keep their other top-level fields (data, subsets, ...). */
  [key: string]: unknown;
}

/** One finding about an object. `path` is a dotted field path into the object ("spec.http[0].route"). */
export interface Issue {
  path: string;
  message: string;
}

export interface ValidationResult {
  errors: Issue[];
  warnings: Issue[];
}

export function emptyResult(): ValidationResult {
  return { errors: [], warnings: [] };
}

/** Where a document came from, for error messages (`file:line`). */
export interface SourcePosition {
  file: string;
  /** 0-based index of the document within the file. */
  index: number;
  /** 1-based line of the document's first line. */
  line: number;
}
