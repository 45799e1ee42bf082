// Cache keys as typed structs (as Istio's cluster_cache.go): a key type lists every input its build
// reads, and its schema says how each enters the key, so a key cannot leave one out (the schema must
// name every field of the struct) and keys are written in one place, here, not joined by hand.
//   value    the field's value: text, a number, a boolean, or a plain value (written as JSON)
//   text     key text already written (another KeyFormat's, or JSON), taken as it is (a proxy's part
//            of many keys is written once)
//   object   an input object by identity (config, services, endpoint lists, snapshot indexes and the
//            mesh config keep theirs while unchanged); an entry naming one is dropped once it is gone
//   objects  a list of input objects, each by identity (the list itself is made per lookup)

/** How one field of a key struct enters the key. */
export type KeyPart = "value" | "text" | "object" | "objects";

type PartFor<T> = [T] extends [readonly (object | undefined)[]]
  ? "value" | "object" | "objects"
  : [T] extends [object | undefined]
    ? "value" | "object"
    : [T] extends [string | undefined]
      ? "value" | "text"
      : "value";

/** For every field of the key struct `K`, how it enters the key (a field left out does not compile). */
export type KeySchema<K> = { readonly [F in keyof K]-?: PartFor<K[F]> };

/** Numbers input objects by identity (the cache's, so that its keys agree). */
export interface ObjectIds {
  /** An input's identity in a key: "-" for undefined, "[]" for any empty list, else its number. */
  objectId(input: object | undefined): string;
}

const NO_OBJECTS: ObjectIds = {
  objectId() {
    throw new Error("a key with input objects needs an ObjectIds");
  },
};

/**
 * A value as key text, self-delimiting: a string is `s<length>:<string>` (no scan, no escaping), a
 * number `n<number>`, a boolean `t` or `f`, undefined `~`, null `z`, anything else its JSON (`{…}`, `[…]`).
 */
export function valueText(value: unknown): string {
  switch (typeof value) {
    case "string":
      return `s${value.length}:${value}`;
    case "number":
      return `n${value}`;
    case "boolean":
      return value ? "t" : "f";
    case "undefined":
      return "~";
    default:
      return value === null ? "z" : JSON.stringify(value);
  }
}

function objectsText(ids: ObjectIds, list: readonly (object | undefined)[]): string {
  let text = "[";
  for (let i = 0; i < list.length; i++) text += i === 0 ? ids.objectId(list[i]) : `,${ids.objectId(list[i])}`;
  return `${text}]`;
}

type Writer<K> = (key: K, ids: ObjectIds) => string;

/**
 * Writes keys of one struct type: one part per field, in the schema's order, joined by `|`: a value as
 * valueText, text wrapped in `()`, an object as its number, a list of objects as `[n,n]`. Every part is
 * self-delimiting, so two keys are equal only for equal inputs. The writer is generated per schema (one
 * property read per field, as a hand-written join).
 */
export class KeyFormat<K> {
  readonly #fields: readonly (readonly [keyof K & string, KeyPart])[];
  readonly #write: Writer<K>;

  constructor(schema: KeySchema<K>) {
    this.#fields = Object.entries(schema) as [keyof K & string, KeyPart][];
    const parts = this.#fields.map(([name, part]) => {
      if (!/^[A-Za-z_$][\w$]*$/.test(name)) throw new Error(`key field ${name} is not an identifier`);
      const read = `k.${name}`;
      switch (part) {
        case "value":
          return `v(${read})`;
        case "text":
          return `(${read} === undefined ? "~" : "(" + ${read} + ")")`;
        case "object":
          return `ids.objectId(${read})`;
        default:
          return `o(ids, ${read})`;
      }
    });
    // One join: a flat string, which a Map lookup hashes without flattening a tree of concatenations.
    const body = `return (k, ids) => [${parts.join(", ")}].join("|");`;
    this.#write = new Function("v", "o", body)(valueText, objectsText) as Writer<K>;
  }

  /** The key as text; `ids` numbers its input objects (a key without any needs none). */
  text(key: K, ids: ObjectIds = NO_OBJECTS): string {
    return this.#write(key, ids);
  }

  /** The input objects the key names (its `object` fields and the elements of its `objects` fields). */
  objects(key: K): (object | undefined)[] {
    const objects: (object | undefined)[] = [];
    for (const [name, part] of this.#fields) {
      const value = key[name] as unknown;
      if (part === "object") objects.push(value as object | undefined);
      else if (part === "objects") objects.push(...(value as readonly (object | undefined)[]));
    }
    return objects;
  }
}
