// The test API server's storage: objects by kind, one global resourceVersion counter (as etcd's
// revision), and a bounded history of changes so watches can resume from an older resourceVersion.
// A resume from before the retained history fails with 410 Expired, as the real server's does.
import { randomUUID } from "node:crypto";
import type { ConfigObject, KindInfo } from "../../src/config/index.ts";

/** A failure the API server reports as a Status object with this HTTP code and reason. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";

export interface Change {
  resourceVersion: number;
  kind: KindInfo;
  type: ChangeType;
  /** The object after the change; for DELETED, its last state stamped with the deletion's resourceVersion. */
  object: ConfigObject;
  /** The object before the change (MODIFIED, DELETED). */
  previous?: ConfigObject;
}

export interface ObjectName {
  namespace: string;
  name: string;
}

export class ObjectStore {
  private revision = 0;
  /** Changes at or below this resourceVersion are gone from the history. */
  private compactedThrough = 0;
  private readonly history: Change[] = [];
  private readonly objects = new Map<KindInfo, Map<string, ConfigObject>>();
  private readonly subscribers = new Set<(change: Change) => void>();

  constructor(private readonly historyLimit: number) {}

  get resourceVersion(): number {
    return this.revision;
  }

  list(kind: KindInfo, namespace?: string): ConfigObject[] {
    const all = [...(this.objects.get(kind)?.values() ?? [])];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  get(kind: KindInfo, at: ObjectName): ConfigObject {
    const found = this.objects.get(kind)?.get(keyOf(at));
    if (!found) throw notFound(kind, at.name);
    return found;
  }

  create(kind: KindInfo, obj: ConfigObject): ConfigObject {
    const at = nameOf(kind, obj);
    if (!at.name) throw new ApiError(422, "Invalid", `${kind.kind} is invalid: metadata.name: Required value`);
    const byName = this.kindObjects(kind);
    if (byName.has(keyOf(at))) {
      throw new ApiError(409, "AlreadyExists", `${kind.plural}.${kind.group} "${at.name}" already exists`);
    }
    const metadata = { ...obj.metadata, uid: randomUUID(), creationTimestamp: new Date().toISOString() };
    if (kind.namespaced) metadata.namespace = at.namespace;
    else delete metadata.namespace;
    if (kind.family !== "kubernetes") metadata.generation = 1;
    return this.commit(kind, "ADDED", { ...obj, metadata });
  }

  /**
   * Replaces an object. `part` "main" keeps the stored status (the main resource ignores it);
   * "status" keeps everything but the status. A resourceVersion in the new object is a precondition.
   */
  update(kind: KindInfo, obj: ConfigObject, part: "main" | "status"): ConfigObject {
    const current = this.get(kind, nameOf(kind, obj));
    const expected = obj.metadata.resourceVersion;
    if (expected !== undefined && expected !== current.metadata.resourceVersion) {
      throw new ApiError(
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${kind.plural}.${kind.group} "${current.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    if (part === "status") return this.commit(kind, "MODIFIED", withStatus(current, obj.status), current);
    const metadata = {
      ...obj.metadata,
      uid: current.metadata.uid,
      creationTimestamp: current.metadata.creationTimestamp,
      namespace: current.metadata.namespace,
    };
    if (current.metadata.generation !== undefined) {
      const specChanged = JSON.stringify(obj.spec) !== JSON.stringify(current.spec);
      metadata.generation = current.metadata.generation + (specChanged ? 1 : 0);
    }
    return this.commit(kind, "MODIFIED", withStatus({ ...obj, metadata }, current.status), current);
  }

  delete(kind: KindInfo, at: ObjectName): ConfigObject {
    const current = this.get(kind, at);
    return this.commit(kind, "DELETED", current, current);
  }

  /** Every change after `resourceVersion`; 410 Expired if some of them are no longer retained. */
  changesSince(resourceVersion: number): Change[] {
    if (resourceVersion < this.compactedThrough) {
      throw new ApiError(410, "Expired", `too old resource version: ${resourceVersion} (${this.compactedThrough + 1})`);
    }
    return this.history.filter((c) => c.resourceVersion > resourceVersion);
  }

  /** Drops the whole history: a watch from any older resourceVersion now gets 410. */
  compact(): void {
    this.history.length = 0;
    this.compactedThrough = this.revision;
  }

  subscribe(subscriber: (change: Change) => void): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  private kindObjects(kind: KindInfo): Map<string, ConfigObject> {
    let byName = this.objects.get(kind);
    if (!byName) {
      byName = new Map();
      this.objects.set(kind, byName);
    }
    return byName;
  }

  private commit(kind: KindInfo, type: ChangeType, obj: ConfigObject, previous?: ConfigObject): ConfigObject {
    this.revision++;
    const object = structuredClone({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(this.revision) } });
    const key = keyOf(nameOf(kind, object));
    if (type === "DELETED") this.kindObjects(kind).delete(key);
    else this.kindObjects(kind).set(key, object);
    const change: Change = { resourceVersion: this.revision, kind, type, object, previous };
    this.history.push(change);
    if (this.history.length > this.historyLimit) {
      this.compactedThrough = this.history.shift()!.resourceVersion;
    }
    for (const subscriber of this.subscribers) subscriber(change);
    return object;
  }
}

function withStatus(obj: ConfigObject, status: unknown): ConfigObject {
  const { status: _dropped, ...rest } = obj;
  return status === undefined ? rest : { ...rest, status };
}

function nameOf(kind: KindInfo, obj: ConfigObject): ObjectName {
  // Like kubectl, a namespaced object without a namespace goes to "default".
  return { namespace: kind.namespaced ? obj.metadata.namespace || "default" : "", name: obj.metadata.name ?? "" };
}

function keyOf(at: ObjectName): string {
  return `${at.namespace}/${at.name}`;
}

function notFound(kind: KindInfo, name: string): ApiError {
  const resource = kind.group === "" ? kind.plural : `${kind.plural}.${kind.group}`;
  return new ApiError(404, "NotFound", `${resource} "${name}" not found`);
}
