// istiod's WorkloadEntry auto-registration (pilot/pkg/autoregistration), run by every replica for the
// proxies connected to it. A proxy whose node metadata names AUTO_REGISTER_GROUP (in its NAMESPACE) gets
// the WorkloadEntry `<group>-<first IP, ':' as '-'>[-<NETWORK>]` made from the WorkloadGroup's template:
// address the proxy's first IP, labels template < group metadata < the proxy's LABELS (istio-locality
// dropped), network NETWORK, locality the node's; annotations istio.io/autoRegistrationGroup (and the
// group metadata's), the WorkloadGroup as controlling owner. istio.io/workloadController (this replica)
// and istio.io/connectedAt mark it connected; an entry that exists already is taken over. When the last
// stream of the proxy ends, connectedAt gives way to istio.io/disconnectedAt, and once the grace period
// (PILOT_WORKLOAD_ENTRY_GRACE_PERIOD, 10 s) passed without a reconnect the entry is deleted. A group
// that does not exist refuses the stream with FailedPrecondition, as istiod does. The health istio-agent
// reports on the stream becomes the entry's Healthy condition (PILOT_ENABLE_WORKLOAD_ENTRY_HEALTHCHECKS),
// written while this replica controls the entry, unless a later probe is written already; as istiod,
// whether or not the entry is annotated proxy.istio.io/health-checks-enabled (the registry heeds the
// condition only then).
//
// A proxy whose metadata names WORKLOAD_ENTRY instead (istiod's second path, for entries written by
// hand) is bound to that existing entry of its NAMESPACE, which must exist (else the stream is refused)
// and be annotated proxy.istio.io/health-checks-enabled (else the proxy is left alone, its reports
// dropped): the identity check applies, the same connectedAt / disconnectedAt marks and reports are
// written, and once the grace period passed without a reconnect its Healthy condition is removed, since
// no one can vouch for it any more; the entry itself stays.
//
// Reads are the store's (the cluster source's copy), writes a create, or an update or delete at the
// read resourceVersion (the status through its subresource), recorded as istiod's under pilot-discovery
// (the client's user agent names the field manager); a conflict, or an object the store has not seen yet, is tried again.
import { status } from "@grpc/grpc-js";
import { type Logger, pino } from "pino";
import { type ConfigObject, kindKey } from "../config/index.ts";
import { parseSpiffeId } from "../security/authn/index.ts";
import type { ConfigStore } from "../sources/index.ts";
import type { ConnectionHooks, ConnectionInfo, HealthReport } from "../xds/index.ts";
import { XdsError } from "../xds/index.ts";
import { errorMessage, isStatus } from "./kube-requests.ts";
import { WorkQueue } from "./work-queue.ts";
import {
  HEALTHY,
  healthCondition,
  type IstioCondition,
  storedHealth,
  withCondition,
  withoutCondition,
} from "./workload-health.ts";

/** Where WorkloadEntries are written: the Kubernetes source the store reads them from (KubeSource). */
export interface WorkloadEntryTarget {
  readonly source: string;
  create(obj: ConfigObject): Promise<ConfigObject>;
  update(obj: ConfigObject): Promise<ConfigObject>;
  delete(obj: ConfigObject): Promise<void>;
  writeStatus(obj: ConfigObject, status: unknown): Promise<ConfigObject>;
}

export interface WorkloadAutoRegistrationOptions {
  store: Pick<ConfigStore, "get" | "list">;
  target: WorkloadEntryTarget;
  /** This replica in istio.io/workloadController: POD_NAME, as istiod. */
  instanceId: string;
  /** PILOT_WORKLOAD_ENTRY_GRACE_PERIOD; default 10 s. */
  gracePeriodMs?: number;
  /**
   * The xDS server's longest connection (--keepaliveMaxServerConnectionAge; none: forever): an entry
   * still marked connected one and a half times that long after it connected was left by a replica
   * that stopped without marking it, and the periodic sweep deletes it, as istiod's.
   */
  maxConnectionAgeMs?: number;
  /**
   * ISTIO_WORKLOAD_ENTRY_VALIDATE_IDENTITY (default true): only a proxy whose verified identity is of
   * the entry's namespace and service account registers or takes it over.
   */
  validateIdentity?: boolean;
  /**
   * PILOT_ENABLE_WORKLOAD_ENTRY_HEALTHCHECKS (default true): health reports become the entry's Healthy
   * condition, and a proxy naming WORKLOAD_ENTRY is bound to that entry.
   */
  healthChecks?: boolean;
  /** PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION (default true): proxies naming AUTO_REGISTER_GROUP get an entry. */
  autoRegistration?: boolean;
  log?: Logger;
}

