// Structural validation: each kind's OpenAPI v3 schema (from its CRD) and its CEL rules.
import type { KindInfo } from "../kinds.ts";
import type { ConfigObject } from "../model.ts";
import type { Findings } from "../validation/findings.ts";

/** Checks `obj` against its kind's schema (types, required, enums, formats, CEL). Placeholder until schemas land. */
export function validateStructure(_obj: ConfigObject, _info: KindInfo, _out: Findings): void {}
