// One ADS stream: the proxy behind it, what it watches per type URL, and what was sent, acked and
// rejected (the data behind /debug/syncz, /debug/adsz and istio.io/debug/syncz).
import type { ServerDuplexStream } from "@grpc/grpc-js";
import type { discovery, OutgoingResponse } from "../../api/index.ts";
import type { ProxyNode, PushContext } from "../../model/index.ts";
import { OverlayMap } from "../../util/index.ts";
import type { EncodedResource } from "../encode.ts";
import type { WatchedResource } from "../generator.ts";
import { isWildcardTypeUrl, TypeUrl } from "../types.ts";
import { sharedNameSet } from "./name-sets.ts";

export interface SentInfo {
  version: string;
  nonce: string;
  time: Date;
  resources: number;
  bytes: number;
}

export interface AckInfo {
  version: string;
  nonce: string;
  time: Date;
}

export interface NackInfo extends AckInfo {
  /** google.rpc.Code of the error_detail. */
  code: number;
  message: string;
}

/** Sync state of one type on one connection. */
export interface TypeSyncStatus {
  typeUrl: string;
  wildcard: boolean;
  resourceNames: string[];
  /** SYNCED: the last response was acked; NOT_SENT; STALE: a response awaits its ack; NACKED: the last response was rejected. */
  state: "SYNCED" | "NOT_SENT" | "STALE" | "NACKED";
  sent?: SentInfo;
  acked?: AckInfo;
  /** The last rejection, kept after later ACKs for debugging. */
  lastNack?: NackInfo;
}

export interface ConnectionStatus<Snapshot = unknown> {
  connectionId: string;
  proxy: ProxyNode;
  protocol: "sotw" | "delta";
  peerAddress: string;
  connectedAt: Date;
  /** Identities that authenticated the stream (secure port only). */
  identities: readonly string[];
  /** Version of the push context the connection last worked from. */
  pushVersion: string;
  /** That push context: what the proxy was last sent from (Istio's LastPushContext, which config_dump reads). */
  pushContext: PushContext<Snapshot>;
  types: TypeSyncStatus[];
}

/** Whether a request naming `names` asks for every resource of the type: none named, or "*". */
export function isWildcardRequest(typeUrl: string, names: ReadonlySet<string> | readonly string[]): boolean {
  if (!isWildcardTypeUrl(typeUrl)) return false;
  return "size" in names ? names.size === 0 || names.has("*") : names.length === 0 || names.includes("*");
}

/** The resources a request names, without the wildcard "*". */
export function namedResources(names: Iterable<string>): Set<string> {
  const named = new Set(names);
  named.delete("*");
  return named;
}

/** The per-type state of a connection. Generators see it as a read-only WatchedResource. */
export class Watch implements WatchedResource {
  /**
   * Replaced when the names change, never changed in place, so that what is derived from a set (the
   * EDS generator's index of names by host) holds as long as the set does; shared with every watch
   * naming the same names in the same order.
   */
  #resourceNames: ReadonlySet<string> = new Set();
  get resourceNames(): ReadonlySet<string> {
    return this.#resourceNames;
  }
  set resourceNames(names: ReadonlySet<string>) {
    this.#resourceNames = sharedNameSet(names);
    this.namedBy = undefined;
  }
  /**
   * SotW: the request's list the names were taken from. The request decoder gives one list to every
   * request naming the same names, so an ACK carrying this very list names them without a lookup.
   */
  namedBy?: readonly string[];
  wildcard: boolean;
  sent?: SentInfo;
  acked?: AckInfo;
  lastNack?: NackInfo;
  /**
   * SotW: the version of each resource the proxy was sent (an incremental response updates only its
   * own), to skip pushing an identical state again and to hold back a CDS or LDS response that would
   * delete one. Versions, not the encoded resources: those would keep every proxy's listeners' bytes
   * alive at rest (~15 MiB with 2,000 sidecars). After a complete response the base is the encoded
   * list's versions map, shared by every proxy sent the list.
   */
  sentVersions?: OverlayMap<string>;
  /** Answer the next request even if it looks like a plain ACK (cluster/listener warming). */
  alwaysRespond = false;
  /**
   * Delta: what the proxy holds, name → version. When the proxy holds exactly a generated list, the
   * base is the list's own versions map, shared with every connection holding the same list, and a
   * change to one resource (an endpoint update) costs one entry over it instead of a copy of the map.
   */
  readonly #known = new OverlayMap<string>();

  constructor(
    readonly typeUrl: string,
    names: Iterable<string>,
    readonly delta = false,
  ) {
    const requested = new Set(names);
    this.wildcard = isWildcardRequest(typeUrl, requested);
    this.resourceNames = namedResources(requested);
  }

  /** The version of `name` the proxy holds, if it holds it. */
  knownVersion(name: string): string | undefined {
    return this.#known.get(name);
  }

  /** The names the proxy holds. */
  knownNames(): IterableIterator<string> {
    return this.#known.keys();
  }

  /** What the proxy holds: the shared base itself while nothing changed over it. */
  get known(): ReadonlyMap<string, string> {
    return this.#known.unchanged ? this.#known.base : this.#known;
  }

  /** Records that the proxy holds (or, with no version, no longer holds) a resource. */
  setKnown(name: string, version: string | undefined): void {
    this.#known.set(name, version);
  }

