// The Kubernetes config source: one list+watch informer per kind of the registry, mirrored into the
// config store through the namespace (discoverySelectors) and revision (istio.io/rev) filters and the
// one validation path. Namespaces are listed first, because the namespace filter needs their labels
// before any namespaced object can be judged; a namespace whose labels change its selection brings
// its objects in or takes them out. Status is written back through the status subresource.
import type { KubeConfig } from "@kubernetes/client-node";
import { type Logger, pino } from "pino";
import { type ConfigObject, KINDS, type KindInfo, kindKey, lookupKind, parseApiVersion } from "../../config/index.ts";
import type { ConfigWriter } from "../types.ts";
import type { BackoffOptions } from "./backoff.ts";
import { KubeClient } from "./client.ts";
import { inRevision, isNamespaceKind, NamespaceFilter } from "./filters.ts";
import { Informer, type InformerHandler, type WatchEventType } from "./informer.ts";
import type { LabelSelector } from "./labels.ts";
import { KindMirror, type MirrorEvent } from "./mirror.ts";
import { resourcePath } from "./paths.ts";

export interface KubeSourceOptions {
  kubeConfig: KubeConfig;
  writer: ConfigWriter;
  /** The source id in the store; default "kubernetes". */
  source?: string;
  /** MeshConfig discoverySelectors; none selects every namespace. Needs the Namespace kind in `kinds`. */
  discoverySelectors?: readonly LabelSelector[];
  /** This control plane's revision (istio.io/rev); "" takes config of every revision. Default "default". */
  revision?: string;
  /** The kinds to watch; default every kind of the registry. */
  kinds?: readonly KindInfo[];
  /** Retry delays after list/watch errors; default 1 s doubling up to 30 s. */
  backoff?: BackoffOptions;
  /** How often to look again for kinds the server does not serve; default 60 s. */
  notInstalledRetryMs?: number;
  /** Objects per page of a list; default 500, as client-go's pager. */
  listPageSize?: number;
  /** Told of each object the source adds to, changes in or removes from the store (KubeEventMetrics.record). */
  onEvent?: (kind: KindInfo, event: MirrorEvent) => void;
  log?: Logger;
}

export class KubeSource {
  readonly source: string;
  private readonly client: KubeClient;
  private readonly revision: string;
  private readonly namespaces: NamespaceFilter;
  private readonly mirrors: KindMirror[] = [];
  private readonly informers: Informer[] = [];

  constructor(options: KubeSourceOptions) {
    this.source = options.source ?? "kubernetes";
    this.client = new KubeClient(options.kubeConfig);
    this.revision = options.revision ?? "default";
    this.namespaces = new NamespaceFilter(options.discoverySelectors ?? []);
    const context = {
      writer: options.writer,
      source: this.source,
      visible: (kind: KindInfo, obj: ConfigObject) =>
        inRevision(kind, obj, this.revision) && this.namespaces.admits(kind, obj),
      onEvent: options.onEvent,
    };
    const informerOptions = {
      backoff: options.backoff ?? { initialMs: 1000, maxMs: 30_000 },
      notInstalledRetryMs: options.notInstalledRetryMs ?? 60_000,
      listPageSize: options.listPageSize ?? 500,
      log: options.log ?? pino({ level: "silent" }),
    };
    for (const kind of options.kinds ?? KINDS) {
      const mirror = new KindMirror(kind, context);
      this.mirrors.push(mirror);
      const handler = isNamespaceKind(kind) ? this.namespaceHandler(mirror) : mirror;
      this.informers.push(new Informer(kind, this.client, handler, informerOptions));
    }
  }

  /**
   * Starts every informer, Namespaces first. Resolves once each kind has been listed (or found
   * not served) once; from then on the store follows the cluster.
   */
  async start(): Promise<void> {
    const namespaceInformers = this.informers.filter((i) => isNamespaceKind(i.kind));
    for (const informer of namespaceInformers) informer.start();
    await Promise.all(namespaceInformers.map((i) => i.synced));
    const others = this.informers.filter((i) => !isNamespaceKind(i.kind));
    for (const informer of others) informer.start();
    await Promise.all(others.map((i) => i.synced));
  }

  stop(): void {
    for (const informer of this.informers) informer.stop();
  }

  /** The resourceVersion each kind's informer has reached, by kind key (for debugging and tests). */
  resourceVersions(): Map<string, string> {
    return new Map(this.informers.map((i) => [kindKey(i.kind.group, i.kind.kind), i.lastResourceVersion]));
  }

