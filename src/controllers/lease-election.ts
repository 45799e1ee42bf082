// Leader election over a coordination.k8s.io/v1 Lease, as client-go's leaderelection runs it for
// istiod: every replica tries to hold the Lease named after a controller (Istio's election ids,
// `istio-namespace-controller-election`, ...); the holder renews it every retry period and runs the
// controller; the others take it over only once they have seen it unrenewed for a whole lease
// duration, timed by their own clock (a skewed clock on the holder cannot cut a lease short). A
// leader that cannot renew within the renew deadline stops its controller before anyone may take
// over, then competes again. Stopping releases the Lease, so a rolling restart hands over at once.
// A prioritized election (istiod's, for its election ids other than the per-revision ones) also
// records the holder's revision in the Lease (the annotation leader.istio.io/holder-key, as istiod's
// LeaseLock keeps its HolderKey), and a replica of the default revision takes a held Lease at once
// from a holder of another revision (`preempts`); the holder sees it taken at its next renewal.
import { type Logger, pino } from "pino";
import { errorMessage, isStatus, type KubeRequests } from "./kube-requests.ts";

export interface LeaseElectionOptions {
  client: KubeRequests;
  namespace: string;
  /** The Lease's name: the election id. */
  name: string;
  /** This replica's identity in the Lease (istiod uses its pod name). */
  identity: string;
  /** The holder key this replica writes (istiod's: its revision); none for a per-revision election. */
  key?: string;
  /** Whether this replica takes the Lease from a live holder whose key is `holderKey` (istiod's KeyComparison). */
  preempts?: (holderKey: string) => boolean;
  /** How long a Lease stays held without renewal; default 30 s, as istiod. */
  leaseDurationMs?: number;
  /** How long a leader keeps trying to renew before it stops leading; default half the lease duration. */
  renewDeadlineMs?: number;
  /** How often to try to acquire or renew; default a quarter of the lease duration. */
  retryPeriodMs?: number;
  /** Runs while this replica leads; `signal` aborts when leadership ends (lost or stopped). */
  run: (signal: AbortSignal) => void;
  log?: Logger;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  metadata: { name: string; namespace: string; resourceVersion?: string; annotations?: Record<string, string> };
  spec?: LeaseSpec;
}

/** Where istiod's LeaseLock keeps the holder's key (its revision). */
export const LEASE_HOLDER_KEY = "leader.istio.io/holder-key";

/** What istiod puts before its revision in the holder key of a Lease it holds in a remote cluster. */
export const REMOTE_HOLDER_PREFIX = "^";

/**
 * istiod's LocationPrioritizedComparison: a replica of `revision` takes the lock from a holder of
 * another revision when its own is the default one (`defaultRevision()`, the revision of the default
 * tag's webhook; "" when there is none), and from a holder of its own revision that holds it from
 * another cluster (key `^<revision>`) when it is not itself electing from another cluster (`remote`).
 */
export function defaultRevisionPreempts(revision: string, defaultRevision: () => string, remote = false) {
  return (holderKey: string): boolean => {
    const holderRemote = holderKey.startsWith(REMOTE_HOLDER_PREFIX);
    const holderRevision = holderRemote ? holderKey.slice(REMOTE_HOLDER_PREFIX.length) : holderKey;
    const current = defaultRevision();
    if (holderRevision !== revision && current !== "" && current === revision) return true;
    return holderRevision === revision && holderRemote && !remote;
  };
}