  /**
   * Records a delta response: `changed` now held, `removed` dropped. When the proxy then holds
   * exactly the generated list (`listVersions`), the list's map becomes the base, shared.
   */
  recordDelta(
    changed: readonly EncodedResource[],
    removed: readonly string[],
    listVersions: ReadonlyMap<string, string>,
  ): void {
    if (changed.length === 0 && removed.length === 0) return;
    if (this.#willHoldExactly(listVersions, changed, removed)) {
      this.#known.reset(listVersions);
      return;
    }
    for (const r of changed) this.#known.set(r.name, r.version);
    for (const name of removed) this.#known.set(name, undefined);
  }

  /** Whether what the proxy holds, once `changed` is added and `removed` dropped, is exactly `list`. */
  #willHoldExactly(
    list: ReadonlyMap<string, string>,
    changed: readonly EncodedResource[],
    removed: readonly string[],
  ): boolean {
    // The proxy will hold at least what it holds less what is removed: more than the list, not it
    // (an endpoint change sends one assignment to a proxy holding 1,000).
    if (this.#known.size - removed.length > list.size) return false;
    // A first response (the proxy holds nothing yet): no maps of a sync's worth of names.
    if (this.#known.size === 0 && removed.length === 0) {
      return changed.length === list.size && changed.every((r) => list.get(r.name) === r.version);
    }
    const dropped = new Set(removed);
    for (const name of this.knownNames()) if (!list.has(name) && !dropped.has(name)) return false;
    const sent = new Map(changed.map((r) => [r.name, r.version]));
    for (const [name, version] of list) {
      if (dropped.has(name) || (sent.get(name) ?? this.knownVersion(name)) !== version) return false;
    }
    return true;
  }

  status(): TypeSyncStatus {
    let state: TypeSyncStatus["state"] = "NOT_SENT";
    if (this.sent) {
      if (this.lastNack?.nonce === this.sent.nonce) state = "NACKED";
      else if (this.acked?.nonce === this.sent.nonce) state = "SYNCED";
      else state = "STALE";
    }
    return {
      typeUrl: this.typeUrl,
      wildcard: this.wildcard,
      resourceNames: [...this.resourceNames].sort(),
      state,
      sent: this.sent,
      acked: this.acked,
      lastNack: this.lastNack,
    };
  }
}

/** Istio pushes in this order so clusters (and their endpoints) exist before listeners and routes use them. */
const PUSH_ORDER: readonly string[] = [
  TypeUrl.Cluster,
  TypeUrl.Endpoint,
  TypeUrl.Listener,
  TypeUrl.Route,
  TypeUrl.VirtualHost,
  TypeUrl.Secret,
  TypeUrl.Address,
  TypeUrl.Workload,
  TypeUrl.WorkloadAuthorization,
];

/** An ADS stream (SotW or delta) whose responses are assembled from already-encoded resources. */
export type AdsStream = ServerDuplexStream<
  discovery.DiscoveryRequest | discovery.DeltaDiscoveryRequest,
  OutgoingResponse
>;

/** One ADS stream; `Snapshot` is what the server's push contexts hold, which the server never reads. */
export class Connection<Snapshot = unknown> {
  readonly watches = new Map<string, Watch>();
  readonly connectedAt = new Date();
  #nonce = 0;
  #closed = false;
  readonly #onClose = new Set<() => void>();

  constructor(
    readonly id: string,
    readonly proxy: ProxyNode,
    readonly protocol: "sotw" | "delta",
    readonly peerAddress: string,
    readonly identities: readonly string[],
    /** The push context this connection last worked from (Istio's LastPushContext). */
    public pushContext: PushContext<Snapshot>,
    private readonly stream: AdsStream,
  ) {
    // A cancelled stream is destroyed and its pending writes never call back: closing resolves them.
    stream.once("close", () => this.close());
  }

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const f of this.#onClose) f();
    this.#onClose.clear();
  }

  /** Ends the stream with OK (shutdown) and closes the connection. */
  end(): void {
    if (!this.#closed) this.stream.end();
    this.close();
  }

  /** A nonce unique on this connection. */
  nextNonce(): string {
    this.#nonce++;
    return `${this.id}-${this.#nonce}`;
  }

  /** Watches in Istio's push order. */
  orderedWatches(): Watch[] {
    // Picked in PUSH_ORDER, the others after in the order they came: every push of every proxy asks,
    // and sorting allocated a scratch copy each time.
    const ordered: Watch[] = [];
    for (const type of PUSH_ORDER) {
      const w = this.watches.get(type);
      if (w) ordered.push(w);
    }
    if (ordered.length < this.watches.size) {
      for (const w of this.watches.values()) if (!PUSH_ORDER.includes(w.typeUrl)) ordered.push(w);
    }
    return ordered;
  }

  /**
   * Writes a response and resolves true once the transport has taken its bytes (the write callback,
   * which HTTP/2 flow control holds back while the proxy does not read), so a caller holding a
   * response slot bounds the bytes queued in this process. Resolves false when the connection closes
   * first: grpc-js never calls back a write on a cancelled stream. Rejects on a write error.
   */
  send(bytes: OutgoingResponse): Promise<boolean> {
    if (this.#closed || this.stream.destroyed) return Promise.resolve(false);
    return new Promise((resolve, reject) => {
      const closed = () => resolve(false);
      this.#onClose.add(closed);
      this.stream.write(bytes, (err: Error | null | undefined) => {
        this.#onClose.delete(closed);
        if (err) reject(err);
        else resolve(true);
      });
    });
  }

  status(): ConnectionStatus<Snapshot> {
    return {
      connectionId: this.id,
      proxy: this.proxy,
      protocol: this.protocol,
      peerAddress: this.peerAddress,
      connectedAt: this.connectedAt,
      identities: this.identities,
      pushVersion: this.pushContext.version,
      pushContext: this.pushContext,
      types: this.orderedWatches().map((w) => w.status()),
    };
  }
}
