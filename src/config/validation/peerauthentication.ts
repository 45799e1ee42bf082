// PeerAuthentication (security.istio.io): Istio's ValidatePeerAuthentication.
import { readEnum } from "./common/enums.ts";
import { asObject, asStringMap, field, objectField } from "./common/json.ts";
import { validateMatchLabelsSelector } from "./common/selectors.ts";
import type { SemanticValidator } from "./findings.ts";
import { decodeUint32Key, MUTUAL_TLS_MODE } from "./security-decode.ts";

export const validatePeerAuthentication: SemanticValidator = (obj, _ctx, out) => {
  const spec = asObject(obj.spec) ?? {};
  readEnum(field(objectField(spec, "mtls") ?? {}, "mode"), MUTUAL_TLS_MODE, out.at("mtls.mode"));
  // An empty map is present (unlike an empty list), so `portLevelMtls: {}` is its own error.
  const portLevel = objectField(spec, "portLevelMtls");
  const portsAt = out.at("portLevelMtls");
  const ports = Object.keys(portLevel ?? {});
  const hasLabels =
    Object.keys(asStringMap(field(objectField(spec, "selector") ?? {}, "matchLabels")) ?? {}).length > 0;
  if (!hasLabels && ports.length > 0) portsAt.error("mesh/namespace peer authentication cannot have port level mTLS");
  if (portLevel && ports.length === 0) portsAt.error("port level mTLS, if defined, must have at least one element");
  for (const key of ports) {
    const at = portsAt.at(key);
    const port = decodeUint32Key(key, at);
    if (port !== undefined && (port === 0 || port > 65535)) at.error("port must be in range 1..65535");
    readEnum(field(asObject(portLevel?.[key]) ?? {}, "mode"), MUTUAL_TLS_MODE, at.at("mode"));
  }
  validateMatchLabelsSelector(field(spec, "selector"), out.at("selector"));
};
