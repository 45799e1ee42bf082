// envoyfilter.EnvoyPatchAnalyzer: relative patch operations (INSERT_BEFORE/AFTER, REMOVE, REPLACE)
// without a priority, and ADD/REMOVE/REPLACE used with an applyTo where they are ignored or invalid.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, isRecord, specOf } from "../resource.ts";

const ROUTE_TARGETS = new Set(["ROUTE_CONFIGURATION", "HTTP_ROUTE"]);
const REPLACEABLE = new Set(["NETWORK_FILTER", "HTTP_FILTER", "VIRTUAL_HOST"]);

export const envoyPatchAnalyzer: Analyzer = {
  name: "envoyfilter.EnvoyPatchAnalyzer",
  description: "Checks an envoyFilters ",
  inputs: [K.EnvoyFilter],
  analyze(ctx) {
    // Names patched by earlier patches that match on a proxy version, across EnvoyFilters in order.
    const versionedNames: string[] = [];
    for (const filter of ctx.list(K.EnvoyFilter)) {
      const spec = specOf(filter);
      const priority = Number(spec.priority ?? 0);
      const relative = (instanceName: string, at: string) => {
        if (priority !== 0) return;
        const type = versionedNames.includes(instanceName)
          ? MESSAGES.EnvoyFilterUsesRelativeOperationWithProxyVersion
          : MESSAGES.EnvoyFilterUsesRelativeOperation;
        ctx.report(atField(newMessage(type, filter), at));
      };
      for (const [index, item] of asArray(spec.configPatches).entries()) {
        const at = `{.spec.configPatches[${index}].patch.value}`;
        const configPatch = asRecord(item);
        if (!isRecord(configPatch.patch)) break;
        const patch = configPatch.patch;
        const applyTo = asString(configPatch.applyTo);
        const instanceName = patchedName(configPatch);
        switch (asString(patch.operation)) {
          case "ADD":
            if (ROUTE_TARGETS.has(applyTo))
              ctx.report(atField(newMessage(MESSAGES.EnvoyFilterUsesAddOperationIncorrectly, filter), at));
            break;
          case "REMOVE":
            if (ROUTE_TARGETS.has(applyTo))
              ctx.report(atField(newMessage(MESSAGES.EnvoyFilterUsesRemoveOperationIncorrectly, filter), at));
            else relative(instanceName, at);
            break;
          case "REPLACE":
            if (!REPLACEABLE.has(applyTo))
              ctx.report(atField(newMessage(MESSAGES.EnvoyFilterUsesReplaceOperationIncorrectly, filter), at));
            else relative(instanceName, at);
            break;
          case "INSERT_BEFORE":
          case "INSERT_AFTER":
            relative(instanceName, at);
            break;
        }
        const proxyVersion = asString(asRecord(asRecord(configPatch.match).proxy).proxyVersion);
        if (proxyVersion !== "") versionedNames.push(instanceName);
      }
    }
  },
};

/**
 * What a patch is about, compared only with itself: the patch value's `name` (in Go, the protobuf
 * text of that Value), else the filter name its listener match names.
 */
function patchedName(configPatch: Record<string, unknown>): string {
  const value = asRecord(configPatch.patch).value;
  if (!isRecord(value)) return "";
  if ("name" in value) {
    const name = value.name;
    return typeof name === "string" ? `string_value:${JSON.stringify(name)}` : JSON.stringify(name);
  }
  return asString(asRecord(asRecord(asRecord(asRecord(configPatch.match).listener).filterChain).filter).name);
}
