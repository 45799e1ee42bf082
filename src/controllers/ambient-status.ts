// Ambient mode's status writer (Istio's ambient statusqueue, run with AMBIENT_ENABLE_STATUS by the
// holder of the istio-status-leader Lease): each writer's conditions (ambient's StatusReporters) go to
// the status of their object by a server-side apply of `status.conditions` under the writer's own
// field manager, so that writers (and others) keep each their own conditions. An object is written
// only when one of the writer's conditions differs from the object's (its status, reason, message or
// observedGeneration), or when one it must remove is there: an apply that leaves it out removes it.
// On taking the Lease every object reported is looked at again; while leading, each change. An object
// not (yet) seen in the cluster is not written (Istio tries, and fails).
import { type Logger, pino } from "pino";
import type { Condition, StatusReport, StatusReporter, StatusTarget } from "../ambient/index.ts";
import { type ConfigObject, type ObjectKey, objectKeyOf } from "../config/index.ts";
import type { Unregister } from "../krt/index.ts";
import { errorMessage } from "./kube-requests.ts";
import { WorkQueue } from "./work-queue.ts";

/** Where the conditions are read from and written to (the store and its Kubernetes source). */
export interface AmbientStatusTarget {
  /** The object as last seen, undefined when not there (or not the cluster's: a file's has no status to write). */
  get(target: StatusTarget): ConfigObject | undefined;
  /** Server-side applies `patch` to the object's status subresource as `fieldManager`, forcing conflicts. */
  applyStatus(target: StatusTarget, patch: unknown, fieldManager: string): Promise<unknown>;
}

/**
 * The target of a store fed by a Kubernetes source (`source`): an object is the cluster's when the
 * store holds it from that source.
 */
export function storeStatusTarget(
  store: { get(key: ObjectKey): { source: string; object: ConfigObject } | undefined },
  source: { source: string; applyStatus(obj: ConfigObject, patch: unknown, fieldManager: string): Promise<unknown> },
): AmbientStatusTarget {
  const objectOf = (t: StatusTarget): ConfigObject => ({
    apiVersion: t.apiVersion,
    kind: t.kind,
    metadata: { name: t.name, namespace: t.namespace },
  });
  return {
    get: (t) => {
      const stored = store.get(objectKeyOf(objectOf(t)));
      return stored?.source === source.source ? stored.object : undefined;
    },
    applyStatus: (t, patch, fieldManager) => source.applyStatus(objectOf(t), patch, fieldManager),
  };
}

export interface AmbientStatusOptions {
  reporters: readonly StatusReporter[];
  target: AmbientStatusTarget;
  log?: Logger;
}

/** Istio's attempts of one change (its queue's WithMaxAttempts). */
const MAX_ATTEMPTS = 5;

export class AmbientStatusWriter {
  readonly #options: AmbientStatusOptions;
  readonly #log: Logger;
  readonly #queue: WorkQueue;
  #unregister: Unregister[] = [];

  constructor(options: AmbientStatusOptions) {
    this.#options = options;
    this.#log = options.log ?? pino({ level: "silent" });
    this.#queue = new WorkQueue({
      reconcile: (item) => this.#reconcile(item),
      // client-go's default controller rate limiter: 5 ms doubling, at most 1000 s.
      retryDelayMs: (retry) => Math.min(5 * 2 ** retry, 1_000_000),
      maxAttempts: MAX_ATTEMPTS,
      onFailure: (item, err, last) =>
        this.#log.warn({ item, err: err === undefined ? undefined : errorMessage(err), last }, "status not written"),
    });
  }

  /** Looks at every object reported, then at each change. */
  start(): void {
    this.#options.reporters.forEach((reporter, index) => {
      const off = reporter.reports.registerBatch((events) => {
        for (const e of events) {
          const report = e.new ?? e.old;
          if (report) this.#queue.add(`${index}\n${report.key}`);
        }
      }, true);
      this.#unregister.push(off);
    });
  }

  stop(): void {
    for (const off of this.#unregister.splice(0)) off();
    this.#queue.stop();
  }

  /** Resolves once every queued write is done or given up (for tests). */
  settled(): Promise<void> {
    return this.#queue.settled();
  }

  async #reconcile(item: string): Promise<boolean> {
    const separator = item.indexOf("\n");
    const reporter = this.#options.reporters[Number(item.slice(0, separator))];
    const report = reporter?.reports.get(item.slice(separator + 1));
    // Gone since: nothing to write (what it wrote stays, as Istio leaves it).
    if (!reporter || !report) return true;
    const { target } = this.#options;
    // Not (or no longer) an object of the cluster: no status to write it to.
    const object = target.get(report.target);
    if (!object) return true;
    const patch = conditionsPatch(report, currentConditions(object), new Date());
    if (!patch) return true;
    await target.applyStatus(report.target, patch, reporter.fieldManager);
    this.#log.debug({ object: report.target, fieldManager: reporter.fieldManager }, "ambient status written");
    return true;
  }
}

/** The conditions of an object's `status.conditions` by type (Kubernetes' and Istio's alike). */
export function currentConditions(object: ConfigObject | undefined): Map<string, Condition> {
  const conditions = (object as { status?: { conditions?: unknown } } | undefined)?.status?.conditions;
  const byType = new Map<string, Condition>();
  if (!Array.isArray(conditions)) return byType;
  for (const c of conditions as Record<string, unknown>[]) {
    if (typeof c?.type !== "string") continue;
    byType.set(c.type, {
      status: c.status === "True",
      reason: typeof c.reason === "string" ? c.reason : "",
      message: typeof c.message === "string" ? c.message : "",
      // Istio's conditions carry it as a string (int64 in JSON), Kubernetes' as a number.
      observedGeneration: Number(c.observedGeneration ?? 0) || 0,
    });
  }
  return byType;
}

function sameCondition(a: Condition, b: Condition): boolean {
  return (
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.observedGeneration === b.observedGeneration
  );
}

/**
 * The apply that makes the object's conditions the report's (Istio's translateToPatch), undefined
 * when they already are: each condition it sets, with `now` as its transition time (every write, as
 * Istio's), and none of those it removes. Written as istiod's JSON (an IstioCondition by jsonpb: empty
 * fields left out, observedGeneration a string), also on a Kubernetes Service.
 */
export function conditionsPatch(
  report: StatusReport,
  current: ReadonlyMap<string, Condition>,
  now: Date,
): Record<string, unknown> | undefined {
  let changed = false;
  const conditions: Record<string, unknown>[] = [];
  for (const [type, wanted] of Object.entries(report.conditions)) {
    const existing = current.get(type);
    if (!wanted) {
      if (existing) changed = true;
      continue;
    }
    if (!existing || !sameCondition(existing, wanted)) changed = true;
    conditions.push({
      type,
      status: wanted.status ? "True" : "False",
      lastTransitionTime: protoTimestamp(now),
      ...(wanted.reason ? { reason: wanted.reason } : {}),
      ...(wanted.message ? { message: wanted.message } : {}),
      ...(wanted.observedGeneration ? { observedGeneration: String(wanted.observedGeneration) } : {}),
    });
  }
  if (!changed) return undefined;
  return {
    kind: report.target.kind,
    apiVersion: report.target.apiVersion,
    metadata: { name: report.target.name, creationTimestamp: null },
    status: { conditions },
  };
}

/** A time as protobuf's JSON writes a Timestamp: RFC 3339 in UTC, its fraction only when not zero. */
function protoTimestamp(time: Date): string {
  return time.toISOString().replace(".000Z", "Z");
}
