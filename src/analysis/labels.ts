import { asArray, asRecord, asString, asStringMap } from "./resource.ts";

// Kubernetes label-set selectors as Istio's analyzers use them (klabels.SelectorFromSet): an empty or
// absent selector matches everything; its string form is "k=v" pairs sorted by key, comma-separated.

export function selectorMatches(
  selector: Readonly<Record<string, string>> | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}

export function selectorString(selector: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(selector ?? {})
    .sort()
    .map((k) => `${k}=${selector?.[k]}`)
    .join(",");
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** metav1.LabelSelectorAsSelector(selector).Matches(labels); an absent selector matches everything, an invalid one nothing. */
export function labelSelectorMatches(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (!selector) return true;
  if (!selectorMatches(selector.matchLabels, labels)) return false;
  return (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    switch (operator) {
      case "In":
        return key in labels && values.includes(labels[key]);
      case "NotIn":
        return !(key in labels) || !values.includes(labels[key]);
      case "Exists":
        return key in labels;
      case "DoesNotExist":
        return !(key in labels);
      default:
        return false;
    }
  });
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
