// The one validation path for every config object, used by the CLI, the webhook and every source:
// kind lookup → metadata checks → structural (schema + CEL) → semantic (Istio's webhook rules) →
// unknown top-level fields. Nothing here throws on bad input; everything is a finding.

import { parseGoBool } from "../util/index.ts";
import { type KindInfo, lookupKind } from "./kinds.ts";
import type { ConfigObject, ValidationResult } from "./model.ts";
import { validateStructure } from "./schema/index.ts";
import { asObject } from "./validation/common/json.ts";
import { DEFAULT_CONTEXT, Findings, semanticValidator, type ValidationContext } from "./validation/index.ts";

const CRD_TOP_LEVEL = new Set(["apiVersion", "kind", "metadata", "spec", "status"]);
const DRY_RUN = "istio.io/dry-run";
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function validateObject(obj: ConfigObject, ctx: ValidationContext = DEFAULT_CONTEXT): ValidationResult {
  const out = new Findings("");
  const info = lookupKind(obj.apiVersion, obj.kind);
  if (!info) {
    out.at("apiVersion").error(`unrecognized type ${obj.apiVersion}, Kind=${obj.kind}`);
    return out;
  }
  // A bad name is reported with the rest, as the API server does; only Istio's annotation checks stop early.
  checkName(obj, info, out.at("metadata"));
  if (info.family === "istio") {
    const before = out.errors.length;
    checkIstioAnnotations(obj, out.at("metadata.annotations"));
    if (out.errors.length > before) return out;
  }
  validateStructure(obj, info, out);
  if (info.family === "istio") {
    semanticValidator(info.group, info.kind)?.(obj, ctx, out.at("spec"));
  }
  // Built-in Kubernetes kinds carry other top-level fields (data, subsets, ...); CRD kinds do not.
  if (info.family !== "kubernetes") {
    for (const key of Object.keys(obj)) {
      if (!CRD_TOP_LEVEL.has(key)) {
        out.at(key).error(`unknown field "${key}" on ${obj.kind} resource ${objectRef(obj)}`);
      }
    }
  }
  return out;
}

export function objectRef(obj: ConfigObject): string {
  return `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
}

function checkName(obj: ConfigObject, info: KindInfo, out: Findings): void {
  const name = obj.metadata?.name;
  if (typeof name !== "string" || name === "") {
    out.at("name").error(`${obj.kind} has no metadata.name`);
    return;
  }
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    out
      .at("name")
      .error(
        `invalid name "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      );
  }
  if (!info.namespaced && obj.metadata.namespace) {
    out.at("namespace").error(`${obj.kind} is cluster-scoped and cannot have a namespace`);
  }
}

// Istio's validateMetadata: annotations reserved for istiod, and dry-run only on ALLOW/DENY policies.
function checkIstioAnnotations(obj: ConfigObject, out: Findings): void {
  const annotations = obj.metadata.annotations ?? {};
  const ref = objectRef(obj);
  if (DRY_RUN in annotations) {
    if (obj.kind !== "AuthorizationPolicy") {
      out.error(`${ref} has unsupported annotation ${DRY_RUN}, please remove the annotation`);
      return;
    }
    // Runs before structural validation: the spec is unvalidated, so a non-string action reads as unset
    // (the structural check reports it).
    const set = asObject(obj.spec)?.action;
    const action = (typeof set === "string" ? set : "ALLOW").toUpperCase();
    if (action !== "ALLOW" && action !== "DENY") {
      out.error(
        `the annotation ${DRY_RUN} currently only supports action ALLOW/DENY, found action ${action} in ${ref}`,
      );
      return;
    }
    const value = annotations[DRY_RUN];
    if (parseGoBool(value) === undefined) {
      out.error(
        `${ref} has annotation ${DRY_RUN} with invalid value (${value}): strconv.ParseBool: parsing "${value}": invalid syntax`,
      );
      return;
    }
  }
  if ("internal.istio.io/webhook-always-reject" in annotations) {
    out.error(`"internal.istio.io/webhook-always-reject" annotation found, rejecting`);
    return;
  }
  for (const key of ["internal.istio.io/parent-namespace", "internal.istio.io/parents"]) {
    if (key in annotations) {
      out.error(`"${key}" annotation found, this may not be set by users`);
      return;
    }
  }
}
