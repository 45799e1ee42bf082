// `{ ...obj, key: value }` without the spread. On Node 20 (V8 11.3) an object made by a spread and then
// given more properties, or frozen, gets a hidden class of its own: every such object carries its own
// map and descriptor array (~250 bytes), and code that reads a field of many of them goes megamorphic.
// 10,000 Pods and their endpoints held ~30,000 maps this way. Assigning the properties one by one into
// a new object walks V8's shared transition tree instead.

/** Sets an own data property, as a spread or object literal does (even for `__proto__`). */
function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * A copy of `obj` with `values` laid over it, as `{ ...obj, ...values }` makes (the own enumerable
 * string-keyed properties, `obj`'s in their order, then those of `values` that `obj` lacks), sharing its
 * hidden class with every other copy of the same shape. Use it for a copy that is kept (or frozen, or
 * given more properties later) where the copies are many.
 */
export function copyWith<T extends object, V extends object = Record<never, never>>(
  obj: T,
  values: V = {} as V,
): T & V {
  const source = obj as Record<string, unknown>;
  const over = values as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) defineOwn(copy, key, Object.hasOwn(over, key) ? over[key] : source[key]);
  for (const key of Object.keys(over)) if (!Object.hasOwn(source, key)) defineOwn(copy, key, over[key]);
  return copy as T & V;
}