/** How long stopping waits for the API server to take the release. */
const RELEASE_WAIT_MS = 5000;

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
const microTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 23)}000Z`;

export class LeaseElection {
  readonly #options: LeaseElectionOptions;
  readonly #durationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryMs: number;
  readonly #log: Logger;
  readonly #path: string;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = true;
  /** The Lease as last read or written, and when (by this clock) its holder or renewal last changed. */
  #observed: Lease | undefined;
  #observedAtMs = 0;
  /** While leading: when the Lease was last renewed, and the controller's abort. */
  #renewedAtMs = 0;
  #leading: AbortController | undefined;
  #attempt: Promise<void> = Promise.resolve();

  constructor(options: LeaseElectionOptions) {
    this.#options = options;
    this.#durationMs = options.leaseDurationMs ?? 30_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? this.#durationMs / 2;
    this.#retryMs = options.retryPeriodMs ?? this.#durationMs / 4;
    if (!(this.#renewDeadlineMs < this.#durationMs)) {
      throw new Error(`lease ${options.name}: the renew deadline must be shorter than the lease duration`);
    }
    this.#log = (options.log ?? pino({ level: "silent" })).child({ lease: options.name });
    this.#path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(options.namespace)}/leases`;
  }

  get isLeader(): boolean {
    return this.#leading !== undefined;
  }

  /** Starts competing for the Lease. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule(0);
  }

  /**
   * Stops competing: the controller is stopped and a held Lease released. Waits at most
   * `RELEASE_WAIT_MS` for the API server (an unreleased Lease only makes the next leader wait).
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    // The controller stops at once; the Lease is released after any attempt in flight.
    if (this.#leading) this.#stepDown("stopped");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const giveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, RELEASE_WAIT_MS);
    });
    await Promise.race([this.#release(), giveUp]);
    clearTimeout(timer);
  }

  async #release(): Promise<void> {
    await this.#attempt;
    const lease = this.#observed;
    // Held by this replica as last seen (an attempt in flight may just have taken it).
    if (!lease?.spec || lease.spec.holderIdentity !== this.#options.identity) return;
    // client-go's release: no holder and a one-second duration, so the next replica need not wait.
    const now = Date.now();
    const spec: LeaseSpec = {
      ...lease.spec,
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: microTime(now),
      renewTime: microTime(now),
    };
    try {
      await this.#options.client.request("PUT", `${this.#path}/${lease.metadata.name}`, {
        ...this.#body(lease, ""),
        spec,
      });
    } catch (err) {
      this.#log.warn({ err: errorMessage(err) }, "lease not released");
    }
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#attempt = this.#tryAcquireOrRenew().finally(() => this.#schedule(this.#retryMs));
    }, ms);
    this.#timer.unref();
  }

  async #tryAcquireOrRenew(): Promise<void> {
    let held: boolean;
    try {
      held = await this.#acquireOrRenew();
    } catch (err) {
      held = false;
      // Missing RBAC for Leases, or no such namespace, is worth an operator's attention; the API server
      // briefly away is not.
      const level = isStatus(err, 403) || isStatus(err, 404) ? "warn" : "debug";
      this.#log[level]({ err: errorMessage(err) }, "lease not acquired or renewed");
    }
    if (this.#stopped) return;
    const now = Date.now();
    if (held) {
      this.#renewedAtMs = now;
      if (!this.#leading) this.#lead();
    } else if (
      this.#leading &&
      (this.#observed?.spec?.holderIdentity !== this.#options.identity ||
        now - this.#renewedAtMs > this.#renewDeadlineMs)
    ) {
      // Another replica holds it, or renewing failed for too long: it may be taken over any time now.
      this.#stepDown("lost");
    }
  }

  /** client-go's tryAcquireOrRenew: true when this replica holds the Lease after the attempt. */
  async #acquireOrRenew(): Promise<boolean> {
    const { client, name, identity } = this.#options;
    const now = Date.now();
    let lease: Lease;
    try {
      lease = (await client.request("GET", `${this.#path}/${name}`)) as Lease;
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
      const created = (await client.request("POST", this.#path, {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name, namespace: this.#options.namespace, annotations: this.#annotations(undefined, this.#key) },
        spec: this.#spec(now, undefined),
      })) as Lease;
      this.#observe(created, now);
      return true;
    }
    this.#observe(lease, now);
    const holder = lease.spec?.holderIdentity ?? "";
    const expiresAt = this.#observedAtMs + (lease.spec?.leaseDurationSeconds ?? 0) * 1000;
    const holderKey = lease.metadata.annotations?.[LEASE_HOLDER_KEY] ?? "";
    if (holder !== "" && holder !== identity && now < expiresAt) {
      if (!this.#options.preempts?.(holderKey)) return false;
      this.#log.info({ holder, holderKey, key: this.#key }, "taking the lease from another revision's holder");
    }
    try {
      const updated = (await client.request("PUT", `${this.#path}/${name}`, {
        ...this.#body(lease, this.#key),
        spec: this.#spec(now, lease.spec),
      })) as Lease;
      this.#observe(updated, now);
      return true;
    } catch (err) {
      // Someone else wrote it first: the next attempt reads who.
      if (isStatus(err, 409)) return false;
      throw err;
    }
  }

  #spec(now: number, previous: LeaseSpec | undefined): LeaseSpec {
    const renewing = previous?.holderIdentity === this.#options.identity;
    return {
      holderIdentity: this.#options.identity,
      leaseDurationSeconds: Math.ceil(this.#durationMs / 1000),
      acquireTime: renewing && previous?.acquireTime ? previous.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (previous?.leaseTransitions ?? 0) + (previous && !renewing ? 1 : 0),
    };
  }

  get #key(): string {
    return this.#options.key ?? "";
  }

  /** The Lease's body to write, its holder key `key` ("" for none). */
  #body(lease: Lease, key: string) {
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name: lease.metadata.name,
        namespace: lease.metadata.namespace,
        resourceVersion: lease.metadata.resourceVersion,
        annotations: this.#annotations(lease.metadata.annotations, key),
      },
    };
  }

  /** istiod's ensureHolderKey: the annotation set to a key, or removed without one. */
  #annotations(existing: Record<string, string> | undefined, key: string): Record<string, string> | undefined {
    const { [LEASE_HOLDER_KEY]: _, ...rest } = existing ?? {};
    const annotations = key === "" ? rest : { ...rest, [LEASE_HOLDER_KEY]: key };
    return Object.keys(annotations).length > 0 ? annotations : undefined;
  }

  /** Notes the Lease; its expiry counts from when this replica first saw its current holder and renewal. */
  #observe(lease: Lease, now: number): void {
    const before = this.#observed?.spec;
    const after = lease.spec;
    if (before?.holderIdentity !== after?.holderIdentity || before?.renewTime !== after?.renewTime) {
      this.#observedAtMs = now;
    }
    this.#observed = lease;
  }

  #lead(): void {
    this.#leading = new AbortController();
    this.#log.info({ identity: this.#options.identity }, "leading");
    try {
      this.#options.run(this.#leading.signal);
    } catch (err) {
      this.#log.error({ err: errorMessage(err) }, "leader's controller failed to start");
    }
  }

  #stepDown(why: "lost" | "stopped"): void {
    const leading = this.#leading;
    this.#leading = undefined;
    leading?.abort();
    this.#log.info({ identity: this.#options.identity, why }, "no longer leading");
  }
}
