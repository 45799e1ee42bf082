/**
 * Freezes `value` and every object reachable from it, and returns it. An object already frozen is
 * taken as frozen through and through (the store's objects, frozen when they came in), so it is not
 * walked again.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
