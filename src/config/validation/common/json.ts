// Reading spec objects that arrive as plain JSON the way Istio's jsonpb decoder does. Proto3
// semantics: an absent scalar reads as its zero value, `null` is absent, and an empty list is
// absent (Istio's decoder yields nil). The `xxxField(obj, name)` readers also take a field by its
// proto (snake_case) name, which the decoder accepts for every kind.

export type JsonObject = Record<string, unknown>;

export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

/** A non-empty list, or undefined: `[]` decodes to an absent list. */
export function asList(value: unknown): unknown[] | undefined {
  return Array.isArray(value) && value.length > 0 ? value : undefined;
}

export function asString(value: unknown): string {
  return typeof value === "string" ? value : "";
}

export function asNumber(value: unknown): number {
  return typeof value === "number" ? value : 0;
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

/** A field's proto name from its JSON name: `perTryTimeout` → `per_try_timeout`. */
export function protoName(jsonName: string): string {
  return jsonName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A field by its JSON (camelCase) name or its proto (snake_case) name; `null` reads as absent. */
export function field(obj: JsonObject, name: string): unknown {
  const value = obj[name] ?? obj[protoName(name)];
  return value === null ? undefined : value;
}

/** Presence of a field (a message, a wrapper such as UInt32Value, ...): set and not null. */
export function has(obj: JsonObject, name: string): boolean {
  return field(obj, name) !== undefined;
}

export function objectField(obj: JsonObject, name: string): JsonObject | undefined {
  return asObject(field(obj, name));
}

/** A repeated field; absent or empty gives undefined. */
export function listField(obj: JsonObject, name: string): unknown[] | undefined {
  return asList(field(obj, name));
}

export function stringField(obj: JsonObject, name: string): string {
  return asString(field(obj, name));
}

export function boolField(obj: JsonObject, name: string): boolean {
  return field(obj, name) === true;
}

/** The strings of a repeated field; other element types are left to the structural validator. */
export function stringListField(obj: JsonObject, name: string): string[] {
  return (listField(obj, name) ?? []).filter((v): v is string => typeof v === "string");
}

/** A numeric field; jsonpb also accepts integers written as strings. Absent reads as 0. */
export function numberField(obj: JsonObject, name: string): number {
  return toNumber(field(obj, name));
}

function toNumber(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  return 0;
}

/** The value of a wrapper or Percent message (`{value: n}`); jsonpb also takes a bare number for wrappers. */
export function wrappedNumber(value: unknown): number {
  const obj = asObject(value);
  return obj ? numberField(obj, "value") : toNumber(value);
}

/** A map field's entries; a present-but-empty map gives an empty list. */
export function mapEntries(obj: JsonObject, name: string): [string, unknown][] {
  const map = asObject(field(obj, name));
  return map ? Object.entries(map) : [];
}
