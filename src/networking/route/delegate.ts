// Delegate VirtualServices (Istio pilot/pkg/model/virtualservice.go MergeHTTPRoutes and the merge in
// virtualservice_controller.go): an http rule of a root VirtualService with `delegate` is replaced by
// the delegate's rules, each with its matches narrowed by the root's (a delegate match must fall
// inside a root match, or the delegate rule is dropped) and the root's settings as defaults. A missing
// delegate, or one not exported to the root's namespace, drops only that rule.
import type {
  VirtualServiceHttp,
  VirtualServiceHttpMatch,
  VirtualServiceHttpMatchUri,
  VirtualServiceSpec,
} from "../../config/index.ts";
import type { MeshConfig, VirtualService } from "./types.ts";

type StringMatch = VirtualServiceHttpMatchUri;

/** Istio's stringMatchConflict: the leaf match is not within the root match. */
function stringMatchConflict(root: StringMatch | undefined, leaf: StringMatch | undefined): boolean {
  if (!root || !leaf) return false;
  // A regex on either side cannot be compared with anything else.
  if (root.regex && (leaf.regex || leaf.prefix || leaf.exact)) return true;
  if (leaf.regex && (root.regex || root.prefix || root.exact)) return true;
  if (root.exact) return leaf.prefix ? true : leaf.exact !== root.exact;
  if (root.prefix) {
    if (leaf.prefix) return !leaf.prefix.startsWith(root.prefix);
    if (leaf.exact) return !leaf.exact.startsWith(root.prefix);
  }
  return true;
}

function mapConflict(root: Record<string, StringMatch> | undefined, leaf: Record<string, StringMatch> | undefined) {
  return Object.entries(leaf ?? {}).some(([k, v]) => stringMatchConflict(root?.[k], v));
}

/** Istio's hasConflict between a root match and a delegate match. */
export function matchConflict(root: VirtualServiceHttpMatch, leaf: VirtualServiceHttpMatch): boolean {
  const fields = ["uri", "scheme", "method", "authority"] as const;
  if (fields.some((f) => stringMatchConflict(root[f], leaf[f]))) return true;
  if (mapConflict(root.headers, leaf.headers)) return true;
  if (mapConflict(root.withoutHeaders, leaf.withoutHeaders)) return true;
  if (mapConflict(root.queryParams, leaf.queryParams)) return true;
  if ((root.ignoreUriCase ?? false) !== (leaf.ignoreUriCase ?? false)) return true;
  if (root.port && leaf.port && root.port !== leaf.port) return true;
  if (root.sourceNamespace && leaf.sourceNamespace !== root.sourceNamespace) return true;
  for (const [k, v] of Object.entries(leaf.sourceLabels ?? {})) {
    const rv = root.sourceLabels?.[k];
    if (rv !== undefined && rv !== v) return true;
  }
  const rg = root.gateways ?? [];
  const lg = leaf.gateways ?? [];
  if (rg.length > 0 && lg.length > 0 && (rg.length < lg.length || lg.some((g) => !rg.includes(g)))) return true;
  return false;
}

function joinNames(root: string | undefined, leaf: string | undefined): string | undefined {
  if (!leaf) return root;
  return root ? `${root}-${leaf}` : leaf;
}

function mergeMaps<V>(root: Record<string, V> | undefined, leaf: Record<string, V> | undefined) {
  return root || leaf ? { ...root, ...leaf } : undefined;
}

function mergeMatch(root: VirtualServiceHttpMatch, leaf: VirtualServiceHttpMatch): VirtualServiceHttpMatch {
  return {
    ...leaf,
    name: joinNames(root.name, leaf.name),
    uri: leaf.uri ?? root.uri,
    scheme: leaf.scheme ?? root.scheme,
    method: leaf.method ?? root.method,
    authority: leaf.authority ?? root.authority,
    headers: mergeMaps(root.headers, leaf.headers),
    withoutHeaders: mergeMaps(root.withoutHeaders, leaf.withoutHeaders),
    queryParams: mergeMaps(root.queryParams, leaf.queryParams),
    port: leaf.port || root.port,
    sourceLabels: mergeMaps(root.sourceLabels, leaf.sourceLabels),
    sourceNamespace: leaf.sourceNamespace || root.sourceNamespace,
    gateways: leaf.gateways && leaf.gateways.length > 0 ? leaf.gateways : root.gateways,
    statPrefix: leaf.statPrefix || root.statPrefix,
  };
}