  /** New discoverySelectors (a MeshConfig reload): objects of newly selected namespaces come in, others go. */
  setDiscoverySelectors(selectors: readonly LabelSelector[]): void {
    this.namespaces.setSelectors(selectors);
    for (const mirror of this.mirrors) mirror.resync();
  }

  /**
   * Replaces the status of `obj` through its status subresource and returns the object as stored.
   * The object's resourceVersion is a precondition: if the object changed since, this fails with
   * KubeApiError 409 (Conflict) and the caller retries with the newer object.
   *
   * Writes name no field manager: the API server records them under the client's user agent's command
   * (KubeClient's, pilot-discovery by default), as istiod's.
   */
  async writeStatus(obj: ConfigObject, status: unknown): Promise<ConfigObject> {
    return (await this.client.request("PUT", statusPath(obj), { ...obj, status })) as ConfigObject;
  }

  /**
   * Applies a JSON patch (RFC 6902) to the status of `obj` through its status subresource; a failed
   * `test` operation fails it with KubeApiError 422. Recorded under the client's user agent, as writeStatus.
   */
  async patchStatus(obj: ConfigObject, patch: readonly JsonPatchOperation[]): Promise<ConfigObject> {
    return (await this.client.patch(statusPath(obj), patch, "application/json-patch+json")) as ConfigObject;
  }

  /**
   * Server-side applies `patch` to the status of `obj` as `fieldManager`, taking over fields other
   * managers own (force), as Istio's ApplyStatus; returns the object as stored.
   */
  async applyStatus(obj: ConfigObject, patch: unknown, fieldManager: string): Promise<ConfigObject> {
    const path = `${statusPath(obj)}?fieldManager=${encodeURIComponent(fieldManager)}&force=true`;
    return (await this.client.patch(path, patch, "application/apply-patch+yaml")) as ConfigObject;
  }

  /** Creates `obj` (POST) and returns it as stored; an existing one fails with KubeApiError 409. */
  async create(obj: ConfigObject): Promise<ConfigObject> {
    return (await this.client.request("POST", objectPath(obj, false), obj)) as ConfigObject;
  }

  /** Replaces `obj` (PUT); its resourceVersion is a precondition (409 when the object changed since). */
  async update(obj: ConfigObject): Promise<ConfigObject> {
    return (await this.client.request("PUT", objectPath(obj, true), obj)) as ConfigObject;
  }

  /** Deletes `obj` only while it is at its resourceVersion (409 otherwise, 404 when already gone). */
  async delete(obj: ConfigObject): Promise<void> {
    const preconditions = { resourceVersion: obj.metadata.resourceVersion };
    await this.client.request("DELETE", objectPath(obj, true), {
      kind: "DeleteOptions",
      apiVersion: "v1",
      preconditions,
    });
  }

  /** Namespaces feed the namespace filter before their own mirror, then refresh what their selection changed. */
  private namespaceHandler(namespaceMirror: KindMirror): InformerHandler {
    const others = () => this.mirrors.filter((m) => m !== namespaceMirror);
    return {
      replaceAll: (objects) => {
        const labels = new Map(objects.map((ns) => [ns.metadata.name ?? "", ns.metadata.labels ?? {}]));
        const changed = this.namespaces.setAllNamespaces(labels);
        namespaceMirror.replaceAll(objects);
        for (const name of changed) for (const mirror of others()) mirror.resync(name);
      },
      apply: (type: WatchEventType, ns: ConfigObject) => {
        const name = ns.metadata.name ?? "";
        const changed = this.namespaces.setNamespace(name, type === "DELETED" ? undefined : (ns.metadata.labels ?? {}));
        namespaceMirror.apply(type, ns);
        if (changed) for (const mirror of others()) mirror.resync(name);
      },
    };
  }
}

/** One operation of a JSON patch (RFC 6902). */
export interface JsonPatchOperation {
  op: "add" | "remove" | "replace" | "test";
  path: string;
  value?: unknown;
}

function statusPath(obj: ConfigObject): string {
  return `${objectPath(obj, true)}/status`;
}

/** The object's path, or with `named` false its collection's (in its namespace). */
function objectPath(obj: ConfigObject, named: boolean): string {
  const kind = lookupKind(obj.apiVersion, obj.kind);
  if (!kind) throw new Error(`unknown kind ${obj.apiVersion} ${obj.kind}`);
  return resourcePath({
    kind,
    version: parseApiVersion(obj.apiVersion).version,
    namespace: obj.metadata.namespace,
    name: named ? obj.metadata.name : undefined,
  });
}
