// StringMatch fields and regexes. Istio compiles regexes with Go's RE2; JavaScript's engine differs,
// so constructs RE2 rejects are refused first and RE2-only syntax is rewritten before compiling.
import type { Findings } from "../findings.ts";
import { goQuote } from "./format.ts";
import { asObject, type JsonObject } from "./json.ts";
import { report } from "./report.ts";

const MAX_REGEX_LENGTH = 1024;
const RE2_HINT = "Istio uses RE2 style regex-based match (https://github.com/google/re2/wiki/Syntax)";

// Perl syntax RE2 does not support: lookaround, backreferences, atomic and possessive forms.
const UNSUPPORTED_PERL = /\(\?(?:=|!|<=|<!|>)/;
const BACKREFERENCE = /\\(?:[1-9]|k<)/;
// RE2 caps counted repetition at 1000.
const REPEAT_COUNT = /\{([0-9]+)(?:,([0-9]*))?\}/g;
const MAX_REPEAT = 1000;

/** Why Go's regexp.Compile would reject `re`, approximately worded; undefined when it compiles. */
export function re2SyntaxError(re: string): string | undefined {
  const perl = UNSUPPORTED_PERL.exec(re);
  if (perl) return `error parsing regexp: invalid or unsupported Perl syntax: \`${perl[0]}\``;
  const backref = BACKREFERENCE.exec(re);
  if (backref) return `error parsing regexp: invalid escape sequence: \`${backref[0]}\``;
  const repeat = [...re.matchAll(REPEAT_COUNT)].find((m) =>
    m.slice(1).some((n) => n !== undefined && Number(n) > MAX_REPEAT),
  );
  if (repeat) return `error parsing regexp: invalid repeat count: \`${repeat[0]}\``;
  try {
    new RegExp(toJavaScriptRegex(re));
    return undefined;
  } catch (e) {
    return `error parsing regexp: ${e instanceof Error ? e.message : String(e)}`;
  }
}

// RE2 syntax JavaScript lacks, rewritten to an equivalent for the compile check only.
function toJavaScriptRegex(re: string): string {
  return re
    .replace(/\\Q(.*?)(?:\\E|$)/gs, (_, literal: string) => literal.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"))
    .replace(/\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/g, "(?<$1>")
    .replace(/\(\?[imsU-]+\)/g, "")
    .replace(/\(\?[imsU-]+:/g, "(?:")
    .replace(/\\A/g, "^")
    .replace(/\\z/g, "$")
    .replace(/\[:\^?[a-z]+:\]/g, "a");
}

/** Istio's regex rule; `where` names the field in the message (`"headers": ...`). */
export function regexError(re: string, where: string): string | undefined {
  if (Buffer.byteLength(re, "utf8") > MAX_REGEX_LENGTH) {
    return `${goQuote(where)}: regex is too large, max length allowed is ${MAX_REGEX_LENGTH}`;
  }
  const syntax = re2SyntaxError(re);
  return syntax ? `${goQuote(where)}: ${syntax}; ${RE2_HINT}` : undefined;
}

export function validateRegex(re: string, where: string, out: Findings): boolean {
  return report(out, regexError(re, where));
}

/** Istio's validateStringMatch: non-empty prefix and regex; exact is unchecked. `out` is at the match. */
export function validateStringMatch(match: unknown, where: string, out: Findings): boolean {
  const sm = asObject(match);
  if (!sm) return true;
  if (typeof sm.prefix === "string" && sm.prefix === "") {
    return report(out, `${goQuote(where)}: prefix string match should not be empty`);
  }
  return validateStringMatchRegex(sm, where, out);
}

/** Only the regex branch of a StringMatch (`uri`, CORS origins). */
export function validateStringMatchRegex(match: JsonObject, where: string, out: Findings): boolean {
  if (typeof match.regex !== "string") return true;
  if (match.regex === "") return report(out, `${goQuote(where)}: regex string match should not be empty`);
  return validateRegex(match.regex, where, out);
}
