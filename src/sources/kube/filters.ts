// Which objects this control plane takes from the cluster: MeshConfig discoverySelectors choose the
// namespaces (Istio's discovery namespace filter), and the istio.io/rev label chooses between
// control-plane revisions for config kinds (Istio's LabelsInRevision). Revision tags do not enter here,
// as in istiod: they decide whose Gateway deployments and statuses an object is (controllers/tag-watcher.ts).
import type { ConfigObject, KindInfo } from "../../config/index.ts";
import { type LabelSelector, type Labels, selectorMatches } from "./labels.ts";

const REVISION_LABEL = "istio.io/rev";
const GATEWAY_API_GROUP = "gateway.networking.k8s.io";

/**
 * Istio's rule: an object without the label belongs to every revision; a control plane without a
 * revision takes everything; otherwise the label must name this revision. It applies to mesh
 * config (Istio and Gateway API kinds) only: on Namespaces and Pods the label selects the sidecar
 * injector, and every revision still sees those workloads. Gateway API Gateways are every
 * revision's too, as istiod's Gateway controller takes them unfiltered: their label may name a tag,
 * and whose deployment and status they are is the tag watcher's IsMine.
 */
export function inRevision(kind: KindInfo, obj: ConfigObject, revision: string): boolean {
  if (kind.family === "kubernetes" || revision === "") return true;
  if (kind.group === GATEWAY_API_GROUP && kind.kind === "Gateway") return true;
  const label = obj.metadata.labels?.[REVISION_LABEL];
  return label === undefined || label === revision;
}

export function isNamespaceKind(kind: KindInfo): boolean {
  return kind.group === "" && kind.kind === "Namespace";
}

/** The namespaces selected by discoverySelectors, from the labels of every namespace seen. */
export class NamespaceFilter {
  private readonly namespaceLabels = new Map<string, Labels>();

  constructor(private selectors: readonly LabelSelector[]) {}

  /** No selectors select every namespace; otherwise a namespace matching any selector (they are ORed). */
  isSelected(namespace: string): boolean {
    if (this.selectors.length === 0) return true;
    const labels = this.namespaceLabels.get(namespace);
    return labels !== undefined && this.selectors.some((s) => selectorMatches(s, labels));
  }

  /**
   * Whether an object is visible: cluster-scoped objects always are, a Namespace when it is itself
   * selected, anything else when its namespace is.
   */
  admits(kind: KindInfo, obj: ConfigObject): boolean {
    if (isNamespaceKind(kind)) return this.isSelected(obj.metadata.name ?? "");
    return !kind.namespaced || this.isSelected(obj.metadata.namespace ?? "");
  }

  /** Records a namespace's labels (undefined: it was deleted); true if that changed its selection. */
  setNamespace(name: string, labels: Labels | undefined): boolean {
    const before = this.isSelected(name);
    if (labels === undefined) this.namespaceLabels.delete(name);
    else this.namespaceLabels.set(name, labels);
    return before !== this.isSelected(name);
  }

  /** Replaces every namespace's labels (after a relist); returns the namespaces whose selection changed. */
  setAllNamespaces(namespaces: ReadonlyMap<string, Labels>): string[] {
    const names = new Set([...this.namespaceLabels.keys(), ...namespaces.keys()]);
    const before = new Map([...names].map((n) => [n, this.isSelected(n)]));
    this.namespaceLabels.clear();
    for (const [name, labels] of namespaces) this.namespaceLabels.set(name, labels);
    return [...names].filter((n) => before.get(n) !== this.isSelected(n));
  }

  /** New selectors (a MeshConfig reload); every object's visibility must then be checked again. */
  setSelectors(selectors: readonly LabelSelector[]): void {
    this.selectors = selectors;
  }
}
