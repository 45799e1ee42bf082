// What happened to each patch (Istio's envoyfilter/monitoring.go): `pilot_envoy_filter_status`
// {name, patch, result="applied"} is 1 once a patch applied, 0 while it matched nothing; errors (a
// patch that cannot be decoded or would produce config Envoy rejects) set result="error" and are
// kept for the CLI and logs.
import { Gauge, type Registry } from "prom-client";
import type { ApplyTo, Patch, PatchError } from "./patch.ts";

/** Istio's PatchType label values. */
const PATCH_TYPE: Readonly<Record<ApplyTo, string>> = {
  LISTENER: "listener",
  LISTENER_FILTER: "listenerfilter",
  FILTER_CHAIN: "filterchain",
  NETWORK_FILTER: "networkfilter",
  HTTP_FILTER: "httpfilter",
  ROUTE_CONFIGURATION: "route",
  VIRTUAL_HOST: "vhost",
  HTTP_ROUTE: "route",
  CLUSTER: "cluster",
  EXTENSION_CONFIG: "extensionconfig",
  BOOTSTRAP: "bootstrap",
};

const MAX_ERRORS = 256;

class EnvoyFilterStatus {
  /** filter → patch type → applied at least once. */
  private readonly applied = new Map<string, Map<string, boolean>>();
  private readonly errors = new Map<string, PatchError & { patchType: string }>();

  /** A patch was considered for an object: `applied` when it changed it. */
  record(patch: Patch, applied: boolean): void {
    const types = this.applied.get(patch.filter) ?? new Map<string, boolean>();
    this.applied.set(patch.filter, types);
    const type = PATCH_TYPE[patch.applyTo];
    types.set(type, (types.get(type) ?? false) || applied);
  }

  private readonly listeners = new Set<(error: PatchError) => void>();

  error(error: PatchError): void {
    const key = `${error.filter}#${error.index}#${error.path}#${error.message}`;
    if (this.errors.has(key)) return;
    if (this.errors.size >= MAX_ERRORS) this.errors.delete(this.errors.keys().next().value ?? "");
    this.errors.set(key, { ...error, patchType: error.applyTo ? PATCH_TYPE[error.applyTo] : "" });
    for (const listener of this.listeners) listener(error);
  }

  /** Calls `listener` with each error the first time it is recorded (for logs); returns the unsubscribe. */
  onNewError(listener: (error: PatchError) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Errors recorded so far, oldest first. */
  recordedErrors(): PatchError[] {
    return [...this.errors.values()].map(({ patchType: _t, ...e }) => e);
  }

  collect(gauge: Gauge<"name" | "patch" | "result">): void {
    gauge.reset();
    for (const [name, types] of this.applied) {
      for (const [patch, applied] of types) gauge.set({ name, patch, result: "applied" }, applied ? 1 : 0);
    }
    for (const e of this.errors.values()) gauge.set({ name: e.filter, patch: e.patchType, result: "error" }, 1);
  }

  clear(): void {
    this.applied.clear();
    this.errors.clear();
  }
}

/** One line for a skipped patch: `EnvoyFilter ns/name configPatches[i] skipped at <path>: <why>`. */
export function describePatchError(e: PatchError): string {
  return `EnvoyFilter ${e.filter} configPatches[${e.index}] skipped${e.path ? ` at ${e.path}` : ""}: ${e.message}`;
}

/** The process's EnvoyFilter status; generators record into it. */
export const envoyFilterStatus = new EnvoyFilterStatus();

/** Registers `pilot_envoy_filter_status` on `registry` (once). */
export function registerEnvoyFilterMetrics(registry: Registry): void {
  if (registry.getSingleMetric("pilot_envoy_filter_status")) return;
  new Gauge({
    name: "pilot_envoy_filter_status",
    help: "Status of Envoy filters whether it was applied or errored.",
    labelNames: ["name", "patch", "result"],
    registers: [registry],
    collect() {
      envoyFilterStatus.collect(this);
    },
  });
}
