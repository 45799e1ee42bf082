// Kubernetes label selectors: the structured form (MeshConfig discoverySelectors, matchLabels and
// matchExpressions) and the string form of the `labelSelector` query parameter, both evaluated the
// way apimachinery does (requirements are ANDed; NotIn and != also match when the key is absent).
import type { MeshConfig } from "../../config/index.ts";

export type LabelSelector = NonNullable<MeshConfig["discoverySelectors"]>[number];
type LabelSelectorRequirement = NonNullable<LabelSelector["matchExpressions"]>[number];
export type Labels = Readonly<Record<string, string>>;

/** True if `labels` satisfy every requirement of `selector`. An empty selector matches everything. */
export function selectorMatches(selector: LabelSelector, labels: Labels): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((requirement) => requirementMatches(requirement, labels));
}

function requirementMatches(requirement: LabelSelectorRequirement, labels: Labels): boolean {
  const key = requirement.key ?? "";
  const present = Object.hasOwn(labels, key);
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case "In":
      return present && values.includes(labels[key]);
    case "NotIn":
      return !present || !values.includes(labels[key]);
    case "Exists":
      return present;
    case "DoesNotExist":
      return !present;
    default:
      // apimachinery rejects unknown operators; a selector that cannot be evaluated selects nothing.
      return false;
  }
}

/**
 * Parses the string form ("app=a,tier!=db,env in (prod,qa),!legacy") into a LabelSelector.
 * Throws on syntax it does not understand, so a server can answer 400.
 */
export function parseLabelSelector(text: string): LabelSelector {
  const matchExpressions: LabelSelectorRequirement[] = [];
  for (const term of splitTerms(text)) {
    const set = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
    const equality = /^([^\s!=]+)\s*(==|=|!=)\s*([^\s!=]*)$/.exec(term);
    if (set) {
      const values = set[3].split(",").map((v) => v.trim());
      matchExpressions.push({ key: set[1], operator: set[2] === "in" ? "In" : "NotIn", values });
    } else if (equality) {
      matchExpressions.push({
        key: equality[1],
        operator: equality[2] === "!=" ? "NotIn" : "In",
        values: [equality[3]],
      });
    } else if (/^![^\s!=]+$/.test(term)) {
      matchExpressions.push({ key: term.slice(1), operator: "DoesNotExist" });
    } else if (/^[^\s!=(),]+$/.test(term)) {
      matchExpressions.push({ key: term, operator: "Exists" });
    } else {
      throw new Error(`unable to parse requirement: ${JSON.stringify(term)}`);
    }
  }
  return { matchExpressions };
}

/** Splits on the commas that separate requirements, not those inside "in (a,b)". */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")") depth--;
    else if (text[i] === "," && depth === 0) {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms.map((t) => t.trim()).filter((t) => t !== "");
}
