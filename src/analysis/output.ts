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
  // Go's json.MarshalIndent(ms, "", "\t"); sigs.k8s.io/yaml writes the same object as YAML.
  return format === "json" ? JSON.stringify(objects, null, "\t") : stringify(objects).trimEnd();
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
