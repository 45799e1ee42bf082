// A diagnostic message as Istio's analysis reports it (pkg/config/analysis/diag): a message type
// (level, code, Go format template), its arguments and the resource it is about.
import { goQuote } from "../config/validation/common/index.ts";
import type { Resource } from "./resource.ts";

export type Level = "Error" | "Warning" | "Info";

/** Lower is worse: Error 0, Warning 1, Info 2 (diag.Level sortOrder). */
export const LEVEL_ORDER: Readonly<Record<Level, number>> = { Error: 0, Warning: 1, Info: 2 };

export const LEVELS: readonly Level[] = ["Info", "Warning", "Error"];

export function isWorseThanOrEqualTo(level: Level, threshold: Level): boolean {
  return LEVEL_ORDER[level] <= LEVEL_ORDER[threshold];
}

export interface MessageType {
  name: string;
  code: string;
  level: Level;
  /** A Go fmt template (%s, %v, %q, %d). */
  template: string;
}

export type MessageArg = string | number | boolean | readonly string[];

export interface Message {
  type: MessageType;
  args: readonly MessageArg[];
  resource?: Resource;
  /** The line of the field the message is about, when known; otherwise the document's line is shown. */
  line?: number;
}

export function newMessage(type: MessageType, resource: Resource | undefined, ...args: MessageArg[]): Message {
  return { type, args, resource };
}

/** The message placed at a field of its resource ("{.spec.gateways[0]}"), when that field's line is known. */
export function atField(m: Message, fieldPath: string): Message {
  const line = m.resource?.origin.fieldLines?.get(fieldPath);
  return line === undefined ? m : { ...m, line };
}

/** Go's fmt.Sprintf for the verbs the templates use. */
export function goSprintf(template: string, args: readonly MessageArg[]): string {
  let next = 0;
  return template.replace(/%([%sqvd])/g, (_whole, verb: string) => {
    if (verb === "%") return "%";
    if (next >= args.length) return `%!${verb}(MISSING)`;
    const arg = args[next++];
    if (verb === "q") return goQuote(String(arg));
    return goValue(arg);
  });
}

function goValue(arg: MessageArg): string {
  return Array.isArray(arg) ? `[${arg.join(" ")}]` : String(arg);
}

export function messageText(m: Message): string {
  return goSprintf(m.type.template, m.args);
}

/** The resource's reference: "file:line" (no line for .json files, as istioctl). */
export function messageReference(m: Message): string | undefined {
  const origin = m.resource?.origin;
  if (!origin?.file) return undefined;
  const line = m.line ?? origin.line;
  if (!line || origin.file.endsWith(".json")) return origin.file;
  return `${origin.file}:${line}`;
}

/** " (<Kind> ns/name file:line)", or "" for a message without a resource. */
function originSuffix(m: Message): string {
  if (!m.resource) return "";
  const reference = messageReference(m);
  return ` (${m.resource.friendlyName}${reference ? ` ${reference}` : ""})`;
}

/** istioctl's log line: `Error [IST0101] (VirtualService ns/name file:line) Referenced host not found: "x"`. */
export function renderMessage(m: Message): string {
  return `${m.type.level} [${m.type.code}]${originSuffix(m)} ${messageText(m)}`;
}

/** Istio's order: level, code, resource (kind/name/namespace), then text; then duplicates dropped. */
export function sortedDeduped(messages: readonly Message[]): Message[] {
  const sorted = [...messages].sort(compareMessages);
  const out: Message[] = [];
  for (const m of sorted) {
    if (out.length > 0 && renderMessage(out[out.length - 1]) === renderMessage(m)) continue;
    out.push(m);
  }
  return out;
}

function compareMessages(a: Message, b: Message): number {
  if (a.type.level !== b.type.level) return LEVEL_ORDER[a.type.level] - LEVEL_ORDER[b.type.level];
  if (a.type.code !== b.type.code) return a.type.code < b.type.code ? -1 : 1;
  if (!a.resource !== !b.resource) return a.resource ? 1 : -1;
  const ac = a.resource?.comparator ?? "";
  const bc = b.resource?.comparator ?? "";
  if (ac !== bc) return ac < bc ? -1 : 1;
  const as = renderMessage(a);
  const bs = renderMessage(b);
  return as < bs ? -1 : as > bs ? 1 : 0;
}
