// Istio's webhook validation, one file per kind; this map is the dispatch (Istio's collections.gen.go).
// Kinds without an entry get only the metadata checks, as Istio's EmptyValidate.
import { kindKey } from "../kinds.ts";
import { validateDestinationRule } from "./destinationrule.ts";
import type { SemanticValidator } from "./findings.ts";
import { validateProxyConfig } from "./proxyconfig.ts";
import { validateServiceEntry } from "./serviceentry.ts";
import { validateVirtualService } from "./virtualservice.ts";
import { validateWorkloadEntry } from "./workloadentry.ts";
import { validateWorkloadGroup } from "./workloadgroup.ts";

export { DEFAULT_CONTEXT, Findings, type SemanticValidator, type ValidationContext } from "./findings.ts";

const NET = "networking.istio.io";
const SEC = "security.istio.io";

export const SEMANTIC_VALIDATORS: ReadonlyMap<string, SemanticValidator> = new Map<string, SemanticValidator>([
  [kindKey(NET, "DestinationRule"), validateDestinationRule],
  [kindKey(NET, "ServiceEntry"), validateServiceEntry],
  [kindKey(NET, "WorkloadEntry"), validateWorkloadEntry],
  [kindKey(NET, "WorkloadGroup"), validateWorkloadGroup],
  [kindKey(NET, "ProxyConfig"), validateProxyConfig],
  [kindKey(NET, "VirtualService"), validateVirtualService],
]);

export function semanticValidator(group: string, kind: string): SemanticValidator | undefined {
  return SEMANTIC_VALIDATORS.get(kindKey(group, kind));
}
