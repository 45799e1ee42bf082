// VirtualServices of a push by gateway, with exportTo applied (Istio's virtualServiceIndex).
// Each is first resolved (short names made fully qualified) and, if it is a root, has its
// delegates merged in; delegates (VirtualServices without hosts) are not indexed themselves.
// A VirtualService without gateways binds to `mesh`, the sidecars.
import type { ConfigObject } from "../config/index.ts";
import type {
  VirtualService,
  VirtualServiceHttp,
  VirtualServiceHttpDelegate,
  VirtualServiceSpec,
} from "../config/types/index.ts";
import { type Memos, NO_MEMOS } from "../util/index.ts";
import { nameOf, namespaceOf, sortByCreationTime } from "./config-meta.ts";
import { hostsMatch, MESH_GATEWAY } from "./host.ts";
import { appendTo } from "./multimap.ts";
import { mergeDelegateRoutes } from "./virtual-service-delegate.ts";
import { resolveVirtualServiceNames } from "./virtual-service-resolve.ts";
import { EXPORT_NONE, EXPORT_PUBLIC, exportToSet, isExportedTo } from "./visibility.ts";

/** Annotation marking a VirtualService translated from Gateway API routes (already resolved, no delegation). */
export const ROUTE_SEMANTICS_ANNOTATION = "internal.istio.io/route-semantics";

/** Gateway API semantics: hosts match imports one way only, and same-namespace routes come first. */
export function usesGatewaySemantics(vs: ConfigObject): boolean {
  return vs.metadata.annotations?.[ROUTE_SEMANTICS_ANNOTATION] === "gateway";
}

type ByNamespaceAndGateway = Map<string, Map<string, VirtualService[]>>;

export class VirtualServiceIndex {
  /** Every indexed VirtualService (roots merged, delegates left out), oldest first. */
  readonly all: readonly VirtualService[];
  private readonly publicByGateway = new Map<string, VirtualService[]>();
  private readonly privateByNamespaceAndGateway: ByNamespaceAndGateway = new Map();
  private readonly exportedByNamespaceAndGateway: ByNamespaceAndGateway = new Map();
  /** The gateways with a public Gateway API route, which forGateway puts first in its namespace. */
  private readonly gatewayApiPublicGateways = new Set<string>();
  /** forGateway's answers that are not one of the lists above, by `<namespace>/<gateway>`. */
  private readonly byNamespaceAndGateway = new Map<string, readonly VirtualService[]>();
  /** The delegates each merged root names, `namespace/name`, found or not. */
  private readonly delegatesByRoot = new Map<VirtualService, string[]>();

  constructor(
    configs: readonly VirtualService[],
    defaultExportTo: readonly string[] | undefined,
    domainSuffix: string,
    /** Where resolving names keeps the matches it resolves, across pushes (see virtual-service-resolve.ts). */
    memos: Memos = NO_MEMOS,
  ) {
    const exportTo = (vs: VirtualService) => exportToSet(vs.spec?.exportTo, defaultExportTo, namespaceOf(vs));
    const delegates = new Map<string, VirtualService>();
    for (const vs of configs) {
      if ((vs.spec?.hosts ?? []).length === 0) delegates.set(`${namespaceOf(vs)}/${nameOf(vs)}`, vs);
    }
    const merged: VirtualService[] = [];
    for (const vs of configs) {
      if ((vs.spec?.hosts ?? []).length === 0) continue;
      if (usesGatewaySemantics(vs)) {
        merged.push(vs);
        continue;
      }
      const spec = resolveVirtualServiceNames(vs.spec ?? {}, namespaceOf(vs), domainSuffix, memos);
      const http = spec.http?.flatMap((route) => resolveDelegate(memos, route, vs, delegates, exportTo, domainSuffix));
      const root = { ...vs, spec: http ? { ...spec, http } : spec };
      merged.push(root);
      const named = (spec.http ?? []).flatMap((r) => (r.delegate ? [delegateKey(r.delegate, vs)] : []));
      if (named.length > 0) this.delegatesByRoot.set(root, named);
    }
    this.all = sortByCreationTime(merged);

    for (const vs of this.all) {
      const namespace = namespaceOf(vs);
      const gateways = vs.spec?.gateways?.length ? vs.spec.gateways : [MESH_GATEWAY];
      const visibility = exportTo(vs);
      if (visibility.has(EXPORT_PUBLIC)) {
        for (const gw of gateways) {
          appendTo(this.publicByGateway, gw, vs);
          if (usesGatewaySemantics(vs)) this.gatewayApiPublicGateways.add(gw);
        }
      } else if (!visibility.has(EXPORT_NONE)) {
        for (const target of visibility) {
          const index = target === namespace ? this.privateByNamespaceAndGateway : this.exportedByNamespaceAndGateway;
          for (const gw of gateways) add(index, target, gw, vs);
        }
      }
    }
  }

