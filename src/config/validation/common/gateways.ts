// References to Istio Gateways from VirtualServices (`gateways` fields).
import type { Findings } from "../findings.ts";
import { goQuote } from "./format.ts";
import { fqdnError, isDns1123Label } from "./hosts.ts";
import { report } from "./report.ts";

/**
 * Istio's validateGatewayNames. A legacy `name.namespace` entry (no `/`) is checked as an FQDN and
 * ends the check: Istio does not look at later entries. `gatewaySemantics` skips the name check.
 */
export function validateGatewayNames(names: string[], gatewaySemantics: boolean, out: Findings): void {
  for (const name of names) {
    const slash = name.indexOf("/");
    if (slash < 0) {
      if (name.includes(".")) {
        const parts = name.split(".");
        out.warn(
          `using legacy gatewayName format ${goQuote(name)}; prefer the <namespace>/<name> format: ${goQuote(`${parts[1]}/${parts[0]}`)}`,
        );
      }
      report(out, fqdnError(name));
      return;
    }
    const namespace = name.slice(0, slash);
    const gateway = name.slice(slash + 1);
    if (namespace === "" || gateway === "") {
      out.error("config namespace and gateway name cannot be empty");
    }
    if (!isDns1123Label(namespace)) out.error(`invalid value for namespace: ${goQuote(namespace)}`);
    if (!gatewaySemantics && !isDns1123Label(gateway)) out.error(`invalid value for gateway name: ${goQuote(gateway)}`);
  }
}
