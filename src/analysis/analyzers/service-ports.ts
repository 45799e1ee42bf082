// Reading Kubernetes Service ports as Go's client types do.

/** intstr.IntOrString.IntValue(): the number, a numeric string's value, or 0. */
export function intValue(value: unknown): number {
  if (typeof value === "number") return Math.trunc(value);
  if (typeof value === "string" && /^[+-]?\d+$/.test(value)) return Number.parseInt(value, 10);
  return 0;
}