const ANNOTATION_GROUP = "istio.io/autoRegistrationGroup";
const ANNOTATION_CONTROLLER = "istio.io/workloadController";
const ANNOTATION_CONNECTED_AT = "istio.io/connectedAt";
const ANNOTATION_DISCONNECTED_AT = "istio.io/disconnectedAt";
const ANNOTATION_HEALTH_CHECKS = "proxy.istio.io/health-checks-enabled";
const LOCALITY_LABEL = "istio-locality";
const TUNNEL_LABEL = "networking.istio.io/tunnel";
const WORKLOAD_ENTRY = kindKey("networking.istio.io", "WorkloadEntry");
const WORKLOAD_GROUP = kindKey("networking.istio.io", "WorkloadGroup");
const API_VERSION = "networking.istio.io/v1";
/** Tries of a write whose read was stale, 5 ms doubling between them, as istiod's queue. */
const MAX_ATTEMPTS = 5;
const retryDelayMs = (retry: number) => 5 * 2 ** retry;

interface WorkloadGroupSpec {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  template?: Record<string, unknown> & { labels?: Record<string, string> };
  probe?: unknown;
}

/** Why a write is tried again: the store's copy is behind the API server. */
class Stale extends Error {}

/** The entry a stream is bound to (istiod's proxy.SetWorkloadEntry). */
interface Binding {
  namespace: string;
  name: string;
  /** Auto-registered (AUTO_REGISTER_GROUP), else an existing entry named by WORKLOAD_ENTRY. */
  autoCreated: boolean;
}

/** The latest health report of an entry's proxy, waiting to be written. */
interface HealthUpdate {
  condition: IstioCondition;
  /** When it came, and when its stream connected (ms). */
  at: number;
  connectedAt: number;
}

export class WorkloadAutoRegistration implements ConnectionHooks {
  readonly #options: WorkloadAutoRegistrationOptions;
  readonly #log: Logger;
  readonly #graceMs: number;
  /** The streams of each registered entry ("ns/name"): an entry is let go when its last ends. */
  readonly #streams = new Map<string, Set<string>>();
  /** The entry of each stream bound to one, by stream id. */
  readonly #bindings = new Map<string, Binding>();
  /** Work on one entry runs in order: a disconnect never overtakes its connect. */
  readonly #chains = new Map<string, Promise<void>>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #sweep: NodeJS.Timeout | undefined;
  /** By entry: a newer report takes the place of one not written yet. */
  readonly #health = new Map<string, HealthUpdate>();
  readonly #healthQueue: WorkQueue;
  /** The update the queue's last reconcile tried, which a last failure drops. */
  #healthTried: HealthUpdate | undefined;

