// The subset of a CRD's OpenAPI v3 schema that Sluice keeps (scripts/gen-schemas.ts) and validates against.
import type { KindInfo } from "../kinds.ts";

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
}

export interface Schema {
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  format?: string;
  nullable?: boolean;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  not?: Schema;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-validations"?: ValidationRule[];
}

/** One generated file: every version Sluice accepts for a kind, mapped to its (deduplicated) schema. */
export interface GeneratedSchemas {
  /** Version name → index into `schemas`; versions with identical schemas share one entry. */
  versions: Record<string, number>;
  schemas: Schema[];
}

/** The generated file holding a kind's schemas, in src/config/schema/generated/. */
export function schemaFileName(info: KindInfo): string {
  return `${info.group}_${info.plural}.json`;
}
