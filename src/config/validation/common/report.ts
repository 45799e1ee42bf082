import type { Findings } from "../findings.ts";

/** Adds `message` as an error when there is one; true when there was none. */
export function report(out: Findings, message: string | undefined): boolean {
  if (message === undefined) return true;
  out.error(message);
  return false;
}
