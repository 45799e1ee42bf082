// Names made from two strings and a number, kept: generators name the same clusters, EDS resources
// and endpoint lists on every push and for every proxy, and a name made anew is a new string that
// each Map lookup must flatten and hash, and each encode flatten again. A kept name is flat, hashed
// once, and one string for every message naming it.

/** A memo of the names `make` makes, by its arguments; at most `max` kept (all dropped when full). */
export class NameMemo {
  readonly #names = new Map<string, Map<string, Map<number, string>>>();
  #count = 0;
  /** Names found kept, and names made (MemoCounters). */
  hits = 0;
  misses = 0;

  constructor(
    private readonly make: (first: string, second: string, n: number) => string,
    private readonly max = 100_000,
  ) {}

  get(first: string, second: string, n: number): string {
    if (this.#count >= this.max) {
      this.#names.clear();
      this.#count = 0;
    }
    let bySecond = this.#names.get(first);
    if (bySecond === undefined) {
      bySecond = new Map();
      this.#names.set(first, bySecond);
    }
    let byNumber = bySecond.get(second);
    if (byNumber === undefined) {
      byNumber = new Map();
      bySecond.set(second, byNumber);
    }
    let name = byNumber.get(n);
    if (name === undefined) {
      name = this.make(first, second, n);
      byNumber.set(n, name);
      this.#count++;
      this.misses++;
    } else this.hits++;
    return name;
  }

  /** The names kept. */
  get entries(): number {
    return this.#count;
  }
}
