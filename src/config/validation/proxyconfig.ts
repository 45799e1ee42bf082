// ProxyConfig webhook validation (validation-rules.md §12).
import type { ConfigObject } from "../model.ts";
import { asObject, field, numberField, validateMatchLabelsSelector } from "./common/index.ts";
import type { Findings, SemanticValidator } from "./findings.ts";

export const validateProxyConfig: SemanticValidator = (obj: ConfigObject, _ctx, out: Findings) => {
  const spec = asObject(obj.spec) ?? {};
  validateMatchLabelsSelector(field(spec, "selector"), out.at("selector"));
  if (numberField(spec, "concurrency") < 0)
    out.at("concurrency").error("concurrency must be greater than or equal to 0");
};
