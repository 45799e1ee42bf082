// DestinationRule webhook validation (validation-rules.md §5).
import type { ConfigObject } from "../model.ts";
import {
  asObject,
  asStringMap,
  field,
  forEachMessage,
  listField,
  objectField,
  stringField,
  stringListField,
  validateExportTo,
  validateLabels,
  validateMatchLabelsSelector,
  validateSubsetName,
  validateTrafficPolicy,
  validateWildcardDomain,
} from "./common/index.ts";
import { Findings, type SemanticValidator } from "./findings.ts";

export const validateDestinationRule: SemanticValidator = (obj: ConfigObject, _ctx, out: Findings) => {
  const spec = asObject(obj.spec) ?? {};
  const namespace = obj.metadata.namespace ?? "";
  validateWildcardDomain(stringField(spec, "host"), out.at("host"));
  validateTrafficPolicy(namespace, field(spec, "trafficPolicy"), out.at("trafficPolicy"));
  const names = new Set<string>();
  forEachMessage(listField(spec, "subsets"), out.at("subsets"), "subset may not be null", (subset, at) => {
    const name = stringField(subset, "name");
    if (names.has(name)) at.at("name").error(`duplicate subset names: ${name}`);
    names.add(name);
    validateSubsetName(name, at.at("name"));
    validateLabels(asStringMap(field(subset, "labels")) ?? {}, at.at("labels"));
    // Istio's validateSubset joins these with appendErrors, which keeps a Validation's errors and
    // drops its warnings: a subset's traffic policy warns of nothing (minimumRingSize included).
    const policy = at.at("trafficPolicy");
    validateTrafficPolicy(namespace, field(subset, "trafficPolicy"), new Findings(policy.path, policy.errors, []));
  });
  validateExportTo(
    namespace,
    stringListField(spec, "exportTo"),
    { destinationRuleWithSelector: objectField(spec, "workloadSelector") !== undefined },
    out.at("exportTo"),
  );
  validateMatchLabelsSelector(field(spec, "workloadSelector"), out.at("workloadSelector"));
};
