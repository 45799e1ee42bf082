// One ADS stream that behaves as an Envoy sidecar: CDS first; the EDS names of its clusters next;
// LDS once endpoints arrived; then the route names of its listeners; on delta, the VHDS virtual hosts
// of the route configurations that carry `vhds` (subscribed by route configuration name, as Envoy
// does). Every response is ACKed. After a CDS (LDS) response it asks for EDS (RDS) again, as Envoy
// does when it re-warms the clusters (listeners) a response replaced. SotW or delta; responses are
// read from the wire (see wire.ts). A stream that fails (istiod refuses streams over its request
// rate limit) is opened again on the same connection after Envoy's backoff: jittered, from 500 ms
// doubling to 30 s, reset by the first response.
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { Client, type ClientDuplexStream, credentials } from "@grpc/grpc-js";
import { methodPath } from "../../src/api/grpc-service.ts";
import { discovery, type listener } from "../../src/api/index.ts";
import { routeNames } from "../../src/configgen/index.ts";
import { TypeUrl } from "../../src/xds/index.ts";
import { proxyNode } from "../../test/compare/proxies.ts";
import type { ProxyIdentity } from "./mesh.ts";
import type { Protocol } from "./messages.ts";
import {
  clusterEdsName,
  decodeListener,
  encodedResourceNames,
  parseDeltaResponse,
  parseSotwResponse,
  routeUsesVhds,
  sotwRequest,
  type WireResponse,
} from "./wire.ts";

const SHORT: Record<string, string> = {
  [TypeUrl.Cluster]: "CDS",
  [TypeUrl.Endpoint]: "EDS",
  [TypeUrl.Listener]: "LDS",
  [TypeUrl.Route]: "RDS",
  [TypeUrl.VirtualHost]: "VHDS",
};
export const shortTypeOf = (typeUrl: string) => SHORT[typeUrl] ?? "other";

/** What the stream holds of one type. */
interface TypeState {
  /** Subscribed names (EDS, RDS, VHDS). */
  names: Set<string>;
  /** SotW: `names` encoded, made at the first request after they change. */
  encodedNames: Uint8Array | undefined;
  version: string;
  nonce: string;
  requested: boolean;
  received: boolean;
}

type Request = Uint8Array;

export interface StreamEvents {
  /** Every response, as received (before it is handled). */
  onResponse(stream: SidecarStream, typeUrl: string, bytes: Buffer): void;
  /** CDS, EDS (if any), LDS, RDS (if any) and VHDS (if RDS asks for it) have all been received and ACKed once. */
  onSynced(stream: SidecarStream): void;
  /** The stream failed or the server ended it; it opens again after `retryInMs`. */
  onRetry(stream: SidecarStream, error: Error | undefined, retryInMs: number): void;
}

/** Envoy's ADS retry backoff (Config::GrpcStream): 500 ms base, 30 s cap. */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;

