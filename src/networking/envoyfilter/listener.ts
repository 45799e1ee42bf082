// LISTENER, LISTENER_FILTER, FILTER_CHAIN, NETWORK_FILTER and HTTP_FILTER patches (Istio's
// envoyfilter/listener_patch.go): per listener, its own patches (REMOVE, MERGE), then its listener
// filters, then each filter chain (REMOVE, MERGE; ADD appends chains), each chain's network filters
// (list operations, then MERGE per filter) and the HTTP filters inside each HTTP connection manager.
import { clone } from "@bufbuild/protobuf";
import { hcm, listener, packAny, unpackAny } from "../../api/index.ts";
import { HCM_FILTER } from "../listener/hcm.ts";
import { VIRTUAL_INBOUND, VIRTUAL_OUTBOUND } from "../listener/index.ts";
import { type Marks, patchResource } from "./guard.ts";
import { applyListOperation } from "./list-ops.ts";
import { isMergeOperation, listMerge, mergeAnyWithAny, mergeMessage } from "./merge.ts";
import { type ApplyTo, type Patch, type PatchContext, type PatchError, patchError } from "./patch.ts";
import { contextMatches, type PatchSet } from "./patch-set.ts";
import { envoyFilterStatus } from "./status.ts";

const LISTENER_KINDS: readonly ApplyTo[] = [
  "LISTENER",
  "LISTENER_FILTER",
  "FILTER_CHAIN",
  "NETWORK_FILTER",
  "HTTP_FILTER",
];
const VIRTUAL_LISTENERS: ReadonlySet<string> = new Set([VIRTUAL_INBOUND, VIRTUAL_OUTBOUND]);

function listenerMatch(l: listener.Listener, patch: Patch): boolean {
  const match = patch.match.listener;
  if (!match) return true;
  if (match.name && match.name !== l.name) return false;
  // The virtual listeners carry every port in their chains: for what is inside them the port is
  // checked against each chain's destination port instead.
  if (patch.applyTo !== "LISTENER" && VIRTUAL_LISTENERS.has(l.name)) return true;
  if (match.portNumber) {
    const address = l.address?.address;
    if (address?.case !== "socketAddress") return false;
    const port = address.value.portSpecifier;
    if (port.case !== "portValue" || port.value !== match.portNumber) return false;
  }
  return true;
}

function filterChainMatch(l: listener.Listener, fc: listener.FilterChain, patch: Patch): boolean {
  const match = patch.match.listener;
  if (!match) return true;
  const chainMatch = fc.filterChainMatch;
  if (VIRTUAL_LISTENERS.has(l.name) && match.portNumber && chainMatch?.destinationPort !== match.portNumber) {
    return false;
  }
  const want = match.filterChain;
  if (!want) return true;
  if (want.name && want.name !== fc.name) return false;
  if (want.sni && !chainMatch?.serverNames.includes(want.sni)) return false;
  if (want.transportProtocol && chainMatch?.transportProtocol !== want.transportProtocol) return false;
  if (want.applicationProtocols) {
    if (!chainMatch) return false;
    if (!want.applicationProtocols.split(",").every((p) => chainMatch.applicationProtocols.includes(p))) return false;
  }
  if (want.transportSocket && fc.transportSocket?.name !== want.transportSocket) return false;
  if (want.destinationPort && chainMatch?.destinationPort !== want.destinationPort) return false;
  return true;
}

const hasListenerFilterMatch = (patch: Patch) => Boolean(patch.match.listener?.listenerFilter);
const hasNetworkFilterMatch = (patch: Patch) => patch.match.listener?.filterChain?.filter !== undefined;
const hasHttpFilterMatch = (patch: Patch) =>
  hasNetworkFilterMatch(patch) && patch.match.listener?.filterChain?.filter?.subFilter !== undefined;

function networkFilterMatch(filter: listener.Filter, patch: Patch): boolean {
  return !hasNetworkFilterMatch(patch) || patch.match.listener?.filterChain?.filter?.name === filter.name;
}

function httpFilterMatch(filter: hcm.HttpFilter, patch: Patch): boolean {
  return !hasHttpFilterMatch(patch) || patch.match.listener?.filterChain?.filter?.subFilter?.name === filter.name;
}

/** Patches one listener in place; false when a patch removed it. */
function patchListener(context: PatchContext, set: PatchSet, l: listener.Listener, marks: Marks): boolean {
  for (const patch of set.of("LISTENER")) {
    if (patch.operation === "ADD") continue;
    if (!contextMatches(patch, context) || !listenerMatch(l, patch)) {
      marks.mark(patch, false);
      continue;
    }
    marks.mark(patch, true);
    if (patch.operation === "REMOVE") return false;
    if (isMergeOperation(patch.operation)) {
      mergeMessage(listener.ListenerSchema, l, patch.value as listener.Listener, listMerge(patch.operation));
    }
  }
  patchListenerFilters(context, set, l, marks);
  patchFilterChains(context, set, l, marks);
  return true;
}

