// Gateway API durations ("1h2m3s4ms") → protobuf-JSON Duration text ("3723.004s").

const UNIT_NANOS: Record<string, bigint> = {
  h: 3_600_000_000_000n,
  m: 60_000_000_000n,
  s: 1_000_000_000n,
  ms: 1_000_000n,
};

/** Nanoseconds of a Gateway API duration; 0 when it does not parse. */
export function parseDuration(text: string): bigint {
  let total = 0n;
  const re = /(\d+)(ms|h|m|s)/gy;
  let consumed = 0;
  for (let match = re.exec(text); match; match = re.exec(text)) {
    total += BigInt(match[1]) * UNIT_NANOS[match[2]];
    consumed = re.lastIndex;
  }
  return consumed === text.length ? total : 0n;
}

/** Protobuf JSON form: seconds with 0, 3, 6 or 9 fractional digits. */
export function formatDuration(nanos: bigint): string {
  const seconds = nanos / 1_000_000_000n;
  const fraction = nanos % 1_000_000_000n;
  if (fraction === 0n) return `${seconds}s`;
  let digits = fraction.toString().padStart(9, "0");
  while (digits.endsWith("000")) digits = digits.slice(0, -3);
  return `${seconds}.${digits}s`;
}
