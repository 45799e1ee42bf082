// Route destinations (host, subset, port) as VirtualService, Sidecar egressProxy and mirrors use them.
import type { Findings } from "../findings.ts";
import { wildcardDomainError } from "./hosts.ts";
import { asNumber, asObject, asString } from "./json.ts";
import { portError, validateSubsetName } from "./ports.ts";
import { report } from "./report.ts";

/** Istio's validateDestination. `out` is positioned at the destination; absent is fine. */
export function validateDestination(destination: unknown, out: Findings): void {
  const dest = asObject(destination);
  if (!dest) return;
  const host = asString(dest.host);
  report(out.at("host"), host === "*" ? `invalid destination host ${host}` : wildcardDomainError(host));
  const subset = asString(dest.subset);
  if (subset !== "") validateSubsetName(subset, out.at("subset"));
  const port = asObject(dest.port);
  if (port) report(out.at("port"), portError(asNumber(port.number)));
}
