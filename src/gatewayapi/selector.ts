// Kubernetes label selectors (matchLabels, matchExpressions), as used by allowedRoutes namespace selectors.
import type { gatewayapi } from "../config/index.ts";

export function selectorMatches(
  selector: gatewayapi.NamespacesSelector,
  labels: Readonly<Record<string, string>>,
): boolean | undefined {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expr of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, expr.key);
    const values = expr.values ?? [];
    switch (expr.operator) {
      case "In":
        if (!has || !values.includes(labels[expr.key])) return false;
        break;
      case "NotIn":
        if (has && values.includes(labels[expr.key])) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default:
        // An unknown operator makes the selector invalid; Istio then matches nothing.
        return undefined;
    }
  }
  return true;
}

/** A namespace's labels with kubernetes.io/metadata.name implied, as newer clusters set it. */
export function namespaceLabels(name: string, labels: Readonly<Record<string, string>> | undefined) {
  return { ...labels, "kubernetes.io/metadata.name": name };
}
