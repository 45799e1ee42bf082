// The push pipeline (Istio's ConfigUpdate → debounce → Push): config store changes become push
// requests, merged by the debouncer; each merged request gets a new immutable push context from
// the injected builder and goes to the xDS server, which pushes every affected proxy. It never reads
// a push's snapshot: it is generic over it, as the server is, and the builder makes the snapshots.
import type { Logger } from "pino";
import type { ObjectKey } from "../../config/index.ts";
import {
  ADDRESS_KIND,
  PUSH_KINDS,
  type PushContext,
  type PushRequest,
  pushRequest,
  type TriggerReason,
} from "../../model/index.ts";
import type { WorkloadServices } from "../../registry/index.ts";
import type { ConfigEvent } from "../../sources/index.ts";
import { type Change, classifyEvents } from "./classify.ts";
import {
  type Clock,
  DEFAULT_DEBOUNCE,
  type DebouncedPush,
  type DebounceOptions,
  Debouncer,
  systemClock,
} from "./debounce.ts";
import type { PipelineMetrics } from "./metrics.ts";

/**
 * Builds the push context for a merged request from the previous one (`request.push` is the
 * previous one too): a full request may rebuild everything, an incremental one only endpoints.
 */
export type PushContextBuilder<Snapshot = unknown> = (
  previous: PushContext<Snapshot>,
  request: PushRequest<Snapshot>,
) => PushContext<Snapshot>;

/** Where pushes go: the xDS server. */
export interface PushTarget<Snapshot = unknown> {
  readonly pushContext: PushContext<Snapshot> | undefined;
  push(req: PushRequest<Snapshot>): void;
  /** Told as soon as a change that will be pushed arrives (before the debounce). */
  changeComing?(): void;
}

/** The config store, as the pipeline reads it. */
export interface ChangeSource {
  onChange(handler: (events: readonly ConfigEvent[]) => void): () => void;
}

export interface PushPipelineOptions<Snapshot = unknown> {
  store: ChangeSource;
  /** The service registry: which services a workload change reaches (none without it). */
  services?: WorkloadServices;
  server: PushTarget<Snapshot>;
  build: PushContextBuilder<Snapshot>;
  /**
   * Whether two push contexts hold the same state (built from the very same inputs). An endpoint
   * (incremental) change whose push context holds what the last one pushed is not pushed: a Pod
   * appearing before its EndpointSlice lists it changes no endpoint (Istio's EndpointIndex answers
   * NoPush for endpoints that did not change).
   */
  sameState?: (previous: PushContext<Snapshot>, next: PushContext<Snapshot>) => boolean;
  debounce?: DebounceOptions;
  /** Kubernetes service hostnames are `<name>.<namespace>.svc.<domainSuffix>`. */
  domainSuffix?: string;
  metrics?: PipelineMetrics;
  /** The number of services in a push context, for pilot_services. */
  countServices?: (push: PushContext<Snapshot>) => number;
  clock?: Clock;
  log?: Logger;
}

export class PushPipeline<Snapshot = unknown> {
  readonly #options: PushPipelineOptions<Snapshot>;
  readonly #clock: Clock;
  readonly #debouncer: Debouncer<Snapshot>;
  #unsubscribe: (() => void) | undefined;

