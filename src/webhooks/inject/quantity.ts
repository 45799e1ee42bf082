// Kubernetes resource quantities ("100m", "1.5Gi", "2e3") in their canonical form, as the API
// server stores them and Go's resource.Quantity prints them: "2000m" → "2", "1024Mi" → "1Gi".

const QUANTITY = /^([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$/;
const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  "": 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIXES = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/** apimachinery's ErrFormatWrong text. */
export const QUANTITY_FORMAT_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** An exact value: `value` × 10^`scale`. */
interface Decimal {
  value: bigint;
  scale: number;
}

function parse(text: string): { amount: Decimal; format: "binary" | "decimal" | "exponent" } | undefined {
  const match = QUANTITY.exec(text);
  if (!match) return undefined;
  const [, number, exponent, suffix = ""] = match;
  const [whole, fraction = ""] = number.replace(/^\+/, "").split(".");
  let amount: Decimal = { value: BigInt(`${whole || "0"}${fraction}`), scale: -fraction.length };
  if (exponent) return { amount: { ...amount, scale: amount.scale + Number(exponent.slice(1)) }, format: "exponent" };
  const binary = BINARY_SUFFIXES.indexOf(suffix);
  if (suffix !== "" && binary > 0) {
    amount = { value: amount.value * 1024n ** BigInt(binary), scale: amount.scale };
    return { amount, format: "binary" };
  }
  return { amount: { ...amount, scale: amount.scale + DECIMAL_SUFFIXES[suffix] }, format: "decimal" };
}

/** Whether the text is a Kubernetes quantity. */
export function isQuantity(text: string): boolean {
  return parse(text) !== undefined;
}

/** The canonical form of a quantity; text that is not one comes back unchanged. */
export function canonicalQuantity(text: string): string {
  const parsed = parse(text);
  if (!parsed) return text;
  let { value, scale } = parsed.amount;
  // Kubernetes keeps at most nanosecond precision, rounding up.
  if (scale < -9) {
    const divisor = 10n ** BigInt(-9 - scale);
    value = value / divisor + (value % divisor > 0n ? 1n : 0n);
    scale = -9;
  }
  if (value === 0n) return "0";
  let format = parsed.format;
  const whole = scale >= 0 ? value * 10n ** BigInt(scale) : undefined;
  const isExactInteger = scale >= 0 || value % 10n ** BigInt(-scale) === 0n;
  if (format === "binary") {
    const abs = value < 0n ? -value : value;
    const small = scale >= 0 ? abs * 10n ** BigInt(scale) < 1024n : abs < 1024n * 10n ** BigInt(-scale);
    if (small || !isExactInteger) format = "decimal";
  }
  if (format === "binary") {
    let integer = whole ?? value / 10n ** BigInt(-scale);
    let power = 0;
    while (integer % 1024n === 0n && power < BINARY_SUFFIXES.length - 1) {
      integer /= 1024n;
      power++;
    }
    return `${integer}${BINARY_SUFFIXES[power]}`;
  }
  // Drop trailing zeros, then bring the exponent to a multiple of three.
  while (value % 10n === 0n) {
    value /= 10n;
    scale++;
  }
  const remainder = ((scale % 3) + 3) % 3;
  value *= 10n ** BigInt(remainder);
  scale -= remainder;
  if (format === "exponent") return scale === 0 ? `${value}` : `${value}e${scale}`;
  const suffix = Object.entries(DECIMAL_SUFFIXES).find(([, exp]) => exp === scale)?.[0];
  // Beyond E or below n a decimal quantity falls back to an exponent.
  return suffix === undefined ? `${value}e${scale}` : `${value}${suffix}`;
}
