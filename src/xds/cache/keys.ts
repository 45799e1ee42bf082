// Cache keys as typed structs (as Istio's cluster_cache.go): a key type lists every input its build
// reads, and its schema says how each enters the key, so a key cannot leave one out (the schema must
// name every field of the struct) and keys are written in one place, here, not joined by hand.
//   value    the field's value: text, numbers, booleans, or a plain value written as JSON
//   object   an input object by identity (config, services, endpoint lists, snapshot indexes and the
//            mesh config keep theirs while unchanged); an entry naming one is dropped once it is gone
//   objects  a list of input objects, each by identity (the list itself is made per lookup)

/** How one field of a key struct enters the key. */
export type KeyPart = "value" | "object" | "objects";

type PartFor<T> = [T] extends [readonly (object | undefined)[]]
  ? KeyPart
  : [T] extends [object | undefined]
    ? "value" | "object"
    : "value";

/** For every field of the key struct `K`, how it enters the key (a field left out does not compile). */
export type KeySchema<K> = { readonly [F in keyof K]-?: PartFor<K[F]> };

/** Numbers input objects by identity (the cache's, so that its keys agree). */
export interface ObjectIds {
  /** An input's identity in a key: "-" for undefined, "[]" for any empty list, else its number. */
  objectId(input: object | undefined): string;
}

/** Writes keys of one struct type: the values as JSON text, the input objects by their numbers. */
export class KeyFormat<K> {
  readonly #fields: readonly (readonly [keyof K, KeyPart])[];

  constructor(schema: KeySchema<K>) {
    this.#fields = Object.entries(schema) as [keyof K, KeyPart][];
  }

  /** The key as text: one part per field, in the schema's order, joined by `|` (never inside a part). */
  text(key: K, ids: ObjectIds): string {
    let text = "";
    for (const [field, part] of this.#fields) {
      const value = key[field] as unknown;
      if (text !== "") text += "|";
      if (part === "value") text += valueText(value);
      else if (part === "object") text += ids.objectId(value as object | undefined);
      else text += `[${(value as readonly (object | undefined)[]).map((v) => ids.objectId(v)).join(",")}]`;
    }
    return text;
  }

  /** The input objects the key names (its `object` fields and the elements of its `objects` fields). */
  objects(key: K): (object | undefined)[] {
    const objects: (object | undefined)[] = [];
    for (const [field, part] of this.#fields) {
      const value = key[field] as unknown;
      if (part === "object") objects.push(value as object | undefined);
      else if (part === "objects") objects.push(...(value as readonly (object | undefined)[]));
    }
    return objects;
  }
}

/** A value as key text: JSON (a string quoted, so a `|` in it never ends the part); undefined as `~`. */
function valueText(value: unknown): string {
  if (value === undefined) return "~";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}