/** Each delegate match merged with every root match it fits; "conflict" when one fits none. */
function mergeMatches(
  root: VirtualServiceHttpMatch[] | undefined,
  leaf: VirtualServiceHttpMatch[] | undefined,
): VirtualServiceHttpMatch[] | undefined | "conflict" {
  if (!root || root.length === 0) return leaf;
  if (!leaf || leaf.length === 0) return root;
  const out: VirtualServiceHttpMatch[] = [];
  for (const l of leaf) {
    const fitting = root.filter((r) => !matchConflict(r, l));
    if (fitting.length === 0) return "conflict";
    out.push(...fitting.map((r) => mergeMatch(r, l)));
  }
  return out;
}

/** One delegate rule under its root rule; undefined when their matches conflict. */
export function mergeHttpRoute(root: VirtualServiceHttp, leaf: VirtualServiceHttp): VirtualServiceHttp | undefined {
  const match = mergeMatches(root.match, leaf.match);
  if (match === "conflict") return undefined;
  return {
    ...leaf,
    match,
    name: joinNames(root.name, leaf.name),
    rewrite: leaf.rewrite ?? root.rewrite,
    directResponse: leaf.directResponse ?? root.directResponse,
    timeout: leaf.timeout ?? root.timeout,
    retries: leaf.retries ?? root.retries,
    fault: leaf.fault ?? root.fault,
    mirror: leaf.mirror ?? root.mirror,
    mirrorPercent: leaf.mirrorPercent ?? root.mirrorPercent,
    mirrorPercentage: leaf.mirrorPercentage ?? root.mirrorPercentage,
    corsPolicy: leaf.corsPolicy ?? root.corsPolicy,
    mirrors: leaf.mirrors ?? root.mirrors,
    headers: leaf.headers ?? root.headers,
  };
}

/** Whether `vs` is visible from `namespace` (exportTo, else the mesh defaultVirtualServiceExportTo, else everywhere). */
export function exportedTo(vs: VirtualService, namespace: string, mesh: MeshConfig): boolean {
  const exportTo = vs.spec?.exportTo?.length ? vs.spec.exportTo : (mesh.defaultVirtualServiceExportTo ?? ["*"]);
  const own = vs.metadata.namespace ?? "";
  return exportTo.some((e) => e === "*" || e === namespace || (e === "." && own === namespace));
}

/** A VirtualService with a delegating rule. */
export function isRootVirtualService(vs: VirtualService): boolean {
  return (vs.spec?.http ?? []).some((h) => h.delegate !== undefined);
}

/**
 * The root VirtualService with its delegates merged in (a new object; the inputs are not changed).
 * `findDelegate(namespace, name)` looks up a VirtualService; the namespace defaults to the root's.
 */
export function mergeDelegates(
  root: VirtualService,
  findDelegate: (namespace: string, name: string) => VirtualService | undefined,
  mesh: MeshConfig,
): VirtualService {
  if (!isRootVirtualService(root)) return root;
  const rootNamespace = root.metadata.namespace ?? "";
  const http: VirtualServiceHttp[] = [];
  for (const rule of root.spec?.http ?? []) {
    if (!rule.delegate) {
      http.push(rule);
      continue;
    }
    const delegate = findDelegate(rule.delegate.namespace || rootNamespace, rule.delegate.name ?? "");
    if (!delegate || !exportedTo(delegate, rootNamespace, mesh)) continue;
    const { delegate: _, ...parent } = rule;
    for (const leaf of delegate.spec?.http ?? []) {
      const merged = mergeHttpRoute(parent, leaf);
      if (merged) http.push(merged);
    }
  }
  const spec: VirtualServiceSpec = { ...root.spec, http };
  return { ...root, spec };
}