  /** The delegate VirtualServices a root names (`namespace/name`); a change to one changes the root. */
  delegatesOf(vs: VirtualService): readonly string[] {
    return this.delegatesByRoot.get(vs) ?? [];
  }

  /**
   * The VirtualServices bound to `gateway` ("mesh" or "ns/name") that config in `namespace` can
   * see: its own private ones, those exported to it by name, then public ones (Gateway API routes
   * of its own namespace first).
   */
  forGateway(namespace: string, gateway: string): readonly VirtualService[] {
    const privateOnes = this.privateByNamespaceAndGateway.get(namespace)?.get(gateway);
    const exported = this.exportedByNamespaceAndGateway.get(namespace)?.get(gateway);
    const publicOnes = this.publicByGateway.get(gateway) ?? [];
    // Only public ones, none a Gateway API route to put first (the common case): the index's own list.
    if (!privateOnes && !exported && !this.gatewayApiPublicGateways.has(gateway)) return publicOnes;
    // Else kept per namespace and gateway: a router asks once per server of each of its route names.
    const key = `${namespace}/${gateway}`;
    let found = this.byNamespaceAndGateway.get(key);
    if (!found) {
      const visible = [...(privateOnes ?? []), ...(exported ?? [])];
      const otherPublic: VirtualService[] = [];
      for (const vs of publicOnes) {
        if (usesGatewaySemantics(vs) && namespaceOf(vs) === namespace) visible.push(vs);
        else otherPublic.push(vs);
      }
      for (const vs of otherPublic) visible.push(vs);
      found = visible;
      this.byNamespaceAndGateway.set(key, found);
    }
    return found;
  }
}

/** The VirtualServices of `candidates` with a host overlapping `hostname` (either may be a wildcard). */
export function virtualServicesForHost(candidates: readonly VirtualService[], hostname: string): VirtualService[] {
  return candidates.filter((vs) => (vs.spec?.hosts ?? []).some((h) => hostsMatch(h, hostname)));
}

function add(index: ByNamespaceAndGateway, namespace: string, gateway: string, vs: VirtualService): void {
  const byGateway = index.get(namespace) ?? new Map<string, VirtualService[]>();
  index.set(namespace, byGateway);
  appendTo(byGateway, gateway, vs);
}

/**
 * A root's route, with a delegate replaced by the delegate's merged routes. A delegate that is
 * missing or not exported to the root's namespace drops the route.
 */
function resolveDelegate(
  memos: Memos,
  route: VirtualServiceHttp,
  root: VirtualService,
  delegates: ReadonlyMap<string, VirtualService>,
  exportTo: (vs: VirtualService) => ReadonlySet<string>,
  domainSuffix: string,
): VirtualServiceHttp[] {
  if (!route.delegate) return [route];
  const namespace = route.delegate.namespace || namespaceOf(root);
  const delegate = delegates.get(delegateKey(route.delegate, root));
  if (!delegate || !isExportedTo(exportTo(delegate), namespaceOf(root))) return [];
  const spec: VirtualServiceSpec = resolveVirtualServiceNames(delegate.spec ?? {}, namespace, domainSuffix, memos);
  return mergeDelegateRoutes(route, spec.http ?? []);
}

function delegateKey(delegate: VirtualServiceHttpDelegate, root: VirtualService): string {
  return `${delegate.namespace || namespaceOf(root)}/${delegate.name ?? ""}`;
}
