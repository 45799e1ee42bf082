// Delegation: a root VirtualService's http route with `delegate` is replaced by the delegate's
// routes, each merged with the root route (Istio's MergeHTTPRoutes). Every delegate match must
// fit inside some root match (same or narrower uri, scheme, method, authority, headers, query
// params, port, source, gateways); a delegate route that fits no root match is dropped. Fields the
// delegate route leaves unset come from the root route.
import type { VirtualServiceHttp, VirtualServiceHttpMatch, VirtualServiceHttpMatchUri } from "../config/types/index.ts";

export function mergeDelegateRoutes(
  root: VirtualServiceHttp,
  delegate: readonly VirtualServiceHttp[],
): VirtualServiceHttp[] {
  const merged: VirtualServiceHttp[] = [];
  for (const route of delegate) {
    const one = mergeRoute(root, route);
    if (one) merged.push(one);
  }
  return merged;
}

function mergeRoute(root: VirtualServiceHttp, delegate: VirtualServiceHttp): VirtualServiceHttp | undefined {
  const match = mergeMatches(root.match ?? [], delegate.match ?? []);
  if (match === undefined) return undefined;
  return withoutUndefined({
    ...delegate,
    match: match.length > 0 ? match : undefined,
    name: joinNames(root.name, delegate.name),
    rewrite: delegate.rewrite ?? root.rewrite,
    directResponse: delegate.directResponse ?? root.directResponse,
    timeout: delegate.timeout ?? root.timeout,
    retries: delegate.retries ?? root.retries,
    fault: delegate.fault ?? root.fault,
    mirror: delegate.mirror ?? root.mirror,
    mirrorPercent: delegate.mirrorPercent ?? root.mirrorPercent,
    mirrorPercentage: delegate.mirrorPercentage ?? root.mirrorPercentage,
    corsPolicy: delegate.corsPolicy ?? root.corsPolicy,
    mirrors: delegate.mirrors ?? root.mirrors,
    headers: delegate.headers ?? root.headers,
  });
}

/** `root-delegate` when both are named, else whichever is. */
function joinNames(root: string | undefined, delegate: string | undefined): string | undefined {
  if (!delegate) return root;
  return root ? `${root}-${delegate}` : delegate;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The merged matches, or undefined when some delegate match conflicts with every root match. */
function mergeMatches(
  root: readonly VirtualServiceHttpMatch[],
  delegate: readonly VirtualServiceHttpMatch[],
): VirtualServiceHttpMatch[] | undefined {
  if (root.length === 0) return [...delegate];
  if (delegate.length === 0) return [...root];
  const out: VirtualServiceHttpMatch[] = [];
  for (const leaf of delegate) {
    const fitting = root.filter((r) => !matchConflict(r, leaf));
    if (fitting.length === 0) return undefined;
    for (const r of fitting) out.push(mergeMatch(r, leaf));
  }
  return out;
}

function mergeMatch(root: VirtualServiceHttpMatch, leaf: VirtualServiceHttpMatch): VirtualServiceHttpMatch {
  const mergeMap = <V>(a: Record<string, V> | undefined, b: Record<string, V> | undefined) =>
    a || b ? { ...a, ...b } : undefined;
  return withoutUndefined({
    ...leaf,
    name: joinNames(root.name, leaf.name),
    uri: leaf.uri ?? root.uri,
    scheme: leaf.scheme ?? root.scheme,
    method: leaf.method ?? root.method,
    authority: leaf.authority ?? root.authority,
    headers: mergeMap(root.headers, leaf.headers),
    withoutHeaders: mergeMap(root.withoutHeaders, leaf.withoutHeaders),
    queryParams: mergeMap(root.queryParams, leaf.queryParams),
    port: leaf.port || root.port,
    sourceLabels: mergeMap(root.sourceLabels, leaf.sourceLabels),
    sourceNamespace: leaf.sourceNamespace || root.sourceNamespace,
    gateways: leaf.gateways?.length ? leaf.gateways : root.gateways,
    statPrefix: leaf.statPrefix || root.statPrefix,
  });
}

function matchConflict(root: VirtualServiceHttpMatch, leaf: VirtualServiceHttpMatch): boolean {
  const pairs: [VirtualServiceHttpMatchUri | undefined, VirtualServiceHttpMatchUri | undefined][] = [
    [root.uri, leaf.uri],
    [root.scheme, leaf.scheme],
    [root.method, leaf.method],
    [root.authority, leaf.authority],
  ];
  for (const [key, value] of Object.entries(leaf.headers ?? {})) pairs.push([root.headers?.[key], value]);
  for (const [key, value] of Object.entries(leaf.withoutHeaders ?? {})) pairs.push([root.withoutHeaders?.[key], value]);
  for (const [key, value] of Object.entries(leaf.queryParams ?? {})) pairs.push([root.queryParams?.[key], value]);
  if (pairs.some(([r, l]) => stringMatchConflict(r, l))) return true;
  if ((root.ignoreUriCase ?? false) !== (leaf.ignoreUriCase ?? false)) return true;
  if (root.port && leaf.port && root.port !== leaf.port) return true;
  if (root.sourceNamespace && leaf.sourceNamespace !== root.sourceNamespace) return true;
  for (const [key, value] of Object.entries(leaf.sourceLabels ?? {})) {
    const rootValue = root.sourceLabels?.[key];
    if (rootValue !== undefined && rootValue !== value) return true;
  }
  const rootGateways = root.gateways ?? [];
  const leafGateways = leaf.gateways ?? [];
  if (rootGateways.length > 0 && leafGateways.length > 0) {
    if (rootGateways.length < leafGateways.length) return true;
    if (leafGateways.some((g) => !rootGateways.includes(g))) return true;
  }
  return false;
}

/** The delegate's string match does not narrow the root's. */
function stringMatchConflict(
  root: VirtualServiceHttpMatchUri | undefined,
  leaf: VirtualServiceHttpMatchUri | undefined,
): boolean {
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
