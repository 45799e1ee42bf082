// Kubernetes label selectors as Istio's analyzers use them: label sets (klabels.SelectorFromSet), where
// an empty or absent selector matches everything and the string form is "k=v" pairs sorted by key,
// comma-separated; and metav1.LabelSelectors of webhooks. Matching is the kube source's.
import { type LabelSelector, selectorMatches as structuredSelectorMatches } from "../sources/kube/labels.ts";
import { asArray, asRecord, asString, asStringMap } from "./resource.ts";

export type { LabelSelector };

export function selectorMatches(
  selector: Readonly<Record<string, string>> | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  return structuredSelectorMatches({ matchLabels: { ...selector } }, labels);
}

export function selectorString(selector: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(selector ?? {})
    .sort()
    .map((k) => `${k}=${selector?.[k]}`)
    .join(",");
}

/** metav1.LabelSelectorAsSelector(selector).Matches(labels), where an absent selector matches everything. */
export function labelSelectorMatches(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  return selector === undefined || structuredSelectorMatches(selector, labels);
}

/** A metav1.LabelSelector read from an object; undefined when absent (which matches everything). */
export function labelSelectorOf(value: unknown): LabelSelector | undefined {
  if (value === undefined || value === null) return undefined;
  const selector = asRecord(value);
  return {
    matchLabels: asStringMap(selector.matchLabels),
    matchExpressions: asArray(selector.matchExpressions).map((e) => {
      const expression = asRecord(e);
      return {
        key: asString(expression.key),
        operator: asString(expression.operator),
        values: asArray(expression.values).map(String),
      };
    }),
  };
}

/** util.ExtractLabelFromSelectorString: the key of a selector string's first pair ("" without "="). */
export function firstSelectorKey(selectorText: string): string {
  const eq = selectorText.indexOf("=");
  return eq < 0 ? "" : selectorText.slice(0, eq);
}
