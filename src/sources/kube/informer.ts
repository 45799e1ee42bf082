// The list+watch loop for one kind, written on client-node's Watch rather than its ListWatch
// informer: ListWatch does not ask for bookmarks, stops for good on the first list or watch error
// (no backoff, no retry), and turns a relist into per-object deletes and adds rather than one
// atomic replacement. Here: LIST, in pages of 500 as client-go's pager → replace everything; WATCH
// from the list's resourceVersion with bookmarks; every event and bookmark advances the resourceVersion, so a dropped watch resumes
// where it stopped; 410 Expired → relist; errors → retry after an exponential backoff with jitter;
// a kind the server does not serve (404 at every version) is "not installed" and checked again later.
// Objects are kept without the fields nothing reads (strip.ts) as each page or event arrives, so a
// list of 10,000 Pods never holds them whole.
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "pino";
import { type ConfigObject, type KindInfo, kindKey } from "../../config/index.ts";
import { Backoff, type BackoffOptions } from "./backoff.ts";
import { KubeApiError, type KubeClient } from "./client.ts";
import { groupVersion, resourcePath } from "./paths.ts";
import { stripUnusedFields } from "./strip.ts";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

/** Where an informer delivers what it learns. */
export interface InformerHandler {
  /** The complete set of objects after a (re)list; empty when the kind stopped being served. */
  replaceAll(objects: ConfigObject[]): void;
  apply(type: WatchEventType, object: ConfigObject): void;
}

export interface InformerOptions {
  backoff: BackoffOptions;
  /** How long to wait before looking again for a kind the server does not serve. */
  notInstalledRetryMs: number;
  /** Objects per page of a list. */
  listPageSize: number;
  /** Only this namespace's objects (a namespaced kind); default every namespace. */
  namespace?: string;
  /** Only the objects this field selector matches ("metadata.name=istio"); default all. */
  fieldSelector?: string;
  log: Logger;
}

interface ListResponse {
  apiVersion?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: ConfigObject[];
}

/**
 * `obj`, fresh from JSON and owned by the informer, with its type set in place: a copy (let alone a
 * spread followed by fields, util/copy-with.ts) would be made only to be copied again by the strip.
 */
function withType(obj: ConfigObject, apiVersion: string, kind: string): ConfigObject {
  obj.apiVersion = apiVersion;
  obj.kind = kind;
  return obj;
}

/** Ends a watch early: the resourceVersion expired, or the server sent another ERROR event. */
class WatchStatusError extends Error {
  constructor(
    readonly code: number | undefined,
    message: string,
  ) {
    super(message);
  }
}

export class Informer {
  /** The resourceVersion to resume from; "" means the next step is a full list. */
  private resourceVersion = "";
  private servedVersion: string;
  private installed: boolean | undefined;
  private readonly stopping = new AbortController();
  private openWatch: { abort(): void } | undefined;
  private readonly backoff: Backoff;
  private markSynced: () => void = () => {};
  /** Settles once the kind has been listed, or found not installed, for the first time. */
  readonly synced = new Promise<void>((resolve) => {
    this.markSynced = resolve;
  });

  constructor(
    readonly kind: KindInfo,
    private readonly client: KubeClient,
    private readonly handler: InformerHandler,
    private readonly options: InformerOptions,
  ) {
    this.servedVersion = kind.preferredVersion;
    this.backoff = new Backoff(options.backoff);
  }

  /** The resourceVersion the informer has reached (after the last event or bookmark). */
  get lastResourceVersion(): string {
    return this.resourceVersion;
  }

  start(): void {
    void this.run();
  }

  stop(): void {
    this.stopping.abort();
    this.openWatch?.abort();
  }

