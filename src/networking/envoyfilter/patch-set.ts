// EnvoyFilters turned into the patches one proxy gets (Istio's convertToEnvoyFilterWrapper and
// MergedEnvoyFilterWrapper): each patch value decoded strictly into the Envoy message of its
// applyTo, relative inserts on kinds that have no order rewritten to ADD, and the patches of every
// filter applying to the proxy listed per applyTo in the filters' order, keeping those whose proxy
// match (version regex, metadata) holds.
import type { Message } from "@bufbuild/protobuf";
import type { EnvoyFilter, EnvoyFilterConfigPatches } from "../../config/types/index.ts";
import { decodePatchValue, patchValueViolations } from "../../config/validation/index.ts";
import type { ProxyNode } from "../../model/index.ts";
import { type Memos, NO_MEMOS, weakTable } from "../../util/index.ts";
import type { ApplyTo, Operation, Patch, PatchContext, PatchError } from "./patch.ts";
import { envoyFilterStatus } from "./status.ts";

interface CompiledFilter {
  patches: Patch[];
  errors: PatchError[];
}

// Relative inserts keep their meaning only where order matters; elsewhere Istio makes them ADD.
const ORDERED_KINDS: ReadonlySet<ApplyTo> = new Set(["HTTP_FILTER", "NETWORK_FILTER", "HTTP_ROUTE", "LISTENER_FILTER"]);
const RELATIVE_INSERTS: ReadonlySet<Operation> = new Set(["INSERT_BEFORE", "INSERT_AFTER", "INSERT_FIRST"]);
const MAX_PROXY_VERSION_LENGTH = 1024;

// EnvoyFilter objects are immutable, so each is compiled once however many proxies and pushes read it.
const COMPILED = weakTable<EnvoyFilter, CompiledFilter>("envoyfilter/compiled");
/** Patch ids, unique in the process (patched results are kept by the ids of the patches applied). */
let nextPatchId = 0;

function filterKey(filter: EnvoyFilter): string {
  return `${filter.metadata.namespace ?? ""}/${filter.metadata.name ?? ""}`;
}

/** The filter's patches and the errors of those that cannot be applied. */
function compileEnvoyFilter(memos: Memos, filter: EnvoyFilter): CompiledFilter {
  const compiled = memos.weak(COMPILED);
  const cached = compiled.get(filter);
  if (cached) return cached;
  const result: CompiledFilter = { patches: [], errors: [] };
  const key = filterKey(filter);
  (filter.spec?.configPatches ?? []).forEach((cp, index) => {
    const applyTo = cp.applyTo && cp.applyTo !== "INVALID" ? cp.applyTo : undefined;
    const fail = (path: string, message: string) => result.errors.push({ filter: key, index, applyTo, path, message });
    const patch = compilePatch(cp, key, index, fail);
    if (patch) result.patches.push(patch);
  });
  compiled.set(filter, result);
  return result;
}

function compilePatch(
  cp: EnvoyFilterConfigPatches,
  filter: string,
  index: number,
  fail: (path: string, message: string) => void,
): Patch | undefined {
  const match = cp.match ?? {};
  const context = match.context ?? "ANY";
  const applyTo = cp.applyTo;
  const declared = cp.patch?.operation;
  if (!applyTo || applyTo === "INVALID") return void fail("applyTo", "missing applyTo");
  if (!declared || declared === "INVALID") return void fail("patch.operation", "missing patch operation");
  // Waypoint proxies get no EnvoyFilter patches yet (configgen applies none to them): WAYPOINT ones are dropped.
  if (context === "WAYPOINT") return undefined;
  const operation = RELATIVE_INSERTS.has(declared) && !ORDERED_KINDS.has(applyTo) ? "ADD" : declared;
  let value: Message | undefined;
  if (operation !== "REMOVE") {
    if (!cp.patch?.value) return void fail("patch.value", "missing patch value for non-remove operation");
    const decoded = decodePatchValue(applyTo, cp.patch.value);
    if (!decoded.message) {
      for (const issue of decoded.issues) fail(issue.path ? `patch.value.${issue.path}` : "patch.value", issue.message);
      return undefined;
    }
    const violations = patchValueViolations(applyTo, operation, decoded.message);
    for (const v of violations) fail(v.path ? `patch.value.${v.path}` : "patch.value", v.message);
    if (violations.length > 0) return undefined;
    value = decoded.message;
  }
  let proxyVersion: RegExp | undefined;
  const version = match.proxy?.proxyVersion ?? "";
  if (version !== "") {
    // Istio fails closed: an overlong pattern never matches.
    if (version.length > MAX_PROXY_VERSION_LENGTH) return undefined;
    try {
      proxyVersion = new RegExp(version);
    } catch (e) {
      return void fail("match.proxy.proxyVersion", `invalid regex for proxy version: ${(e as Error).message}`);
    }
  }
  return { id: nextPatchId++, filter, index, applyTo, operation, match, context, value, proxyVersion };
}

/** Istio's proxyMatch: the version regex against ISTIO_VERSION (none: no match), then every metadata entry. */
function proxyMatches(patch: Patch, proxy: ProxyNode): boolean {
  const wanted = patch.match.proxy;
  if (!wanted) return true;
  if (patch.proxyVersion) {
    const version = proxy.metadata.ISTIO_VERSION ?? "";
    if (version === "" || !patch.proxyVersion.test(version)) return false;
  }
  return Object.entries(wanted.metadata ?? {}).every(([k, v]) => proxy.metadata.raw[k] === v);
}

/** The patches one proxy gets, per applyTo, in the order they apply. */
export class PatchSet {
  private readonly byKind = new Map<ApplyTo, Patch[]>();

  constructor(
    /** The patches of every selected filter that can be applied, in order. */
    patches: readonly Patch[],
    /** Errors of the selected filters' patches that cannot be applied. */
    readonly errors: readonly PatchError[],
    /** Where patching keeps its results (the xDS cache's tables); without it nothing is kept. */
    readonly memos: Memos = NO_MEMOS,
  ) {
    for (const p of patches) {
      const list = this.byKind.get(p.applyTo);
      if (list) list.push(p);
      else this.byKind.set(p.applyTo, [p]);
    }
  }

  of(kind: ApplyTo): readonly Patch[] {
    return this.byKind.get(kind) ?? [];
  }

  has(...kinds: ApplyTo[]): boolean {
    return kinds.some((k) => this.byKind.has(k));
  }

  get empty(): boolean {
    return this.byKind.size === 0;
  }
}

/**
 * The patches of `filters` (already selected for the proxy and in patch order) that apply to it;
 * the errors of those that cannot be applied are recorded in the status.
 */
export function patchSetFor(memos: Memos, filters: readonly EnvoyFilter[], proxy: ProxyNode): PatchSet {
  const patches: Patch[] = [];
  const errors: PatchError[] = [];
  for (const filter of filters) {
    const c = compileEnvoyFilter(memos, filter);
    for (const error of c.errors) envoyFilterStatus.error(error);
    errors.push(...c.errors);
    patches.push(...c.patches.filter((p) => proxyMatches(p, proxy)));
  }
  return new PatchSet(patches, errors, memos);
}

/** Istio's patchContextMatch. */
export function contextMatches(patch: Patch, context: PatchContext): boolean {
  return patch.context === "ANY" || patch.context === context;
}
