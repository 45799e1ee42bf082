/** Strings in code-unit order, as Go's strings.Compare / cmp.Compare: the same order on every machine. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
