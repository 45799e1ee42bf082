// ProxyConfig webhook validation (validation-rules.md §12).
import type { ConfigObject } from "../model.ts";
import { asNumber, asObject, validateMatchLabelsSelector } from "./common/index.ts";
import type { Findings, SemanticValidator } from "./findings.ts";

export const validateProxyConfig: SemanticValidator = (obj: ConfigObject, _ctx, out: Findings) => {
  const spec = asObject(obj.spec) ?? {};
  validateMatchLabelsSelector(spec.selector, out.at("selector"));
  if (asNumber(spec.concurrency) < 0) out.at("concurrency").error("concurrency must be greater than or equal to 0");
};
