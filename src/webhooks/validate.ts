// The validation webhook's decision for one AdmissionRequest (Istio's pkg/webhooks/validation/server
// `validate`): only CREATE and UPDATE are checked; the kind is looked up by group and kind whatever
// the version; the checks are `validateObject`'s, the ones `sluice validate` runs; a top-level field
// other than apiVersion/kind/metadata/spec/status is reported only once the rest is valid.
import {
  type ConfigObject,
  DEFAULT_CONTEXT,
  Findings,
  type Issue,
  KINDS,
  kindKey,
  parseApiVersion,
  type ValidationContext,
  validateObject,
} from "../config/index.ts";
import { validateStructure } from "../config/schema/index.ts";
import { asObject, goMultiError } from "../config/validation/common/index.ts";
import type { AdmissionRequest, AdmissionResponse } from "./admission.ts";
import type { ValidationFailure } from "./metrics.ts";

const CRD_TOP_LEVEL = new Set(["apiVersion", "kind", "metadata", "spec", "status"]);

// Istio's webhook knows its own kinds and the Gateway API's (collections.PilotGatewayAPI).
const WEBHOOK_KINDS = new Map(KINDS.filter((k) => k.family !== "kubernetes").map((k) => [kindKey(k.group, k.kind), k]));

/** The answer, and why the config was refused or not checked (for the metrics). */
export interface ValidationOutcome {
  response: AdmissionResponse;
  failure?: ValidationFailure;
}

export function validateAdmission(
  request: AdmissionRequest,
  ctx: ValidationContext = DEFAULT_CONTEXT,
): ValidationOutcome {
  if (request.operation !== "CREATE" && request.operation !== "UPDATE") {
    return { response: { allowed: true }, failure: "unsupported_operation" };
  }
  const obj = asObject(request.object);
  if (!obj) return denied("yaml_decode_error", "cannot decode configuration: unexpected end of JSON input");
  const apiVersion = typeof obj.apiVersion === "string" ? obj.apiVersion : "";
  const kind = typeof obj.kind === "string" ? obj.kind : "";
  const { group, version } = parseApiVersion(apiVersion);
  const info = WEBHOOK_KINDS.get(kindKey(group, kind));
  if (!info) return denied("unknown_type", `unrecognized type ${group}/${version}, Kind=${kind}`);

  const metadata = asObject(obj.metadata) ?? {};
  const config = {
    ...obj,
    // Any served version is validated with the kind's schema, as Istio's lookup ignores the version.
    apiVersion: info.versions.includes(version) ? apiVersion : `${group}/${info.preferredVersion}`,
    kind,
    metadata: { ...metadata, namespace: metadata.namespace ?? request.namespace },
  } as ConfigObject;
  const result = validateObject(config, ctx);
  // Schema errors are the API server's to report (it checks the CRD schema before any webhook), in
  // its "<path>: <message>" form; Istio's own messages name what they are about.
  const structural = new Findings("");
  validateStructure(config, info, structural);
  const isStructural = (issue: Issue) =>
    structural.errors.some((e) => e.path === issue.path && e.message === issue.message);
  const isUnknownField = (issue: Issue) => /^[^.[]+$/.test(issue.path) && !CRD_TOP_LEVEL.has(issue.path);
  const errors = result.errors
    .filter((e) => !isUnknownField(e))
    .map((e) => (isStructural(e) && e.path !== "" ? `${e.path}: ${e.message}` : e.message));
  if (errors.length > 0) {
    const message = errors.length === 1 ? errors[0] : goMultiError(errors);
    return denied("invalid_resource", `configuration is invalid: ${message}`);
  }
  const unknownField = result.errors.find(isUnknownField);
  if (unknownField) return denied("invalid_resource", unknownField.message);
  return { response: { allowed: true, warnings: result.warnings.map((w) => w.message) } };
}

function denied(failure: ValidationFailure, message: string): ValidationOutcome {
  return { response: { allowed: false, message }, failure };
}
