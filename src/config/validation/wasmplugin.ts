// WasmPlugin (extensions.istio.io): Istio's ValidateWasmPlugin. The url, sha256, name, env and match
// checks each report only their first problem; TrafficExtension's Wasm config shares them.
import { readEnum } from "./common/enums.ts";
import { asObject, field, type JsonObject, listField, numberField, objectField, stringField } from "./common/json.ts";
import { report } from "./common/report.ts";
import { validatePolicyTargets } from "./common/selectors.ts";
import type { Findings, SemanticValidator } from "./findings.ts";
import {
  ENV_VALUE_SOURCE,
  SELECTOR_WORKLOAD_MODE,
  WASM_FAIL_STRATEGY,
  WASM_PLUGIN_PHASE,
  WASM_PLUGIN_TYPE,
  WASM_PULL_POLICY,
} from "./security-decode.ts";
import { parseGoUrl } from "./security-url.ts";

const URL_SCHEMES = new Set(["", "file", "http", "https", "oci"]);

export const validateWasmPlugin: SemanticValidator = (obj, _ctx, out) => {
  const spec = asObject(obj.spec) ?? {};
  readEnum(field(spec, "phase"), WASM_PLUGIN_PHASE, out.at("phase"));
  validatePolicyTargets(spec, out);
  validateWasmModule(spec, out, "pluginName field must be less than 255 characters long");
  validateMatch(spec, out);
};

/**
 * The Wasm module's fields, of a WasmPlugin's spec or a TrafficExtension's `wasm`; Istio words the
 * pluginName limit differently for each.
 */
export function validateWasmModule(module: JsonObject, out: Findings, pluginNameMessage: string): void {
  readEnum(field(module, "type"), WASM_PLUGIN_TYPE, out.at("type"));
  readEnum(field(module, "imagePullPolicy"), WASM_PULL_POLICY, out.at("imagePullPolicy"));
  readEnum(field(module, "failStrategy"), WASM_FAIL_STRATEGY, out.at("failStrategy"));
  report(out.at("url"), urlError(stringField(module, "url")));
  report(out.at("sha256"), sha256Error(stringField(module, "sha256")));
  if (stringField(module, "imagePullSecret").length > 253) {
    out.at("imagePullSecret").error("imagePullSecret field must be less than 253 characters long");
  }
  if (stringField(module, "pluginName").length > 256) out.at("pluginName").error(pluginNameMessage);
  validateEnv(objectField(module, "vmConfig") ?? {}, out.at("vmConfig"));
}

// Go's ParseRequestURI, retried with an `http://` prefix (so `example.com/plugin.wasm` is accepted);
// whichever form parsed must also pass url.Parse.
function urlError(url: string): string | undefined {
  if (url === "") return "url field needs to be set";
  let candidate = url;
  let parsed = parseGoUrl(candidate, true);
  if ("error" in parsed) {
    const original = parsed.error;
    candidate = `http://${url}`;
    parsed = parseGoUrl(candidate, true);
    if ("error" in parsed) return `failed to parse url: ${original}`;
  }
  const strict = parseGoUrl(candidate, false);
  if ("error" in strict) return `failed to strict parse url: ${strict.error}`;
  return URL_SCHEMES.has(parsed.scheme) ? undefined : `url contains unsupported scheme: ${parsed.scheme}`;
}

function sha256Error(sha: string): string | undefined {
  if (sha === "") return undefined;
  if (sha.length !== 64) return "sha256 field must be 64 characters long";
  return /^[a-f0-9]+$/.test(sha) ? undefined : "sha256 field must match [a-f0-9]{64} pattern";
}

function validateEnv(vmConfig: JsonObject, out: Findings): void {
  const seen = new Set<string>();
  for (const [i, value] of (listField(vmConfig, "env") ?? []).entries()) {
    const env = asObject(value);
    if (!env) continue;
    const at = out.at("env", i);
    const valueFrom = readEnum(field(env, "valueFrom"), ENV_VALUE_SOURCE, at.at("valueFrom"));
    const name = stringField(env, "name");
    if (!report(at, envProblem(name, valueFrom, stringField(env, "value"), seen))) return;
    seen.add(name);
  }
}

function envProblem(name: string, valueFrom: string | undefined, value: string, seen: Set<string>): string | undefined {
  if (name === "") return "spec.vmConfig.env invalid";
  if (name.length > 256) return "env.name field must be less than 255 characters long";
  if (seen.has(name)) return "duplicate env";
  if (valueFrom !== "INLINE" && value !== "") return "value may only be set when valueFrom is INLINE";
  return undefined;
}

export function validateMatch(spec: JsonObject, out: Findings): void {
  for (const [i, value] of (listField(spec, "match") ?? []).entries()) {
    const at = out.at("match", i);
    const selector = asObject(value);
    if (!selector) {
      at.error(`spec.Match[${i}] is nil`);
      return;
    }
    readEnum(field(selector, "mode"), SELECTOR_WORKLOAD_MODE, at.at("mode"));
    for (const [j, port] of (listField(selector, "ports") ?? []).entries()) {
      const portAt = at.at("ports", j);
      const portSelector = asObject(port);
      if (!portSelector) {
        portAt.error(`spec.Match[${i}].Ports[${j}] is nil`);
        return;
      }
      const number = numberField(portSelector, "number");
      if (number <= 0 || number > 65535) {
        portAt.at("number").error(`spec.Match[${i}].Ports[${j}] is out of range: ${number}`);
        return;
      }
    }
  }
}