function patchListenerFilters(context: PatchContext, set: PatchSet, l: listener.Listener, marks: Marks): void {
  for (const patch of set.of("LISTENER_FILTER")) {
    if (!contextMatches(patch, context) || !listenerMatch(l, patch)) {
      marks.mark(patch, false);
      continue;
    }
    const want = patch.match.listener?.listenerFilter;
    const { list, applied } = applyListOperation(
      l.listenerFilters,
      patch.operation,
      hasListenerFilterMatch(patch),
      (f) => f.name === want,
      () => clone(listener.ListenerFilterSchema, patch.value as listener.ListenerFilter),
    );
    l.listenerFilters = list;
    marks.mark(patch, applied);
  }
}

function patchFilterChains(context: PatchContext, set: PatchSet, l: listener.Listener, marks: Marks): void {
  const kept = l.filterChains.filter((fc) => fc.filters.length === 0 || patchFilterChain(context, set, l, fc, marks));
  const fallback = l.defaultFilterChain;
  if (fallback && fallback.filters.length > 0 && !patchFilterChain(context, set, l, fallback, marks)) {
    l.defaultFilterChain = undefined;
  }
  for (const patch of set.of("FILTER_CHAIN")) {
    if (patch.operation !== "ADD") continue;
    const applies = contextMatches(patch, context) && listenerMatch(l, patch);
    if (applies) kept.push(clone(listener.FilterChainSchema, patch.value as listener.FilterChain));
    marks.mark(patch, applies);
  }
  l.filterChains = kept;
}

/** Patches one filter chain in place; false when a patch removed it. */
function patchFilterChain(
  context: PatchContext,
  set: PatchSet,
  l: listener.Listener,
  fc: listener.FilterChain,
  marks: Marks,
): boolean {
  for (const patch of set.of("FILTER_CHAIN")) {
    if (patch.operation === "ADD") continue;
    if (!contextMatches(patch, context) || !listenerMatch(l, patch) || !filterChainMatch(l, fc, patch)) {
      marks.mark(patch, false);
      continue;
    }
    marks.mark(patch, true);
    if (patch.operation === "REMOVE") return false;
    if (isMergeOperation(patch.operation)) mergeFilterChain(fc, patch);
  }
  patchNetworkFilters(context, set, l, fc, marks);
  return true;
}

/**
 * A transport socket of the same name is merged payload into payload (Istio's
 * mergeTransportSocketListener); the rest of the chain merges as a message.
 */
function mergeFilterChain(fc: listener.FilterChain, patch: Patch): void {
  const value = patch.value as listener.FilterChain;
  const socket = value.transportSocket;
  const lists = listMerge(patch.operation);
  if (socket && fc.transportSocket && socket.name === fc.transportSocket.name) {
    const current = fc.transportSocket.configType;
    if (current.case === "typedConfig" && socket.configType.case === "typedConfig") {
      const merged = mergeAnyWithAny(current.value, socket.configType.value, lists);
      if (!merged) {
        envoyFilterStatus.error(typeMismatch(patch, socket.configType.value.typeUrl, current.value.typeUrl));
        return;
      }
      fc.transportSocket.configType = { case: "typedConfig", value: merged };
    }
    return;
  }
  mergeMessage(listener.FilterChainSchema, fc, value, lists);
}

/** The error of a MERGE whose typed_config is not of the type it merges into. */
export function typeMismatch(patch: Patch, patchType: string, existingType: string, path = "patch.value"): PatchError {
  return patchError(patch, path, `cannot merge typed_config ${patchType} into ${existingType}`);
}

function patchNetworkFilters(
  context: PatchContext,
  set: PatchSet,
  l: listener.Listener,
  fc: listener.FilterChain,
  marks: Marks,
): void {
  const matching = set
    .of("NETWORK_FILTER")
    .filter((p) => contextMatches(p, context) && listenerMatch(l, p) && filterChainMatch(l, fc, p));
  for (const patch of matching) {
    if (isMergeOperation(patch.operation)) continue;
    const { list, applied } = applyListOperation(
      fc.filters,
      patch.operation,
      hasNetworkFilterMatch(patch),
      (f) => networkFilterMatch(f, patch),
      () => clone(listener.FilterSchema, patch.value as listener.Filter),
    );
    fc.filters = list;
    marks.mark(patch, applied);
  }
  for (const filter of fc.filters) {
    for (const patch of matching) {
      if (!isMergeOperation(patch.operation)) continue;
      if (!networkFilterMatch(filter, patch)) {
        marks.mark(patch, false);
        continue;
      }
      const value = patch.value as listener.Filter;
      const merged = mergeFilterConfig(filter.configType, value.configType, patch);
      if (!merged) continue;
      if (value.name) filter.name = value.name;
      filter.configType = merged;
      marks.mark(patch, true);
    }
    if (filter.name === HCM_FILTER) patchHttpFilters(context, set, l, fc, filter, marks);
  }
}

