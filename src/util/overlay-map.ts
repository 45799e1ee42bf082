// A map held as a base that many holders share and this holder's own changes over it. The xDS server
// keeps what each proxy holds this way: after a full response the base is the generated list's map,
// shared by every proxy sent the list, and an endpoint change then costs each proxy the changed entries
// instead of a copy of its 1,000.

/** Changes beyond this many, and beyond a quarter of the base, fold into a base of the holder's own. */
const FOLD_AT = 32;

/** `base` read with this holder's changes laid over it; the base itself is never changed. */
export class OverlayMap<V> implements ReadonlyMap<string, V> {
  #base: ReadonlyMap<string, V>;
  /** The changes over the base; undefined: removed. */
  readonly #changes = new Map<string, V | undefined>();
  #size: number;

  constructor(base: ReadonlyMap<string, V> = new Map()) {
    this.#base = base;
    this.#size = base.size;
  }

  /** The map under the changes, which may be shared. */
  get base(): ReadonlyMap<string, V> {
    return this.#base;
  }

  /** Whether the map reads exactly as its base. */
  get unchanged(): boolean {
    return this.#changes.size === 0;
  }

  get size(): number {
    return this.#size;
  }

  /** Makes `base` (shared, never changed here) the whole map again. */
  reset(base: ReadonlyMap<string, V>): void {
    this.#base = base;
    this.#size = base.size;
    this.#changes.clear();
  }

  get(name: string): V | undefined {
    return this.#changes.has(name) ? this.#changes.get(name) : this.#base.get(name);
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** Sets `name` to `value`, or with undefined removes it. */
  set(name: string, value: V | undefined): void {
    this.#size += (value !== undefined ? 1 : 0) - (this.has(name) ? 1 : 0);
    if (this.#base.get(name) === value) this.#changes.delete(name);
    else this.#changes.set(name, value);
    if (this.#changes.size > FOLD_AT && this.#changes.size > this.#base.size / 4) {
      this.#base = new Map(this.entries());
      this.#changes.clear();
    }
  }

  /** In the base's order, then what the changes added. */
  *entries(): MapIterator<[string, V]> {
    const changes = this.#changes;
    for (const entry of this.#base) {
      if (!changes.has(entry[0])) yield entry;
      else {
        const value = changes.get(entry[0]);
        if (value !== undefined) yield [entry[0], value];
      }
    }
    for (const [name, value] of changes) if (value !== undefined && !this.#base.has(name)) yield [name, value];
  }

  *keys(): MapIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(callback: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [name, value] of this.entries()) callback(value, name, this);
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }
}
