// The ordered-list operations of ADD, INSERT_* , REPLACE and REMOVE patches on filter and route
// lists (Istio's insertBeforeFunc/insertAfterFunc/replaceFunc): relative inserts and REPLACE act at
// the first element matching; REMOVE drops every match; without a match object INSERT_AFTER appends
// and INSERT_BEFORE prepends, while REPLACE and REMOVE do nothing.
import type { Operation } from "./patch.ts";

export interface ListOpResult<T> {
  list: T[];
  applied: boolean;
}

/**
 * `list` after `operation`. `hasMatch` tells whether the patch names an element; `matches` tests one;
 * `value` makes a fresh copy of the patch value. MERGE and unknown operations leave the list alone.
 */
export function applyListOperation<T>(
  list: readonly T[],
  operation: Operation,
  hasMatch: boolean,
  matches: (element: T) => boolean,
  value: () => T,
): ListOpResult<T> {
  const first = hasMatch ? list.findIndex(matches) : -1;
  switch (operation) {
    case "ADD":
      return { list: [...list, value()], applied: true };
    case "INSERT_FIRST":
      return { list: [value(), ...list], applied: true };
    case "INSERT_AFTER":
      if (!hasMatch) return { list: [...list, value()], applied: true };
      if (first < 0) return { list: [...list], applied: false };
      return { list: [...list.slice(0, first + 1), value(), ...list.slice(first + 1)], applied: true };
    case "INSERT_BEFORE":
      if (!hasMatch) return { list: [value(), ...list], applied: true };
      if (first < 0) return { list: [...list], applied: false };
      return { list: [...list.slice(0, first), value(), ...list.slice(first)], applied: true };
    case "REPLACE":
      if (first < 0) return { list: [...list], applied: false };
      return { list: list.map((e, i) => (i === first ? value() : e)), applied: true };
    case "REMOVE": {
      if (!hasMatch) return { list: [...list], applied: false };
      const kept = list.filter((e) => !matches(e));
      return { list: kept, applied: kept.length !== list.length };
    }
    default:
      return { list: [...list], applied: false };
  }
}
