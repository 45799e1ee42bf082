// Go's formatting verbs, so messages read exactly as Istio's (`%q`, float `%v`, `%f`), and the integer
// syntax of Go's strconv.

/** Go `%q` / strconv.Quote: double-quoted with Go escapes. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\x07") out += "\\a";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (ch === "\v") out += "\\v";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Go float `%v`: shortest form, exponent (two digits at least) below 1e-4 and from 1e21. */
export function goFloat(n: number): string {
  const abs = Math.abs(n);
  if (abs !== 0 && Number.isFinite(n) && (abs < 1e-4 || abs >= 1e21)) {
    const [mantissa, exp] = n.toExponential().split("e");
    const sign = exp.startsWith("-") ? "-" : "+";
    return `${mantissa}e${sign}${exp.replace(/^[-+]/, "").padStart(2, "0")}`;
  }
  return String(n);
}

/** Go `%f`: six decimals. */
export function goFixed(n: number): string {
  return n.toFixed(6);
}

/** go-multierror's text for a list of errors (`1 error occurred:\n\t* ...\n\n`). */
export function goMultiError(messages: string[]): string {
  const count = messages.length === 1 ? "1 error occurred" : `${messages.length} errors occurred`;
  return `${count}:\n${messages.map((m) => `\t* ${m}`).join("\n")}\n\n`;
}

/** Go's strconv.Atoi (and ParseInt base 10) syntax: an optional sign, then decimal digits; else undefined. */
export function goAtoi(s: string): number | undefined {
  return /^[+-]?[0-9]+$/.test(s) ? Number(s) : undefined;
}
