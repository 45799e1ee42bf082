// Which SidecarScope a proxy gets (Istio's getSidecarScope), computed on first use and kept for
// the push. A sidecar proxy gets the first Sidecar of its namespace whose workloadSelector matches
// its labels (Sidecars with a selector first, oldest first), else its namespace's Sidecar without
// selector, else the root namespace's Sidecar without selector, else the default scope importing
// every visible service. Routers and waypoints always get the gateway default scope.
import type { Sidecar } from "../config/types/index.ts";
import { labelsContain } from "../krt/index.ts";
import { nameOf, namespaceOf, sortByCreationTime } from "./config-meta.ts";
import { appendTo } from "./multimap.ts";
import type { ProxyNode } from "./proxy.ts";
import { type ScopeSources, SidecarScope } from "./sidecar-scope.ts";

/** What of a proxy chooses its scope. */
type ScopeChooser = Pick<ProxyNode, "type" | "configNamespace" | "labels">;

export class SidecarIndex {
  private readonly byNamespace = new Map<string, Sidecar[]>();
  private readonly rootSidecar: Sidecar | undefined;
  /** Scopes computed so far, by Sidecar (or default) and config namespace. */
  private readonly cache = new Map<string, SidecarScope>();
  /**
   * The scope each proxy object was last given, with what it was chosen by: every push asks for the
   * scope of every connected proxy (proxyNeedsPush), and choosing matches its labels against Sidecars.
   */
  private readonly byProxy = new WeakMap<object, ScopeChooser & { scope: SidecarScope }>();

  constructor(
    sidecars: readonly Sidecar[],
    private readonly sources: ScopeSources,
    rootNamespace: string,
  ) {
    const sorted = sortByCreationTime(sidecars);
    const withSelector = sorted.filter((s) => s.spec?.workloadSelector);
    const withoutSelector = sorted.filter((s) => !s.spec?.workloadSelector);
    for (const sidecar of [...withSelector, ...withoutSelector]) {
      const namespace = namespaceOf(sidecar);
      appendTo(this.byNamespace, namespace, sidecar);
    }
    this.rootSidecar = withoutSelector.find((s) => namespaceOf(s) === rootNamespace);
  }

  /** The Sidecar resource that applies to `proxy`, if any. */
  sidecarFor(proxy: Pick<ProxyNode, "configNamespace" | "labels">): Sidecar | undefined {
    const own = this.byNamespace.get(proxy.configNamespace) ?? [];
    const selected = own.find((s) => labelsContain(proxy.labels, s.spec?.workloadSelector?.labels ?? {}));
    return selected ?? this.rootSidecar;
  }

  scopeFor(proxy: ScopeChooser): SidecarScope {
    const kept = this.byProxy.get(proxy);
    if (kept?.type === proxy.type && kept.configNamespace === proxy.configNamespace && kept.labels === proxy.labels) {
      return kept.scope;
    }
    const scope = this.chooseScope(proxy);
    this.byProxy.set(proxy, { type: proxy.type, configNamespace: proxy.configNamespace, labels: proxy.labels, scope });
    return scope;
  }

  private chooseScope(proxy: ScopeChooser): SidecarScope {
    const namespace = proxy.configNamespace;
    if (proxy.type === "router" || proxy.type === "waypoint" || proxy.type === "agentgateway") {
      return this.cached(`gateway|${namespace}`, () => new SidecarScope(this.sources, undefined, namespace, true));
    }
    const sidecar = this.sidecarFor(proxy);
    const key = sidecar ? `${namespaceOf(sidecar)}/${nameOf(sidecar)}|${namespace}` : `default|${namespace}`;
    return this.cached(key, () => new SidecarScope(this.sources, sidecar, namespace));
  }

  private cached(key: string, build: () => SidecarScope): SidecarScope {
    let scope = this.cache.get(key);
    if (!scope) {
      scope = build();
      this.cache.set(key, scope);
    }
    return scope;
  }
}
