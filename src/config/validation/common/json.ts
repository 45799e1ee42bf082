// Narrowing helpers for spec objects that arrive as plain JSON. Proto3 semantics: an absent scalar
// reads as its zero value, `null` is absent, and an empty list is absent (Istio's decoder yields nil).

export type JsonObject = Record<string, unknown>;

export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

/** A non-empty list, or undefined: `[]` decodes to an absent list. */
export function asList(value: unknown): unknown[] | undefined {
  return Array.isArray(value) && value.length > 0 ? value : undefined;
}

/** The strings of a list; other element types are left to the structural validator. */
export function asStringList(value: unknown): string[] {
  return (asList(value) ?? []).filter((v): v is string => typeof v === "string");
}

export function asString(value: unknown): string {
  return typeof value === "string" ? value : "";
}

export function asNumber(value: unknown): number {
  return typeof value === "number" ? value : 0;
}

export function asBool(value: unknown): boolean {
  return value === true;
}

/** A map of strings (labels, matchLabels); non-string values are skipped. */
export function asStringMap(value: unknown): Record<string, string> | undefined {
  const obj = asObject(value);
  if (!obj) return undefined;
  const map: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v === "string") map[k] = v;
  }
  return map;
}

/** Presence of a message or wrapper field (UInt32Value, DoubleValue, ...): set and not null. */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}