  private get stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (this.resourceVersion === "" && !(await this.list())) {
          await this.sleep(this.options.notInstalledRetryMs);
          continue;
        }
        await this.watch();
      } catch (err) {
        if (this.stopped) return;
        if (err instanceof WatchStatusError && err.code === 410) {
          // Expired: the history we would resume from is gone, so relist straight away.
          this.resourceVersion = "";
          continue;
        }
        if (err instanceof KubeApiError && (err.code === 404 || err.code === 410)) this.resourceVersion = "";
        const delay = this.backoff.next();
        this.options.log.warn(
          { kind: this.kindName, err: String(err), retryInMs: Math.round(delay) },
          "list/watch failed",
        );
        await this.sleep(delay);
      }
    }
  }

  private get kindName(): string {
    return kindKey(this.kind.group, this.kind.kind);
  }

  /** Lists the kind at the first version the server serves; false if it serves none. */
  private async list(): Promise<boolean> {
    for (const version of [this.servedVersion, ...this.kind.versions.filter((v) => v !== this.servedVersion)]) {
      let listed: { objects: ConfigObject[]; resourceVersion: string };
      try {
        listed = await this.listPages(version);
      } catch (err) {
        if (err instanceof KubeApiError && err.code === 404) continue;
        throw err;
      }
      this.servedVersion = version;
      this.installed = true;
      this.handler.replaceAll(listed.objects);
      this.resourceVersion = listed.resourceVersion;
      this.backoff.reset();
      this.markSynced();
      return true;
    }
    if (this.installed !== false) {
      this.options.log.info({ kind: this.kindName }, "kind not served by the API server; will look again later");
      // It was served before (its CRD was removed): its objects are gone with it.
      if (this.installed) this.handler.replaceAll([]);
      this.installed = false;
    }
    this.markSynced();
    return false;
  }

  /**
   * Every object of the kind at `version`, page by page (one consistent snapshot: the pages share the
   * first one's resourceVersion), each kept stripped. A continue token that expired (410) fails the
   * list, and the informer lists again from the start after its backoff.
   */
  private async listPages(version: string): Promise<{ objects: ConfigObject[]; resourceVersion: string }> {
    const objects: ConfigObject[] = [];
    let next: string | undefined;
    let resourceVersion = "";
    do {
      const query = new URLSearchParams({
        limit: String(this.options.listPageSize),
        ...(next ? { continue: next } : {}),
        ...this.selection(),
      });
      const page = (await this.client.request(
        "GET",
        `${this.path(version)}?${query}`,
        undefined,
        this.stopping.signal,
      )) as ListResponse;
      // Lists of built-in kinds leave apiVersion and kind off their items. Each item is fresh from
      // JSON and ours: its type is written into it (as a spread would place it), not into a copy.
      const apiVersion = page.apiVersion ?? groupVersion(this.kind.group, version);
      for (const item of page.items ?? []) objects.push(stripUnusedFields(withType(item, apiVersion, this.kind.kind)));
      resourceVersion ||= page.metadata?.resourceVersion ?? "";
      next = page.metadata?.continue || undefined;
    } while (next);
    return { objects, resourceVersion };
  }

  /** One watch from the current resourceVersion until the server or the client ends it. */
  private async watch(): Promise<void> {
    let failure: WatchStatusError | undefined;
    const apiVersion = groupVersion(this.kind.group, this.servedVersion);
    const params = {
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      // Like client-go: a random 5-10 minutes, so watches of many clients do not end together.
      timeoutSeconds: Math.floor(300 + Math.random() * 300),
      ...this.selection(),
    };
    const watch = await this.client.watch(this.path(this.servedVersion), params, (type, object) => {
      if (failure) return;
      if (type === "ERROR") {
        const status = object as { code?: number; message?: string };
        failure = new WatchStatusError(status.code, status.message ?? "watch ERROR event");
        return;
      }
      const resourceVersion = (object.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
      if (type === "ADDED" || type === "MODIFIED" || type === "DELETED") {
        this.handler.apply(type, stripUnusedFields(withType(object as ConfigObject, apiVersion, this.kind.kind)));
      }
      // Events and bookmarks alike move the resume point forward.
      if (resourceVersion) this.resourceVersion = resourceVersion;
      this.backoff.reset();
    });
    this.openWatch = watch;
    if (this.stopped) watch.abort();
    try {
      await watch.ended;
    } finally {
      this.openWatch = undefined;
    }
    if (failure) throw failure;
  }

  /** Where the kind's objects are listed and watched: every namespace, or the one of the options. */
  private path(version: string): string {
    return resourcePath({ kind: this.kind, version, namespace: this.options.namespace });
  }

  /** The field selector of the options, as a query parameter. */
  private selection(): Record<string, string> {
    return this.options.fieldSelector ? { fieldSelector: this.options.fieldSelector } : {};
  }

  /** Waits `ms`, or less if the informer is stopped meanwhile. */
  private async sleep(ms: number): Promise<void> {
    try {
      await delay(ms, undefined, { signal: this.stopping.signal });
    } catch {
      // Aborted by stop(): the loop sees `stopped` and ends.
    }
  }
}
