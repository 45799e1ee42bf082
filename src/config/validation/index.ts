// Istio's webhook validation, one file per kind; this map is the dispatch (Istio's collections.gen.go).
// Kinds without an entry get only the metadata checks, as Istio's EmptyValidate.
import { kindKey } from "../kinds.ts";
import type { SemanticValidator } from "./findings.ts";
import { validateVirtualService } from "./virtualservice.ts";

export { DEFAULT_CONTEXT, Findings, type SemanticValidator, type ValidationContext } from "./findings.ts";

const NET = "networking.istio.io";
const SEC = "security.istio.io";

export const SEMANTIC_VALIDATORS: ReadonlyMap<string, SemanticValidator> = new Map<string, SemanticValidator>([
  [kindKey(NET, "VirtualService"), validateVirtualService],
]);

export function semanticValidator(group: string, kind: string): SemanticValidator | undefined {
  return SEMANTIC_VALIDATORS.get(kindKey(group, kind));
}
