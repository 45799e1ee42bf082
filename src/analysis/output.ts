// istioctl analyze's output formats (istioctl/pkg/util/formatting): one log line per message, or the
// messages as JSON (tab-indented) or YAML objects with code, documentationUrl, level, message, origin
// and reference.
import { stringify } from "yaml";
import { type Message, messageReference, messageText, renderMessage } from "./message.ts";

export const OUTPUT_FORMATS = ["log", "json", "yaml"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

// Istio links its versioned docs; Sluice follows the latest analysis reference.
export const CONFIG_ANALYSIS_URL = "https://istio.io/latest/docs/reference/config/analysis";

const DOC_REF = "istioctl-analyze";

export function formatMessages(messages: readonly Message[], format: OutputFormat): string {
  if (format === "log") return messages.map(renderMessage).join("\n");
  const objects = messages.map(messageObject);
  // Go's json.MarshalIndent(ms, "", "\t"), which escapes HTML characters; sigs.k8s.io/yaml writes the
  // same objects as YAML without folding long lines.
  if (format === "json") return goJsonEscape(JSON.stringify(objects, null, "\t"));
  return stringify(objects, { lineWidth: 0 }).trimEnd();
}

/** Keys in Go's map order (sorted), as encoding/json writes a map. */
function messageObject(m: Message): Record<string, string> {
  const object: Record<string, string> = {
    code: m.type.code,
    documentationUrl: `${CONFIG_ANALYSIS_URL}/${m.type.code.toLowerCase()}/?ref=${DOC_REF}`,
    level: m.type.level,
    message: messageText(m),
  };
  if (m.resource) {
    object.origin = m.resource.friendlyName;
    const reference = messageReference(m);
    if (reference !== undefined) object.reference = reference;
  }
  return object;
}

/** encoding/json's HTML-safe escaping of <, >, & and the line and paragraph separators. */
function goJsonEscape(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