type FilterConfig = listener.Filter["configType"] | hcm.HttpFilter["configType"];

/**
 * A filter's config after a MERGE (Istio's patchNetworkFilter/mergeHTTPFilter): only filters with a
 * typed_config are merged; the patch's typed_config is merged into it payload into payload.
 * Undefined when the patch cannot apply.
 */
function mergeFilterConfig<C extends FilterConfig>(current: C, patchConfig: C, patch: Patch): C | undefined {
  if (current.case !== "typedConfig") return undefined;
  if (patchConfig.case !== "typedConfig") return current;
  const merged = mergeAnyWithAny(current.value, patchConfig.value, listMerge(patch.operation));
  if (!merged) {
    envoyFilterStatus.error(typeMismatch(patch, patchConfig.value.typeUrl, current.value.typeUrl));
    return undefined;
  }
  return { case: "typedConfig", value: merged } as C;
}

function patchHttpFilters(
  context: PatchContext,
  set: PatchSet,
  l: listener.Listener,
  fc: listener.FilterChain,
  filter: listener.Filter,
  marks: Marks,
): void {
  const matching = set
    .of("HTTP_FILTER")
    .filter(
      (p) =>
        contextMatches(p, context) &&
        listenerMatch(l, p) &&
        filterChainMatch(l, fc, p) &&
        networkFilterMatch(filter, p),
    );
  if (matching.length === 0 || filter.configType.case !== "typedConfig") return;
  const manager = unpackAny(filter.configType.value, hcm.HttpConnectionManagerSchema);
  if (!manager) return;
  let changed = false;
  for (const patch of matching) {
    if (isMergeOperation(patch.operation)) continue;
    const { list, applied } = applyListOperation(
      manager.httpFilters,
      patch.operation,
      hasHttpFilterMatch(patch),
      (f) => httpFilterMatch(f, patch),
      () => clone(hcm.HttpFilterSchema, patch.value as hcm.HttpFilter),
    );
    manager.httpFilters = list;
    marks.mark(patch, applied);
    changed ||= applied;
  }
  for (const httpFilter of manager.httpFilters) {
    for (const patch of matching) {
      if (!isMergeOperation(patch.operation)) continue;
      if (!httpFilterMatch(httpFilter, patch)) {
        marks.mark(patch, false);
        continue;
      }
      const value = patch.value as hcm.HttpFilter;
      const merged = mergeFilterConfig(httpFilter.configType, value.configType, patch);
      if (!merged) continue;
      if (value.name) httpFilter.name = value.name;
      httpFilter.configType = merged;
      marks.mark(patch, true);
      changed = true;
    }
  }
  if (changed) filter.configType = { case: "typedConfig", value: packAny(hcm.HttpConnectionManagerSchema, manager) };
}

/** Listeners the proxy's LISTENER ADD patches add; a patch for ANY context adds only to outbound and gateways. */
function addedListeners(context: PatchContext, set: PatchSet): listener.Listener[] {
  const added: listener.Listener[] = [];
  for (const patch of set.of("LISTENER")) {
    if (patch.operation !== "ADD") continue;
    if (patch.context === "ANY" && context !== "SIDECAR_OUTBOUND" && context !== "GATEWAY") continue;
    const applies = contextMatches(patch, context);
    envoyFilterStatus.record(patch, applies);
    if (applies) added.push(clone(listener.ListenerSchema, patch.value as listener.Listener));
  }
  return added;
}

/**
 * Istio's ApplyListenerPatches for listeners generated in `context`; with `skipAdds` LISTENER ADD
 * patches are left to another call (the virtual listeners', so that they are added once).
 */
export function applyListenerPatches(
  context: PatchContext,
  set: PatchSet,
  listeners: readonly listener.Listener[],
  skipAdds: boolean,
): listener.Listener[] {
  if (!set.has(...LISTENER_KINDS)) return [...listeners];
  const out: listener.Listener[] = [];
  for (const l of listeners) {
    const patched = patchResource(listener.ListenerSchema, l, set, LISTENER_KINDS, context, (subset, target, marks) =>
      patchListener(context, subset, target, marks) ? target : undefined,
    );
    if (patched && patched.name !== "") out.push(patched);
  }
  if (!skipAdds) out.push(...addedListeners(context, set));
  return out;
}
