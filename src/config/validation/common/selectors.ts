// Workload selectors (matchLabels and the older `labels` form) and policy targetRef(s).
import type { Findings } from "../findings.ts";
import { goQuote } from "./format.ts";
import { asObject, asStringMap, field, type JsonObject, listField, objectField, stringField } from "./json.ts";

// The checks both selector forms share: no empty key, no `*` in a key or value.
function validateSelectorLabels(labels: Record<string, string>, out: Findings): boolean {
  let ok = true;
  for (const [key, value] of Object.entries(labels)) {
    const pair = goQuote(`${key}=${value}`);
    if (key === "") {
      out.error(`empty key is not supported in selector: ${pair}`);
      ok = false;
    }
    if (key.includes("*") || value.includes("*")) {
      out.error(`wildcard is not supported in selector: ${pair}`);
      ok = false;
    }
  }
  return ok;
}

/**
 * A policy `selector` / DestinationRule `workloadSelector` (`{ matchLabels }`): label errors, and a
 * warning when present without labels. `out` is positioned at the selector field.
 */
export function validateMatchLabelsSelector(selector: unknown, out: Findings): void {
  const obj = asObject(selector);
  if (!obj) return;
  const labels = asStringMap(field(obj, "matchLabels")) ?? {};
  validateSelectorLabels(labels, out.at("matchLabels"));
  if (Object.keys(labels).length === 0) out.warn("workload selector specified without labels");
}

export interface LabelsSelectorResult {
  /** No label errors. Istio's Sidecar, ServiceEntry and EnvoyFilter stop validating otherwise. */
  ok: boolean;
  /** The selector is present but has no labels; each kind words its own warning. */
  empty: boolean;
}

/** A Sidecar/ServiceEntry/EnvoyFilter `workloadSelector` (`{ labels }`). `out` is at the selector field. */
export function validateLabelsSelector(selector: unknown, out: Findings): LabelsSelectorResult {
  const obj = asObject(selector);
  if (!obj) return { ok: true, empty: false };
  const labels = asStringMap(field(obj, "labels")) ?? {};
  return { ok: validateSelectorLabels(labels, out.at("labels")), empty: Object.keys(labels).length === 0 };
}

/** What Sidecar, ServiceEntry and EnvoyFilter warn (`kind` as Istio words it) for a selector without labels. */
export function emptySelectorWarning(kind: string): string {
  return `${kind}: workload selector specified without labels, will be applied to all services in namespace`;
}

const TARGET_KINDS = new Set([
  "core/Service",
  "networking.istio.io/ServiceEntry",
  "gateway.networking.k8s.io/Gateway",
  "gateway.networking.k8s.io/GatewayClass",
]);

function validateTargetRef(ref: JsonObject, out: Findings): void {
  if (stringField(ref, "name") === "") out.error("targetRef name must be set");
  if (stringField(ref, "namespace") !== "") {
    out.error("targetRef namespace must not be set; cross namespace referencing is not supported");
  }
  const group = stringField(ref, "group");
  const kind = stringField(ref, "kind");
  if (!TARGET_KINDS.has(`${group === "" ? "core" : group}/${kind}`)) {
    out.error(
      `targetRef must be to one of [core/v1/Service networking.istio.io/v1/ServiceEntry gateway.networking.k8s.io/v1/Gateway gateway.networking.k8s.io/v1/GatewayClass] but was ${group}/${kind}`,
    );
  }
}

/**
 * The policy targeting fields of a spec: at most one of `selector` (matchLabels), `targetRef` and
 * `targetRefs`, then each of them. `out` is positioned at the spec.
 */
export function validatePolicyTargets(spec: JsonObject, out: Findings): void {
  const targetRefs = listField(spec, "targetRefs") ?? [];
  const used = [
    objectField(spec, "selector"),
    objectField(spec, "targetRef"),
    targetRefs.length > 0 ? targetRefs : undefined,
  ];
  if (used.filter((x) => x !== undefined).length > 1) {
    out.error("only one of targetRefs or workloadSelector can be set");
  }
  validateMatchLabelsSelector(field(spec, "selector"), out.at("selector"));
  const targetRef = objectField(spec, "targetRef");
  if (targetRef) validateTargetRef(targetRef, out.at("targetRef"));
  targetRefs.forEach((ref, i) => {
    validateTargetRef(asObject(ref) ?? {}, out.at("targetRefs", i));
  });
}
