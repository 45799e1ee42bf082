import type { Findings } from "../findings.ts";
import { asObject, type JsonObject } from "./json.ts";

/** Adds `message` as an error when there is one; true when there was none. */
export function report(out: Findings, message: string | undefined): boolean {
  if (message === undefined) return true;
  out.error(message);
  return false;
}

/**
 * Calls `check` on each message of a repeated field, with a collector at the element (`out` is at the
 * list); an element that is not a message (a YAML null) is reported as `nilError` instead.
 */
export function forEachMessage(
  list: unknown[] | undefined,
  out: Findings,
  nilError: string,
  check: (message: JsonObject, at: Findings, i: number) => void,
): void {
  (list ?? []).forEach((value, i) => {
    const message = asObject(value);
    if (message) check(message, out.at("", i), i);
    else out.at("", i).error(nilError);
  });
}