  constructor(options: WorkloadAutoRegistrationOptions) {
    this.#options = options;
    this.#log = options.log ?? pino({ level: "silent" });
    this.#graceMs = options.gracePeriodMs ?? 10_000;
    this.#healthQueue = new WorkQueue({
      reconcile: (key) => this.#writeHealth(key),
      retryDelayMs,
      maxAttempts: MAX_ATTEMPTS,
      onFailure: (key, err, last) => {
        if (!last) return;
        if (this.#health.get(key) === this.#healthTried) this.#health.delete(key);
        this.#log.warn({ entry: key, err: err && errorMessage(err) }, "updating WorkloadEntry health failed");
      },
    });
  }

  /**
   * istiod's OnConnect: an auto-registering proxy's entry is made or taken over; a proxy naming an
   * existing entry becomes its controller if the entry is health-checked. A throw refuses the stream.
   */
  async connected(conn: ConnectionInfo): Promise<void> {
    const at = this.#bindingOf(conn);
    if (!at) return;
    const key = `${at.namespace}/${at.name}`;
    const streams = this.#streams.get(key) ?? new Set<string>();
    streams.add(conn.id);
    this.#streams.set(key, streams);
    this.#bindings.set(conn.id, at);
    try {
      await this.#serial(key, () =>
        this.#retrying(() =>
          at.autoCreated ? this.#register(at.namespace, at.name, conn) : this.#becomeController(at, conn),
        ),
      );
    } catch (err) {
      this.#forget(key, conn.id);
      this.#bindings.delete(conn.id);
      const what = at.autoCreated ? "WorkloadEntry auto-registration failed" : "binding a WorkloadEntry failed";
      this.#log.error({ entry: key, err: errorMessage(err) }, what);
      throw err instanceof XdsError ? err : new XdsError(status.UNKNOWN, errorMessage(err));
    }
  }

  /** istiod's OnDisconnect: the entry marked disconnected when its last stream ends, cleaned up after the grace period. */
  disconnected(conn: ConnectionInfo): void {
    const at = this.#bindings.get(conn.id);
    if (!at) return;
    this.#bindings.delete(conn.id);
    const key = `${at.namespace}/${at.name}`;
    // Another stream of the proxy still holds the entry.
    if (!this.#forget(key, conn.id)) return;
    const disconnectedAt = new Date();
    this.#serial(key, async () => {
      const marked = await this.#retrying(() => this.#markDisconnected(at.namespace, at.name, conn, disconnectedAt));
      if (!marked) return;
      const what = at.autoCreated ? "auto-registered" : "health-checked";
      this.#log.info({ entry: key }, `${what} WorkloadEntry marked disconnected`);
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        this.#serial(key, () => this.#retrying(() => this.#cleanup(at.namespace, at.name))).catch((err: unknown) =>
          this.#log.warn({ entry: key, err: errorMessage(err) }, "cleaning up a WorkloadEntry failed"),
        );
      }, this.#graceMs);
      this.#timers.add(timer);
    }).catch((err: unknown) =>
      this.#log.warn({ entry: key, err: errorMessage(err) }, "marking a WorkloadEntry disconnected failed"),
    );
  }

  /**
   * istiod's QueueWorkloadEntryHealth: the report becomes the Healthy condition of the entry the
   * stream is bound to; a stream bound to none (not registering, or naming an entry that is not
   * health-checked) is not heard. The condition stays when the proxy disconnects, until the clean-up
   * after the grace period (which deletes an auto-registered entry, and the condition of another).
   */
  healthReported(conn: ConnectionInfo, report: HealthReport): void {
    if (!(this.#options.healthChecks ?? true)) return;
    const at = this.#bindings.get(conn.id);
    if (!at) {
      this.#log.error({ proxy: conn.proxy.id }, "unable to derive WorkloadEntry for health update");
      return;
    }
    const now = new Date();
    const key = `${at.namespace}/${at.name}`;
    const update = {
      condition: healthCondition(report, now),
      at: now.getTime(),
      connectedAt: conn.connectedAt.getTime(),
    };
    this.#health.set(key, update);
    this.#healthQueue.add(key);
  }

  /**
   * Starts the periodic sweep (every ten grace periods, as istiod's): auto-registered entries left
   * behind by a replica that stopped before cleaning up — disconnected longer than the grace period,
   * or connected longer than the maximum connection age — are deleted.
   */
  start(): void {
    const sweep = setInterval(() => this.sweep(), 10 * this.#graceMs);
    sweep.unref();
    this.#sweep = sweep;
  }

  /** One sweep; what it cleans up is logged. */
  sweep(): void {
    for (const stored of this.#options.store.list(WORKLOAD_ENTRY)) {
      if (stored.source !== this.#options.target.source || !this.#leftBehind(stored.object)) continue;
      const { namespace = "", name = "" } = stored.object.metadata;
      const key = `${namespace}/${name}`;
      this.#serial(key, async () => {
        // Connected again meanwhile: the entry is a stream's once more.
        if (this.#streams.has(key)) return;
        const current = this.#get(WORKLOAD_ENTRY, namespace, name);
        if (!current || !this.#leftBehind(current)) return;
        await this.#cleanupEntry(current, "left behind");
      }).catch((err: unknown) =>
        this.#log.warn({ entry: key, err: errorMessage(err) }, "cleaning up a WorkloadEntry failed"),
      );
    }
  }

  /** Drops the pending clean-ups, health updates and the sweep (the entries keep their disconnectedAt). */
  stop(): void {
    this.#healthQueue.stop();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    clearInterval(this.#sweep);
  }

  /**
   * Istio's shouldCleanupEntry: an auto-registered entry, or a health-checked one with a Healthy
   * condition, whose proxy is gone past the grace period (or connected longer than connections last).
   */
  #leftBehind(entry: ConfigObject): boolean {
    const annotations = entry.metadata.annotations ?? {};
    if (!hasCleanup(entry)) return false;
    const connectedAt = parseTime(annotations[ANNOTATION_CONNECTED_AT]);
    if (annotations[ANNOTATION_CONNECTED_AT]) {
      const maxAge = this.#options.maxConnectionAgeMs;
      return connectedAt !== undefined && maxAge !== undefined && Date.now() - connectedAt > maxAge * 1.5;
    }
    if (!annotations[ANNOTATION_DISCONNECTED_AT]) return false;
    const disconnectedAt = parseTime(annotations[ANNOTATION_DISCONNECTED_AT]);
    return disconnectedAt === undefined || Date.now() - disconnectedAt >= this.#graceMs;
  }

  /** Removes the stream; true when it was the entry's last. */
  #forget(key: string, id: string): boolean {
    const streams = this.#streams.get(key);
    if (!streams?.delete(id)) return false;
    if (streams.size > 0) return false;
    this.#streams.delete(key);
    return true;
  }

  #serial<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#chains.get(key) ?? Promise.resolve();
    const result = previous.then(work);
    const done = result.then(
      () => undefined,
      () => undefined,
    );
    this.#chains.set(key, done);
    void done.then(() => {
      if (this.#chains.get(key) === done) this.#chains.delete(key);
    });
    return result;
  }

  async #retrying<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (err) {
        const stale = err instanceof Stale || isStatus(err, 409);
        if (!stale || attempt === MAX_ATTEMPTS) throw err;
        await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt - 1)));
      }
    }
  }

  #get(kind: string, namespace: string, name: string): ConfigObject | undefined {
    const stored = this.#options.store.get({ kind, namespace, name });
    return stored?.source === this.#options.target.source ? stored.object : undefined;
  }

  /**
   * Istio's ensureProxyCanControlEntry: the proxy proved an identity (the TLS port) of the entry's
   * namespace and, when the entry names one, service account; else the stream is refused.
   */
  #checkIdentity(conn: ConnectionInfo, entry: ConfigObject): void {
    if (!(this.#options.validateIdentity ?? true)) return;
    const identity = (conn.proxy.verifiedIdentities ?? []).map(parseSpiffeId).find((id) => id !== undefined);
    const refuse = (message: string) => new XdsError(status.PERMISSION_DENIED, message);
    if (!identity) throw refuse("registration of WorkloadEntry requires a verified identity");
    const namespace = entry.metadata.namespace ?? "";
    if (identity.namespace !== namespace)
      throw refuse(`registration of WorkloadEntry namespace mismatch: "${identity.namespace}" vs "${namespace}"`);
    const serviceAccount = (entry.spec as { serviceAccount?: string } | undefined)?.serviceAccount ?? "";
    if (serviceAccount !== "" && identity.serviceAccount !== serviceAccount)
      throw refuse(
        `registration of WorkloadEntry service account mismatch: "${identity.serviceAccount}" vs "${serviceAccount}"`,
      );
  }

  /**
   * The entry `conn` is bound to, if any (istiod's OnConnect): an auto-registering proxy's, else, with
   * health checks on, the existing entry its WORKLOAD_ENTRY names if health-checked (after the identity
   * check); a named entry that does not exist refuses the stream.
   */
  #bindingOf(conn: ConnectionInfo): Binding | undefined {
    const { metadata } = conn.proxy;
    if ((this.#options.autoRegistration ?? true) && metadata.AUTO_REGISTER_GROUP) {
      const at = autoRegisteredName(conn, this.#log);
      return at && { ...at, autoCreated: true };
    }
    if (!(this.#options.healthChecks ?? true) || !metadata.WORKLOAD_ENTRY) return undefined;
    const namespace = metadata.NAMESPACE ?? "";
    const entry = this.#get(WORKLOAD_ENTRY, namespace, metadata.WORKLOAD_ENTRY);
    if (!entry) {
      // As istiod: a plain error, so the stream ends with Unknown.
      throw new XdsError(
        status.UNKNOWN,
        "proxy metadata indicates that it must correspond to an existing WorkloadEntry, however WorkloadEntry " +
          `${namespace}/${metadata.WORKLOAD_ENTRY} is not found`,
      );
    }
    if (!isHealthCheckEligible(entry)) return undefined;
    this.#checkIdentity(conn, entry);
    return { namespace, name: metadata.WORKLOAD_ENTRY, autoCreated: false };
  }

  /** istiod's becomeControllerOf: the existing entry marked connected to this replica. */
  async #becomeController(at: Binding, conn: ConnectionInfo): Promise<void> {
    const entry = this.#get(WORKLOAD_ENTRY, at.namespace, at.name);
    if (!entry) throw new Error(`failed updating WorkloadEntry ${at.namespace}/${at.name}: WorkloadEntry not found`);
    if (await this.#markConnected(entry, conn)) {
      this.#log.info({ entry: `${at.namespace}/${at.name}` }, "health-checked WorkloadEntry marked connected");
    }
  }

  /**
   * istiod's changeWorkloadEntryStateToConnected: connectedAt and this replica written unless a later
   * disconnect or connect is written already; true when written.
   */
  async #markConnected(entry: ConfigObject, conn: ConnectionInfo): Promise<boolean> {
    const { instanceId } = this.#options;
    const annotations = entry.metadata.annotations ?? {};
    const disconnectedAt = parseTime(annotations[ANNOTATION_DISCONNECTED_AT]);
    const connectedAt = parseTime(annotations[ANNOTATION_CONNECTED_AT]);
    const at = conn.connectedAt.getTime();
    // A disconnect after this connect was written already, or the proxy went to another replica since.
    if (disconnectedAt !== undefined && at < disconnectedAt) return false;
    if (connectedAt !== undefined && at < connectedAt) return false;
    if (annotations[ANNOTATION_CONTROLLER] === instanceId && connectedAt !== undefined && at <= connectedAt)
      return false;
    await this.#options.target.update(withConnected(entry, instanceId, conn.connectedAt));
    return true;
  }

  async #register(namespace: string, name: string, conn: ConnectionInfo): Promise<void> {
    const { target, instanceId } = this.#options;
    const existing = this.#get(WORKLOAD_ENTRY, namespace, name);
    if (existing) {
      this.#checkIdentity(conn, existing);
      if (await this.#markConnected(existing, conn)) {
        this.#log.info({ entry: `${namespace}/${name}` }, "auto-registered WorkloadEntry marked connected");
      }
      return;
    }
    const group = this.#get(WORKLOAD_GROUP, namespace, conn.proxy.metadata.AUTO_REGISTER_GROUP ?? "");
    if (!group) {
      throw new XdsError(
        status.FAILED_PRECONDITION,
        `auto-registration WorkloadEntry of ${conn.proxy.id} failed: cannot find WorkloadGroup ${namespace}/${conn.proxy.metadata.AUTO_REGISTER_GROUP}`,
      );
    }
    const entry = entryFromGroup(name, conn, group);
    this.#checkIdentity(conn, entry);
    try {
      await target.create(withConnected(entry, instanceId, conn.connectedAt));
    } catch (err) {
      // Made meanwhile (another replica, or the store had not seen it): taken over on the next try.
      if (isStatus(err, 409)) throw new Stale("the WorkloadEntry exists");
      throw err;
    }
    this.#log.info({ entry: `${namespace}/${name}` }, "auto-registered WorkloadEntry");
  }

  /** Writes disconnectedAt if the entry is still this stream's; true when written. */
  async #markDisconnected(namespace: string, name: string, conn: ConnectionInfo, at: Date): Promise<boolean> {
    const entry = this.#get(WORKLOAD_ENTRY, namespace, name);
    if (!entry) throw new Stale("the WorkloadEntry is not in the store");
    const annotations = entry.metadata.annotations ?? {};
    const connectedAt = parseTime(annotations[ANNOTATION_CONNECTED_AT]);
    // Reconnected since (here or to another replica): the newer stream owns it.
    if (connectedAt !== undefined && connectedAt > conn.connectedAt.getTime()) return false;
    if (annotations[ANNOTATION_CONTROLLER] !== this.#options.instanceId) return false;
    if (connectedAt !== undefined && at.getTime() < connectedAt) return false;
    const next: Record<string, string> = { ...annotations, [ANNOTATION_DISCONNECTED_AT]: formatTime(at) };
    delete next[ANNOTATION_CONNECTED_AT];
    await this.#options.target.update({ ...entry, metadata: { ...entry.metadata, annotations: next } });
    return true;
  }

  /**
   * istiod's UpdateHealth: writes the entry's pending condition unless another replica controls it or a
   * later probe is written; false to try again.
   */
  async #writeHealth(key: string): Promise<boolean> {
    const update = this.#health.get(key);
    if (!update) return true;
    this.#healthTried = update;
    const [namespace = "", name = ""] = key.split("/");
    const entry = this.#get(WORKLOAD_ENTRY, namespace, name);
    // Created by this stream's connect, which the store may not have seen yet.
    if (!entry) return false;
    const annotations = entry.metadata.annotations ?? {};
    if (annotations[ANNOTATION_CONTROLLER] !== this.#options.instanceId) {
      // Another replica's connect came later: the proxy reports there (istiod drops it). Else the store
      // has not seen this stream's takeover yet.
      const connectedAt = parseTime(annotations[ANNOTATION_CONNECTED_AT]);
      if (connectedAt === undefined || connectedAt <= update.connectedAt) return false;
      return this.#healthDone(key, update);
    }
    const stored = parseTime(storedHealth(entry.status)?.lastProbeTime);
    if (stored !== undefined && stored > update.at) return this.#healthDone(key, update);
    try {
      await this.#options.target.writeStatus(entry, withCondition(entry.status, update.condition));
    } catch (err) {
      if (isStatus(err, 404)) return this.#healthDone(key, update);
      if (isStatus(err, 409)) return false;
      throw err;
    }
    this.#log.debug({ entry: key, condition: update.condition }, "updated WorkloadEntry health");
    return this.#healthDone(key, update);
  }

  /** Forgets `update` unless a newer report came meanwhile; the key is done. */
  #healthDone(key: string, update: HealthUpdate): true {
    if (this.#health.get(key) === update) this.#health.delete(key);
    return true;
  }

  /**
   * After the grace period: an entry whose proxy did not come back is cleaned up (istiod's
   * shouldCleanupEntry, then cleanupEntry).
   */
  async #cleanup(namespace: string, name: string): Promise<void> {
    const entry = this.#get(WORKLOAD_ENTRY, namespace, name);
    if (!entry) return;
    if (!this.#leftBehind(entry)) {
      if (entry.metadata.annotations?.[ANNOTATION_CONNECTED_AT]) {
        this.#log.info({ entry: `${namespace}/${name}` }, "WorkloadEntry reconnected within the grace period: kept");
      }
      return;
    }
    await this.#cleanupEntry(entry, "disconnected");
  }

  /**
   * istiod's cleanupEntry: an auto-registered entry is deleted; a health-checked one loses its Healthy
   * condition (written through the status subresource at the read resourceVersion).
   */
  async #cleanupEntry(entry: ConfigObject, why: string): Promise<void> {
    if (!hasCleanup(entry)) return;
    const key = `${entry.metadata.namespace}/${entry.metadata.name}`;
    const { target } = this.#options;
    const autoRegistered = isAutoRegistered(entry);
    try {
      if (autoRegistered) await target.delete(entry);
      else await target.writeStatus(entry, withoutCondition(entry.status, HEALTHY));
    } catch (err) {
      if (isStatus(err, 404)) return;
      throw err;
    }
    const what = autoRegistered
      ? "auto-registered WorkloadEntry"
      : "health-checked WorkloadEntry: Healthy condition removed";
    this.#log.info({ entry: key, why }, `cleaned up ${what}`);
  }
}

