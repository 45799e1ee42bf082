// Route destinations (host, subset, port) as VirtualService, Sidecar egressProxy and mirrors use them.
import type { Findings } from "../findings.ts";
import { wildcardDomainError } from "./hosts.ts";
import { asObject, numberField, objectField, stringField } from "./json.ts";
import { portError, validateSubsetName } from "./ports.ts";
import { report } from "./report.ts";

/** Istio's validateDestination. `out` is positioned at the destination; absent is fine. */
export function validateDestination(destination: unknown, out: Findings): void {
  const dest = asObject(destination);
  if (!dest) return;
  const host = stringField(dest, "host");
  report(out.at("host"), host === "*" ? `invalid destination host ${host}` : wildcardDomainError(host));
  const subset = stringField(dest, "subset");
  if (subset !== "") validateSubsetName(subset, out.at("subset"));
  const port = objectField(dest, "port");
  if (port) report(out.at("port"), portError(numberField(port, "number")));
}