  constructor(options: PushPipelineOptions<Snapshot>) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#debouncer = new Debouncer(options.debounce ?? DEFAULT_DEBOUNCE, (p) => this.#push(p), this.#clock);
  }

  /** Follows the store from now on. The server must already hold its first push context. */
  start(): void {
    if (!this.#options.server.pushContext) throw new Error("push pipeline: the xDS server has no push context yet");
    this.#unsubscribe ??= this.#options.store.onChange((events) => this.#onChange(events));
  }

  /** Stops following the store and drops changes not pushed yet. */
  stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#debouncer.stop();
  }

  /**
   * A full push of everything, for a change outside the store (Istio's GlobalUpdate: the mesh config
   * changed): debounced with the store's changes, built anew, sent to every proxy.
   */
  pushAll(reason: TriggerReason): void {
    if (!this.#unsubscribe) return;
    const previous = this.#options.server.pushContext as PushContext<Snapshot>;
    this.#options.server.changeComing?.();
    this.#debouncer.add(pushRequest({ full: true, push: previous, reasons: [reason] }));
  }

  /**
   * An incremental push of the ambient addresses `names` (Istio's ambient index ConfigUpdate): only
   * ztunnel and waypoints read them, and their WDS answers only these names; the waypoint proxies
   * `waypoints` names (those the addresses were or are bound to) rebuild their clusters, listeners
   * and load assignments.
   */
  pushAddresses(names: ReadonlySet<string>, waypoints: ReadonlySet<string> = new Set()): void {
    const keys = [...names].map((name) => ({ kind: ADDRESS_KIND, namespace: "", name }));
    this.#pushAmbient(keys, names, waypoints);
  }

  /**
   * An incremental push of the ambient policies `names` (`namespace/name`), named as AuthorizationPolicies
   * whatever they were derived from, as Istio's ambient index does: only ztunnel reads them, and its
   * Authorization answers only these names. (The store pushes a changed AuthorizationPolicy in full.)
   */
  pushPolicies(names: ReadonlySet<string>): void {
    const keys = [...names].map((name) => {
      const slash = name.indexOf("/");
      return { kind: PUSH_KINDS.authorizationPolicy, namespace: name.slice(0, slash), name: name.slice(slash + 1) };
    });
    this.#pushAmbient(keys);
  }

  #pushAmbient(
    keys: readonly ObjectKey[],
    addressesUpdated?: ReadonlySet<string>,
    waypointsUpdated?: ReadonlySet<string>,
  ): void {
    if (!this.#unsubscribe || keys.length === 0) return;
    const previous = this.#options.server.pushContext as PushContext<Snapshot>;
    this.#options.server.changeComing?.();
    this.#debouncer.add(
      pushRequest({
        full: false,
        push: previous,
        configsUpdated: keys,
        reasons: ["ambient"],
        addressesUpdated,
        waypointsUpdated,
      }),
    );
  }

  #onChange(events: readonly ConfigEvent[]): void {
    const { services, server, metrics } = this.#options;
    const classified = classifyEvents(events, services, this.#options.domainSuffix ?? "cluster.local");
    for (const type of classified.inbound) metrics?.inboundUpdates.inc({ type });
    const previous = server.pushContext as PushContext<Snapshot>;
    const add = (change: Change | undefined, full: boolean) => {
      // An endpoint change no service selects reaches no proxy.
      if (!change || (!full && change.keys.length === 0)) return;
      const req = pushRequest({ full, push: previous, configsUpdated: change.keys, reasons: change.reasons });
      server.changeComing?.();
      this.#debouncer.add(req, change.events);
    };
    add(classified.full, true);
    add(classified.incremental, false);
  }

  #push({ req, events, startedAt }: DebouncedPush<Snapshot>): void {
    const { server, build, sameState, metrics, log, countServices } = this.#options;
    const previous = server.pushContext as PushContext<Snapshot>;
    const initStart = this.#clock.now();
    let push: PushContext<Snapshot>;
    try {
      push = build(previous, req);
    } catch (err) {
      // The proxies keep the last good config; the next change tries again.
      log?.error({ err: err instanceof Error ? err.message : String(err) }, "push context build failed");
      return;
    }
    // Ambient addresses and policies are not in the push context: their change is pushed whatever the endpoints did.
    if (!req.full && !req.reasons.has("ambient") && previous && sameState?.(previous, push)) {
      log?.debug(
        { events, configs: req.configsUpdated.size },
        "endpoint change left every endpoint as it was: no push",
      );
      return;
    }
    // Istio serves an incremental push from the current push context, so what was reported stays.
    if (!req.full && previous) push.status.carryOver(previous.status);
    metrics?.pushContextInit.observe((this.#clock.now() - initStart) / 1000);
    for (const [reason, count] of req.reasons) metrics?.pushTriggers.inc({ type: reason }, count);
    if (countServices) metrics?.services.set(countServices(push));
    server.push(Object.freeze({ ...req, push }));
    const waited = this.#clock.now() - startedAt;
    metrics?.debounceTime.observe(waited / 1000);
    log?.info(
      {
        version: push.version,
        full: req.full,
        events,
        configs: req.configsUpdated.size,
        reasons: Object.fromEntries(req.reasons),
        waitedMs: Math.round(waited),
      },
      "push debounce stable",
    );
  }
}
