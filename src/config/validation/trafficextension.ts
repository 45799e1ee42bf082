// TrafficExtension (extensions.istio.io): Istio's ValidateTrafficExtension. Exactly one of a Wasm module
// (checked as a WasmPlugin's, but for the pluginName wording) or inline Lua code.
import { readEnum } from "./common/enums.ts";
import { asObject, field, objectField, stringField } from "./common/json.ts";
import { validatePolicyTargets } from "./common/selectors.ts";
import type { SemanticValidator } from "./findings.ts";
import { EXECUTION_PHASE } from "./security-decode.ts";
import { validateMatch, validateWasmModule } from "./wasmplugin.ts";

/** Envoy's Lua filter takes at most 64 KiB of inline code. */
const MAX_LUA_CODE = 65536;

export const validateTrafficExtension: SemanticValidator = (obj, _ctx, out) => {
  const spec = asObject(obj.spec) ?? {};
  readEnum(field(spec, "phase"), EXECUTION_PHASE, out.at("phase"));
  const wasm = objectField(spec, "wasm");
  const lua = objectField(spec, "lua");
  if ((wasm === undefined) === (lua === undefined)) out.error("exactly one of wasm or lua must be set");
  validatePolicyTargets(spec, out);
  if (lua) {
    const code = stringField(lua, "inlineCode");
    if (code.length === 0) out.at("lua.inlineCode").error("lua.inlineCode cannot be empty");
    else if (code.length > MAX_LUA_CODE) out.at("lua.inlineCode").error("lua.inlineCode exceeds maximum size of 64KB");
  }
  if (wasm) validateWasmModule(wasm, out.at("wasm"), "pluginName field must be less than 256 characters long");
  validateMatch(spec, out);
};