/** Auto-registered: annotated with its WorkloadGroup. */
function isAutoRegistered(entry: ConfigObject): boolean {
  return Boolean(entry.metadata.annotations?.[ANNOTATION_GROUP]);
}

/** What a clean-up would change: an auto-registered entry (deleted), or a health-checked one's Healthy condition. */
function hasCleanup(entry: ConfigObject): boolean {
  return isAutoRegistered(entry) || (isHealthChecked(entry) && storedHealth(entry.status) !== undefined);
}

/** Health-checked (istiod's isHealthCheckedWorkloadEntry): controlled by a replica, not auto-registered. */
function isHealthChecked(entry: ConfigObject): boolean {
  return Boolean(entry.metadata.annotations?.[ANNOTATION_CONTROLLER]) && !isAutoRegistered(entry);
}

/** istiod's IsEligibleForHealthStatusUpdates: the health-checks annotation is there, whatever its value. */
function isHealthCheckEligible(entry: ConfigObject): boolean {
  return Object.hasOwn(entry.metadata.annotations ?? {}, ANNOTATION_HEALTH_CHECKS);
}

/** The entry an auto-registering proxy gets: istiod's autoregisteredWorkloadEntryName. */
function autoRegisteredName(conn: ConnectionInfo, log: Logger): { namespace: string; name: string } | undefined {
  const { metadata, ipAddresses, id } = conn.proxy;
  const group = metadata.AUTO_REGISTER_GROUP;
  if (!group) return undefined;
  const namespace = metadata.NAMESPACE ?? "";
  if (namespace === "") {
    log.error({ proxy: id }, "auto-registration failed: missing namespace");
    return undefined;
  }
  const parts = [group, (ipAddresses[0] ?? "").replaceAll(":", "-")];
  if (metadata.NETWORK) parts.push(metadata.NETWORK);
  const name = parts.join("-");
  // Kubernetes names are at most 253 characters: istiod keeps the end.
  return { namespace, name: name.length > 253 ? name.slice(name.length - 253) : name };
}

