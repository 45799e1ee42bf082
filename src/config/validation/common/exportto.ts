// exportTo lists (Istio's validateExportTo and visibility rules).
import type { Findings } from "../findings.ts";
import { isDns1123Label } from "./hosts.ts";

export interface ExportToOptions {
  /** ServiceEntry allows `~` (visible to no one but its own workloads). */
  serviceEntry?: boolean;
  /** A DestinationRule with a workloadSelector may only be exported to its own namespace. */
  destinationRuleWithSelector?: boolean;
}

function visibilityError(value: string): string | undefined {
  if (value === "." || value === "*") return undefined;
  if (value === "~") return "exportTo ~ (none) is not allowed for Istio configuration objects";
  return isDns1123Label(value) ? undefined : "only .,*, or a valid DNS 1123 label is allowed as exportTo entry";
}

/** `namespace` is the config's own namespace (`.` stands for it). `out` is at the exportTo field. */
export function validateExportTo(namespace: string, exportTo: string[], opts: ExportToOptions, out: Findings): void {
  if (exportTo.length === 0) return;
  const accepted = new Set<string>();
  for (const entry of exportTo) {
    const key = entry === "." ? namespace : entry;
    if (accepted.has(key)) {
      out.error(
        key !== entry
          ? `duplicate entries in exportTo: . and current namespace ${namespace}`
          : `duplicate entries in exportTo for entry ${entry}`,
      );
      continue;
    }
    const error = opts.serviceEntry && entry === "~" ? undefined : visibilityError(key);
    if (error) out.error(error);
    else accepted.add(key);
  }
  if (opts.destinationRuleWithSelector && accepted.size > 0) {
    if (!accepted.has(namespace)) {
      out.error("destination rule with workload selector cannot have exportTo beyond current namespace");
    } else if (accepted.size > 1) {
      out.error("destination rule with workload selector cannot have multiple entries in exportTo");
    }
  }
  if (accepted.has("*") && exportTo.length > 1) {
    out.error("cannot have both public (*) and non-public exportTo values for a resource");
  }
  if (accepted.has("~") && exportTo.length > 1) {
    out.error("cannot export service entry to no one (~) and someone");
  }
}
