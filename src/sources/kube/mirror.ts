// One kind's view of the cluster, mirrored into the config store. It keeps every object the
// informer reports (visible or not, so a namespace that becomes selected can be filled in without a
// relist) and what it has written to the store, and writes only the difference: objects hidden by
// the namespace or revision filters are left out, and an object that fails validation is reported
// while its last good version stays in the store.
import { type ConfigObject, type KindInfo, kindKey, type ObjectKey, validateObject } from "../../config/index.ts";
import { deepFreeze } from "../../util/index.ts";
import type { ConfigWriter } from "../types.ts";
import { isNamespaceKind } from "./filters.ts";
import type { InformerHandler, WatchEventType } from "./informer.ts";

/** What a mirror did to one object in the store (Istio's model.Event, as its metrics name it). */
export type MirrorEvent = "add" | "update" | "delete";

export interface MirrorContext {
  writer: ConfigWriter;
  /** The source id the store knows this source by. */
  source: string;
  /** Whether an object passes the namespace and revision filters. */
  visible(kind: KindInfo, obj: ConfigObject): boolean;
  /** Told of each object added to, changed in or removed from the store (pilot_k8s_*_events). */
  onEvent?(kind: KindInfo, event: MirrorEvent): void;
}

export class KindMirror implements InformerHandler {
  readonly kindKey: string;
  /** Every object the server has, by "namespace/name". */
  private readonly seen = new Map<string, ConfigObject>();
  /** What the store holds from this kind, by "namespace/name". */
  private written = new Map<string, ConfigObject>();
  /** Objects with problems reported, by "namespace/name", so they can be cleared. */
  private readonly withProblems = new Set<string>();

  constructor(
    readonly kind: KindInfo,
    private readonly context: MirrorContext,
  ) {
    this.kindKey = kindKey(kind.group, kind.kind);
  }

  replaceAll(objects: ConfigObject[]): void {
    this.seen.clear();
    for (const obj of objects) this.seen.set(keyOf(obj), obj);
    for (const key of this.withProblems) if (!this.seen.has(key)) this.clearProblems(key);
    const desired = new Map<string, ConfigObject>();
    for (const key of this.seen.keys()) {
      const obj = this.desired(key);
      if (obj) desired.set(key, obj);
    }
    // One atomic replacement: deletes missed while disconnected are applied, nothing is added twice.
    this.context.writer.replace(this.context.source, this.kindKey, [...desired.values()]);
    for (const [key, obj] of desired) {
      const had = this.written.get(key);
      if (had !== obj) this.event(had ? "update" : "add");
    }
    for (const key of this.written.keys()) if (!desired.has(key)) this.event("delete");
    this.written = desired;
  }

  apply(type: WatchEventType, obj: ConfigObject): void {
    const key = keyOf(obj);
    if (type === "DELETED") this.seen.delete(key);
    else this.seen.set(key, obj);
    this.sync(key);
  }

  /** Checks again the visibility of every object (in one namespace, or all) after a filter changed. */
  resync(namespace?: string): void {
    for (const key of new Set([...this.seen.keys(), ...this.written.keys()])) {
      if (namespace === undefined || this.namespaceOf(key) === namespace) this.sync(key);
    }
  }

  private namespaceOf(key: string): string {
    const [namespace, name] = key.split("/");
    return isNamespaceKind(this.kind) ? name : namespace;
  }

  /** Brings the store's copy of one object in line with what it should be. */
  private sync(key: string): void {
    const next = this.desired(key);
    const current = this.written.get(key);
    if (next === current) return;
    if (next) {
      this.context.writer.upsert(this.context.source, next);
      this.written.set(key, next);
      this.event(current ? "update" : "add");
    } else if (current) {
      this.context.writer.delete(this.context.source, this.objectKey(current));
      this.written.delete(key);
      this.event("delete");
    }
  }

  private event(event: MirrorEvent): void {
    this.context.onEvent?.(this.kind, event);
  }

  /** What the store should hold for one object: nothing if unseen or hidden, the last good version if invalid. */
  private desired(key: string): ConfigObject | undefined {
    const obj = this.seen.get(key);
    if (!obj || !this.context.visible(this.kind, obj)) {
      this.clearProblems(key);
      return undefined;
    }
    const current = this.written.get(key);
    const version = obj.metadata.resourceVersion;
    // Already validated and written at this resourceVersion (a relist or a resync repeats objects).
    if (current && version !== undefined && current.metadata.resourceVersion === version) return current;
    const result = validateObject(obj);
    if (result.errors.length > 0) {
      const where = `${this.kind.kind} ${key}`;
      this.context.writer.reportProblems(
        this.context.source,
        this.problemScope(key),
        result.errors.map((e) => ({
          source: this.context.source,
          where,
          message: e.path ? `${e.path}: ${e.message}` : e.message,
        })),
      );
      this.withProblems.add(key);
      return current;
    }
    this.clearProblems(key);
    // Objects handed to the store are immutable; these came fresh from JSON, so freezing them is safe.
    return deepFreeze(obj);
  }

  private clearProblems(key: string): void {
    if (!this.withProblems.delete(key)) return;
    this.context.writer.reportProblems(this.context.source, this.problemScope(key), []);
  }

  /** Problems are kept per object: "group/Kind namespace/name". */
  private problemScope(key: string): string {
    return `${this.kindKey} ${key}`;
  }

  private objectKey(obj: ConfigObject): ObjectKey {
    return { kind: this.kindKey, namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" };
  }
}

function keyOf(obj: ConfigObject): string {
  return `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`;
}
