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