const identity = (bytes: Buffer) => bytes;
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export class SidecarStream {
  readonly #types = new Map<string, TypeState>();
  /** Delta: the EDS name of every cluster held (undefined for non-EDS clusters). */
  readonly #clusters = new Map<string, string | undefined>();
  /** Delta: every listener held. */
  readonly #listeners = new Map<string, listener.Listener>();
  /** Delta: every route configuration held, and whether it carries `vhds`. */
  readonly #routes = new Map<string, boolean>();
  #client: Client | undefined;
  #stream: ClientDuplexStream<Request, Buffer> | undefined;
  #nodeSent = false;
  #closed = false;
  #retryTimer: NodeJS.Timeout | undefined;
  /** The upper bound of the next retry's jittered delay. */
  #nextRetryMs = RETRY_BASE_MS;
  synced = false;

  constructor(
    readonly proxy: ProxyIdentity,
    readonly protocol: Protocol,
    private readonly events: StreamEvents,
  ) {}

  /** The EDS names the proxy subscribes to. */
  get edsNames(): ReadonlySet<string> {
    return this.#state(TypeUrl.Endpoint).names;
  }

  open(address: string): void {
    // A connection of its own, as every Envoy has, with the 1 MiB stream and connection windows
    // istio-agent's xDS proxy opens its connection to istiod with (Node's default is 64 KiB).
    this.#client = new Client(address, credentials.createInsecure(), {
      "grpc.use_local_subchannel_pool": 1,
      "grpc.max_receive_message_length": -1,
      "grpc-node.flow_control_window": 1 << 20,
    });
    this.#openStream();
  }

  #openStream(): void {
    const client = this.#client;
    if (!client || this.#closed) return;
    const method =
      this.protocol === "sotw"
        ? discovery.AggregatedDiscoveryService.method.streamAggregatedResources
        : discovery.AggregatedDiscoveryService.method.deltaAggregatedResources;
    const stream = client.makeBidiStreamRequest(methodPath(method), asBuffer, identity);
    this.#stream = stream;
    let ended = false;
    const end = (error?: Error) => {
      if (ended || this.#closed) return;
      ended = true;
      this.#retry(error);
    };
    stream.on("data", (bytes: Buffer) => {
      this.#nextRetryMs = RETRY_BASE_MS;
      this.#receive(bytes);
    });
    stream.on("error", (err: Error) => end(err));
    stream.on("end", () => end());
    this.#request(TypeUrl.Cluster);
  }

  /** Forgets what the stream held (a new stream starts from nothing) and opens it again after the backoff. */
  #retry(error: Error | undefined): void {
    this.#types.clear();
    this.#clusters.clear();
    this.#listeners.clear();
    this.#routes.clear();
    this.#nodeSent = false;
    const delayMs = Math.floor(Math.random() * this.#nextRetryMs);
    this.#nextRetryMs = Math.min(this.#nextRetryMs * 2, RETRY_MAX_MS);
    this.events.onRetry(this, error, delayMs);
    this.#retryTimer = setTimeout(() => this.#openStream(), delayMs);
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    this.#stream?.end();
    this.#client?.close();
  }

  #state(typeUrl: string): TypeState {
    let state = this.#types.get(typeUrl);
    if (!state) {
      state = { names: new Set(), encodedNames: undefined, version: "", nonce: "", requested: false, received: false };
      this.#types.set(typeUrl, state);
    }
    return state;
  }

  #node(): MessageInitShape<typeof discovery.DiscoveryRequestSchema>["node"] {
    if (this.#nodeSent) return undefined;
    this.#nodeSent = true;
    // What istio-agent sends for a sidecar (as the comparison with istiod's proxies do): the full metadata.
    const { name, namespace, ip, labels } = this.proxy;
    return proxyNode({ name, kind: "sidecar", namespace, ip, labels, serviceAccount: "default" });
  }

  /** SotW: a request (or ACK) with the current names; delta: a request changing the subscription to `names`. */
  #request(typeUrl: string, names?: ReadonlySet<string>): void {
    const state = this.#state(typeUrl);
    const node = this.#node();
    if (this.protocol === "sotw") {
      if (names) {
        state.names = new Set(names);
        state.encodedNames = undefined;
      }
      state.encodedNames ??= encodedResourceNames(state.names);
      this.#write(
        sotwRequest({ node, typeUrl, versionInfo: state.version, responseNonce: state.nonce }, state.encodedNames),
      );
    } else {
      const subscribe = names ? [...names].filter((n) => !state.names.has(n)) : [];
      const unsubscribe = names ? [...state.names].filter((n) => !names.has(n)) : [];
      if (state.requested && subscribe.length === 0 && unsubscribe.length === 0) return;
      if (names) state.names = new Set(names);
      this.#sendDelta({
        node,
        typeUrl,
        resourceNamesSubscribe: subscribe,
        resourceNamesUnsubscribe: unsubscribe,
      });
    }
    state.requested = true;
  }

  #ack(typeUrl: string): void {
    const state = this.#state(typeUrl);
    if (this.protocol === "sotw") this.#request(typeUrl);
    else this.#sendDelta({ typeUrl, responseNonce: state.nonce });
  }

  #sendDelta(init: MessageInitShape<typeof discovery.DeltaDiscoveryRequestSchema>): void {
    this.#write(toBinary(discovery.DeltaDiscoveryRequestSchema, create(discovery.DeltaDiscoveryRequestSchema, init)));
  }

  #write(request: Request): void {
    this.#stream?.write(request);
  }

  #receive(bytes: Buffer): void {
    const res: WireResponse = this.protocol === "sotw" ? parseSotwResponse(bytes) : parseDeltaResponse(bytes);
    this.events.onResponse(this, res.typeUrl, bytes);
    const state = this.#state(res.typeUrl);
    state.version = res.version;
    state.nonce = res.nonce;
    state.received = true;
    switch (res.typeUrl) {
      case TypeUrl.Cluster: {
        const eds = this.#edsNames(res);
        if (eds.size > 0 || this.#state(TypeUrl.Endpoint).requested) this.#request(TypeUrl.Endpoint, eds);
        this.#ack(TypeUrl.Cluster);
        if (eds.size === 0) this.#requestListeners();
        break;
      }
      case TypeUrl.Endpoint:
        this.#ack(TypeUrl.Endpoint);
        this.#requestListeners();
        break;
      case TypeUrl.Listener: {
        const routes = new Set(routeNames(this.#listenersOf(res)));
        if (routes.size > 0 || this.#state(TypeUrl.Route).requested) this.#request(TypeUrl.Route, routes);
        this.#ack(TypeUrl.Listener);
        if (routes.size === 0) this.#markSynced();
        break;
      }
      case TypeUrl.Route: {
        const vhds = this.#vhdsRoutes(res);
        if (vhds.size > 0 || this.#state(TypeUrl.VirtualHost).requested) this.#request(TypeUrl.VirtualHost, vhds);
        this.#ack(TypeUrl.Route);
        if (vhds.size === 0) this.#markSynced();
        break;
      }
      case TypeUrl.VirtualHost:
        this.#ack(TypeUrl.VirtualHost);
        this.#markSynced();
        break;
      default:
        this.#ack(res.typeUrl);
    }
  }

  #requestListeners(): void {
    if (!this.#state(TypeUrl.Listener).requested) this.#request(TypeUrl.Listener);
  }

  #markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    this.events.onSynced(this);
  }

  /** The EDS names of every cluster the proxy holds after this response. */
  #edsNames(res: WireResponse): Set<string> {
    if (this.protocol === "sotw") this.#clusters.clear();
    for (const name of res.removed) this.#clusters.delete(name);
    for (const r of res.resources) {
      const c = clusterEdsName(r.value);
      this.#clusters.set(c.name, c.eds);
    }
    const names = new Set<string>();
    for (const eds of this.#clusters.values()) if (eds !== undefined) names.add(eds);
    return names;
  }

  /**
   * The route configurations with `vhds` the proxy holds after this response: the names it subscribes
   * VHDS to (delta only; SotW never gets `vhds`).
   */
  #vhdsRoutes(res: WireResponse): Set<string> {
    if (this.protocol === "sotw") return new Set();
    for (const name of res.removed) this.#routes.delete(name);
    for (const r of res.resources) this.#routes.set(r.name, routeUsesVhds(r.value));
    const names = new Set<string>();
    for (const [name, vhds] of this.#routes) if (vhds) names.add(name);
    return names;
  }

  /** Every listener the proxy holds after this response. */
  #listenersOf(res: WireResponse): listener.Listener[] {
    if (this.protocol === "sotw") this.#listeners.clear();
    for (const name of res.removed) this.#listeners.delete(name);
    for (const r of res.resources) {
      const l = decodeListener(r.value);
      this.#listeners.set(l.name, l);
    }
    return [...this.#listeners.values()];
  }
}