/** istiod's workloadEntryFromGroup. */
function entryFromGroup(name: string, conn: ConnectionInfo, group: ConfigObject): ConfigObject {
  const { proxy } = conn;
  const groupSpec = (group.spec ?? {}) as WorkloadGroupSpec;
  const spec: Record<string, unknown> = structuredClone(groupSpec.template ?? {});
  spec.address = proxy.ipAddresses[0];
  let labels = groupSpec.template?.labels;
  if (groupSpec.metadata?.labels) labels = { ...labels, ...groupSpec.metadata.labels };
  if (proxy.metadata.LABELS) {
    labels = { ...labels, ...proxy.metadata.LABELS };
    // A locality label value holds '/', which labels refuse; the entry's locality says it.
    delete labels[LOCALITY_LABEL];
  }
  if (proxy.metadata.ENABLE_HBONE) {
    labels = { ...labels };
    labels[TUNNEL_LABEL] ??= "http";
  }
  if (labels) spec.labels = labels;
  const annotations: Record<string, string> = { [ANNOTATION_GROUP]: group.metadata.name ?? "" };
  Object.assign(annotations, groupSpec.metadata?.annotations);
  if (proxy.metadata.NETWORK) spec.network = proxy.metadata.NETWORK;
  const locality = localityString(proxy.locality);
  if (locality) spec.locality = locality;
  if ((proxy.metadata.PROXY_CONFIG as { readinessProbe?: unknown } | undefined)?.readinessProbe) {
    annotations[ANNOTATION_HEALTH_CHECKS] = "true";
  }
  return {
    apiVersion: API_VERSION,
    kind: "WorkloadEntry",
    metadata: {
      name,
      namespace: group.metadata.namespace,
      ...(labels ? { labels } : {}),
      annotations,
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: "WorkloadGroup",
          name: group.metadata.name,
          uid: group.metadata.uid,
          controller: true,
        },
      ],
    },
    spec,
  };
}

function withConnected(entry: ConfigObject, instanceId: string, at: Date): ConfigObject {
  const annotations: Record<string, string> = {
    ...entry.metadata.annotations,
    [ANNOTATION_CONTROLLER]: instanceId,
    [ANNOTATION_CONNECTED_AT]: formatTime(at),
  };
  delete annotations[ANNOTATION_DISCONNECTED_AT];
  return { ...entry, metadata: { ...entry.metadata, annotations } };
}

/** Go's util.LocalityToString: region[/zone[/subzone]]. */
function localityString(l: { region: string; zone: string; subZone: string }): string {
  if (l.zone === "") return l.region;
  return l.subZone === "" ? `${l.region}/${l.zone}` : `${l.region}/${l.zone}/${l.subZone}`;
}

/** Go's RFC3339Nano in UTC: the fraction without trailing zeros. */
function formatTime(at: Date): string {
  return at.toISOString().replace(/\.?0*Z$/, "Z");
}

/** Milliseconds of an RFC3339 time of any precision; undefined when absent or unreadable. */
function parseTime(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value.replace(/(\.\d{3})\d+/, "$1"));
  return Number.isNaN(ms) ? undefined : ms;
}
