// The ADS gRPC server (Istio's DiscoveryServer, pilot/pkg/xds/ads.go): accepts SotW and delta
// streams on the plaintext and TLS ports, reads the proxy from the first request, and pushes
// every connection through a bounded queue when a new push context arrives. It never builds
// Envoy config: the generators do.
import { create, toBinary } from "@bufbuild/protobuf";
import {
  experimental,
  type Metadata,
  Server,
  type ServerCredentials,
  ServerCredentials as ServerCredentialsImpl,
  type ServerDuplexStream,
  type ServiceDefinition,
  status,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { type Logger, pino } from "pino";
import type { OutgoingResponse } from "../../api/index.ts";
import {
  type CallSurface,
  core,
  discovery,
  type ExtraService,
  grpcServiceDefinition,
  registry,
} from "../../api/index.ts";
import type { PushContext, PushRequest } from "../../model/index.ts";
import { type ProxyNode, type ProxyParseResult, parseProxy } from "../../model/index.ts";
import { MemoStore } from "../../util/index.ts";
import { forgetResponseBodies } from "../encode.ts";
import { XdsError } from "../errors.ts";
import type { GeneratorRegistry } from "../generator.ts";
import { type AuthContext, type Authenticator, authenticate, type Caller, checkConnectionIdentity } from "./auth.ts";
import { type AdsStream, Connection, type ConnectionStatus } from "./connection.ts";
import { controlPlaneIdentifier } from "./control-plane.ts";
import { handleDeltaRequest, pushDeltaType } from "./delta.ts";
import type { HealthReport, XdsEnv } from "./env.ts";
import { IdleCollector } from "./idle-gc.ts";
import { type KeepaliveOptions, keepServerAlive } from "./keepalive.ts";
import type { XdsMetrics } from "./metrics.ts";
import { PushQueue } from "./push-queue.ts";
import { addReflection } from "./reflection.ts";
import { DiscoveryRequestDecoder } from "./request-names.ts";
import { ResponseSlots } from "./response-slots.ts";
import { handleSotwRequest, pushSotwType } from "./sotw.ts";

/** A proxy that stops reading gives up its response slot after this long (its own stream stays blocked). */
const RESPONSE_SLOT_HOLD_MS = 5_000;
/**
 * Spent responses are collected once nothing has been written for this long, at most once per
 * interval, and only once the old generation and ArrayBuffers grew this much since the last time.
 */
const IDLE_GC_QUIET_MS = 2_000;
const IDLE_GC_MIN_INTERVAL_MS = 10_000;
const IDLE_GC_MIN_GROWTH_BYTES = 32 * 1024 * 1024;

export interface XdsServerOptions<Snapshot = unknown> {
  generators: GeneratorRegistry<Snapshot>;
  /** Without a push context the server answers Unavailable, as istiod does before its caches sync. */
  initialPush?: PushContext<Snapshot>;
  /** Tried in order on the TLS port; one must vouch for the caller (the plaintext port skips them). */
  authenticators?: readonly Authenticator[];
  /** Require the caller's SPIFFE id to match the proxy's namespace and service account (PILOT_ENABLE_XDS_IDENTITY_CHECK). */
  identityCheck?: boolean;
  /**
   * Whether a push concerns a proxy at all (Istio's ProxyNeedsPush: Sidecar scoping, namespaces);
   * `previous` is the push context the proxy was last pushed (or skipped) with. Without it every
   * connection is queued and the generators decide per type. Forced pushes skip it.
   */
  proxyNeedsPush?: (proxy: ProxyNode, req: PushRequest<Snapshot>, previous: PushContext<Snapshot>) => boolean;
  /** Proxies pushed at once (PILOT_PUSH_THROTTLE, default 100), and responses built and written at once. */
  pushConcurrency?: number;
  metrics?: XdsMetrics;
  log?: Logger;
  /** Sent as the control plane identifier in every response; default istiod's JSON form (controlPlaneIdentifier). */
  controlPlaneId?: string;
  /** Reads the proxy from the node of its first request; default Istio's reading (parseProxy). */
  parseNode?: (node: core.Node | undefined) => ProxyParseResult;
  /**
   * Where encoded resource lists and kept response bodies are memoised: the discovery's XdsCache;
   * default a store of the server's own.
   */
  memos?: MemoStore;
  /** Called once writing has been quiet a while, before the idle collection: drop what only bursts use. */
  onQuiet?: () => void;
  /** Told of each stream's proxy as it connects and disconnects (istiod's WorkloadEntry controller). */
  connectionHooks?: ConnectionHooks;
}

/** A stream whose proxy is known: its first request was read and authenticated. */
export interface ConnectionInfo {
  readonly id: string;
  readonly proxy: ProxyNode;
  readonly connectedAt: Date;
}

export interface ConnectionHooks {
  /**
   * Before the stream's first request is answered; a throw refuses the stream (an XdsError with its
   * code), as istiod's initializeProxy does. Not followed by `disconnected` then.
   */
  connected(conn: ConnectionInfo): Promise<void>;
  /** Once per stream `connected` accepted, when it ends. */
  disconnected(conn: ConnectionInfo): void;
  /** A health report (HealthInformation) on a stream `connected` accepted. */
  healthReported?(conn: ConnectionInfo, report: HealthReport): void;
}

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** Roots that client certificates are verified against; a client certificate is then verified if given. */
  caFile?: string;
}

/** TLS material from grpc-js certificate providers (a CA-issued, rotating istiod certificate) instead of files. */
export interface TlsProviders {
  identity: experimental.CertificateProvider;
  /** Roots that client certificates are verified against, as TlsFiles.caFile. */
  roots?: experimental.CertificateProvider;
}

export interface ListenOptions {
  /** Plaintext `host:port` (Istio's --grpcAddr, :15010); empty to disable. Both ports serve gRPC reflection. */
  grpcAddr?: string;
  /** TLS `host:port` (Istio's --secureGRPCAddr, :15012); needs `tls`. */
  secureGrpcAddr?: string;
  tls?: TlsFiles | TlsProviders;
  /**
   * Quiet time after which a connection is pinged (Istio's --keepaliveInterval); without it none is.
   * Only a connection nothing was read from for this long is pinged, as grpc-go's server does (keepalive.ts).
   */
  keepaliveTimeMs?: number;
  /** How long a pinged connection may stay silent before it is closed (Istio's --keepaliveTimeout; default 20 s). */
  keepaliveTimeoutMs?: number;
  /** Connections older than this are closed gracefully (clients reconnect, spreading load across replicas). */
  maxConnectionAgeMs?: number;
  maxConnectionAgeGraceMs?: number;
  /**
   * The largest message a call may send on either port, its added services' included (Istio's
   * ISTIO_GPRC_MAXRECVMSGSIZE; default 4 MiB): a larger one ends the call with RESOURCE_EXHAUSTED as
   * its length prefix arrives, before its bytes are buffered.
   */
  maxReceiveMessageBytes?: number;
}

/** Istio's default for ISTIO_GPRC_MAXRECVMSGSIZE. */
export const DEFAULT_MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Sluice's PILOT_PUSH_THROTTLE default (istiod's follows the cores: see pushThrottleFromEnv). */
const DEFAULT_PUSH_THROTTLE = 100;

/** grpc-go's keepalive timeout when none is given (Istio sets 10 s by its flag default). */
const DEFAULT_KEEPALIVE_TIMEOUT_MS = 20_000;

/**
 * The largest message accepted, in bytes, as istiod reads it from ISTIO_GPRC_MAXRECVMSGSIZE (Istio's
 * spelling). A value that is not a positive integer leaves the default, as Istio's env.Register does
 * for one that is not an integer (Istio would refuse every message under a limit of 0 or less).
 */
export function maxReceiveMessageBytesFromEnv(env: Record<string, string | undefined>): number {
  const value = env.ISTIO_GPRC_MAXRECVMSGSIZE ?? "";
  const bytes = /^\+?\d+$/.test(value) ? Number(value) : 0;
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : DEFAULT_MAX_RECEIVE_MESSAGE_BYTES;
}

/**
 * PILOT_PUSH_THROTTLE as istiod reads it: proxies pushed at once, 0 or unset for the default. istiod's
 * default follows the cores (15 + 5 a core, at most 100: 25 on two); Sluice's is 100 whatever the
 * cores, as at 25 a 500-sidecar sync took 28% longer (one pair of runs) for the same peak memory.
 * Istio warns about a value that is not an integer and reads a negative one as 0; here either stops
 * startup.
 */
export function pushThrottleFromEnv(env: Record<string, string | undefined>): number {
  const value = env.PILOT_PUSH_THROTTLE ?? "";
  // Number("") is 0: unset and empty take the default as "0" does.
  const n = Number(value);
  if (!/^\+?\d*$/.test(value) || !Number.isSafeInteger(n)) {
    throw new Error(`PILOT_PUSH_THROTTLE: must be a whole number of pushes (0 for the default), got "${value}"`);
  }
  return n > 0 ? n : DEFAULT_PUSH_THROTTLE;
}

export interface BoundPorts {
  grpcPort?: number;
  securePort?: number;
}

/** The ADS service definition: requests decoded with protobuf-es, responses sent as pre-encoded bytes. */
export const adsServiceDefinition = grpcServiceDefinition(discovery.AggregatedDiscoveryService);

type Protocol = "sotw" | "delta";
type AnyRequest = discovery.DiscoveryRequest | discovery.DeltaDiscoveryRequest;

/**
 * The ADS server over push contexts holding a `Snapshot`, which it hands to the generators and to
 * `proxyNeedsPush` without reading it (go-control-plane's split: the protocol never knows how state is kept).
 */
export class XdsServer<Snapshot = unknown> {
  readonly #env: XdsEnv<Snapshot>;
  readonly #options: XdsServerOptions<Snapshot>;
  readonly #connections = new Map<string, Connection<Snapshot>>();
  readonly #queue: PushQueue<Connection<Snapshot>, Snapshot>;
  readonly #servers: Server[] = [];
  readonly #extraServices: ExtraService[] = [];
  /** ADS, its SotW requests decoded sharing the name lists they repeat. */
  readonly #adsDefinition = sharingRequestNames(adsServiceDefinition, new DiscoveryRequestDecoder());
  readonly #idleGc: IdleCollector;
  #push: PushContext<Snapshot> | undefined;
  #connectionCounter = 0;

  constructor(options: XdsServerOptions<Snapshot>) {
    this.#options = options;
    this.#push = options.initialPush;
    const memos = options.memos ?? new MemoStore();
    this.#env = {
      generators: options.generators,
      metrics: options.metrics,
      log: options.log ?? pino({ level: "silent" }),
      controlPlane: toBinary(
        core.ControlPlaneSchema,
        create(core.ControlPlaneSchema, { identifier: options.controlPlaneId ?? controlPlaneIdentifier() }),
      ),
      responseSlots: new ResponseSlots(options.pushConcurrency ?? DEFAULT_PUSH_THROTTLE, RESPONSE_SLOT_HOLD_MS, () =>
        this.#idleGc.quiet(),
      ),
      memos,
      healthReported: (conn, report) => options.connectionHooks?.healthReported?.(conn, report),
    };
    this.#idleGc = new IdleCollector({
      quietMs: IDLE_GC_QUIET_MS,
      minIntervalMs: IDLE_GC_MIN_INTERVAL_MS,
      minGrowthBytes: IDLE_GC_MIN_GROWTH_BYTES,
      busy: () => this.#env.responseSlots.inUse > 0,
      onQuiet: () => {
        forgetResponseBodies(memos);
        options.onQuiet?.();
      },
    });
    this.#queue = new PushQueue(options.pushConcurrency ?? DEFAULT_PUSH_THROTTLE, (conn, req, queuedAt) =>
      this.#pushConnection(conn, req, queuedAt),
    );
    // Made with its first push context: the mesh is loaded.
    if (options.initialPush) this.#idleGc.startupDone();
  }

  /** The push context new requests are answered from. */
  get pushContext(): PushContext<Snapshot> | undefined {
    return this.#push;
  }

  /** Makes `req.push` current and queues every connection; proxyNeedsPush, then the generators, decide what each gets. */
  push(req: PushRequest<Snapshot>): void {
    this.#idleGc.postpone();
    this.#push = req.push;
    for (const conn of this.#connections.values()) {
      // A proxy neither queued nor being pushed is asked now, and one the request does not concern
      // takes the new context without queueing: an endpoint change reaches a tenth of a scoped mesh.
      if (!this.#queue.holds(conn) && !this.#needsPush(conn, req)) conn.pushContext = req.push;
      else this.#queue.enqueue(conn, req);
    }
  }

  #needsPush(conn: Connection<Snapshot>, req: PushRequest<Snapshot>): boolean {
    const needsPush = this.#options.proxyNeedsPush;
    return req.forced === true || needsPush === undefined || needsPush(conn.proxy, req, conn.pushContext);
  }

  /** A config change is being debounced: the push it brings comes first, idle work after. */
  changeComing(): void {
    this.#idleGc.postpone();
  }

  /** Resolves when the push queue is empty and nothing is being pushed. */
  pushesDone(): Promise<void> {
    return this.#queue.idle();
  }

  /** Sync status of every connection, for /debug/syncz, /debug/adsz and istio.io/debug/syncz. */
  syncStatus(): ConnectionStatus<Snapshot>[] {
    return [...this.#connections.values()].map((c) => c.status());
  }

  /** Ends the connection's stream with OK (the proxy reconnects); false when there is no such connection. */
  disconnect(connectionId: string): boolean {
    const conn = this.#connections.get(connectionId);
    if (!conn) return false;
    conn.end();
    this.#disconnect(conn);
    return true;
  }

  /** The ADS handlers, to add to a gRPC server this class does not own (the TLS server shared with the CA). */
  service(secure: boolean): UntypedServiceImplementation {
    return {
      streamAggregatedResources: (call: ServerDuplexStream<discovery.DiscoveryRequest, OutgoingResponse>) =>
        this.#stream(call, "sotw", secure),
      deltaAggregatedResources: (call: ServerDuplexStream<discovery.DeltaDiscoveryRequest, OutgoingResponse>) =>
        this.#stream(call, "delta", secure),
    };
  }

  register(server: Server, secure: boolean): void {
    const measured = (definition: ReturnType<typeof grpcServiceDefinition>) =>
      measuringRequests(definition, this.#env.metrics) as ServiceDefinition;
    server.addService(measured(this.#adsDefinition), this.service(secure));
    for (const extra of this.#extraServices) {
      if (secure || extra.plaintext) {
        server.addService(measured(grpcServiceDefinition(extra.service)), extra.implementation);
      }
    }
  }

  /** Serves another gRPC service from the ports listen() opens next (call it before listen). */
  addService(extra: ExtraService): void {
    this.#extraServices.push(extra);
  }

  /** The authenticator chain over a call of an added service (Istio's security.Authenticate). */
  authenticateCall(call: CallSurface): Promise<Caller | Error> {
    return authenticate(this.#options.authenticators ?? [], authContext(call), this.#env.log);
  }

  /** Starts the plaintext and/or TLS servers; port 0 asks the OS for a free one. */
  async listen(options: ListenOptions): Promise<BoundPorts> {
    // grpc-js's own keepalive stays off (it pings busy connections too): see keepalive.ts.
    const serverOptions = {
      "grpc.max_connection_age_ms": options.maxConnectionAgeMs,
      "grpc.max_connection_age_grace_ms": options.maxConnectionAgeGraceMs,
      // Requests are small (a 64 MiB one cost 240-360 MB of memory to read and answer); responses
      // carry whole configurations, which exceed 4 MiB.
      "grpc.max_receive_message_length": options.maxReceiveMessageBytes ?? DEFAULT_MAX_RECEIVE_MESSAGE_BYTES,
      "grpc.max_send_message_length": -1,
    };
    const ports: BoundPorts = {};
    // Errors name the flag, so a busy port says which setting to change.
    const keepalive =
      options.keepaliveTimeMs === undefined
        ? undefined
        : { timeMs: options.keepaliveTimeMs, timeoutMs: options.keepaliveTimeoutMs ?? DEFAULT_KEEPALIVE_TIMEOUT_MS };
    const bind = (flag: string, addr: string, credentials: () => ServerCredentials, secure: boolean) =>
      this.#bind(addr, credentials(), secure, serverOptions, keepalive).catch((err: unknown) => {
        throw new Error(`xds: cannot listen on ${flag} ${addr}: ${err instanceof Error ? err.message : String(err)}`);
      });
    if (options.grpcAddr) {
      ports.grpcPort = await bind("--grpcAddr", options.grpcAddr, () => ServerCredentialsImpl.createInsecure(), false);
    }
    if (options.secureGrpcAddr) {
      const tls = options.tls;
      if (!tls) throw new Error("xds: --secureGRPCAddr needs a server certificate and key");
      ports.securePort = await bind("--secureGRPCAddr", options.secureGrpcAddr, () => tlsCredentials(tls), true);
    }
    return ports;
  }

  async #bind(
    addr: string,
    credentials: ServerCredentials,
    secure: boolean,
    options: Record<string, number | undefined>,
    keepalive: KeepaliveOptions | undefined,
  ): Promise<number> {
    const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
    const server = new Server(defined);
    this.register(server, secure);
    const extras = this.#extraServices.filter((e) => secure || e.plaintext).map((e) => e.service);
    addReflection(server, registry, [discovery.AggregatedDiscoveryService, ...extras]);
    // Go's ":15010" (every interface), as Istio's flags are written, is "[::]:15010" to grpc-js.
    const target = addr.startsWith(":") ? `[::]${addr}` : addr;
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(target, credentials, (err, p) => (err ? reject(err) : resolve(p))),
    );
    if (keepalive) keepServerAlive(server, keepalive);
    this.#servers.push(server);
    return port;
  }

  /**
   * Graceful shutdown: stops accepting, ends every open stream with OK (clients reconnect to
   * another replica), and cuts what is still open after `graceMs`.
   */
  async close(graceMs = 5000): Promise<void> {
    const shutdowns = this.#servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => server.forceShutdown(), graceMs);
          server.tryShutdown(() => {
            clearTimeout(timer);
            resolve();
          });
        }),
    );
    for (const conn of [...this.#connections.values()]) {
      conn.end();
      this.#disconnect(conn);
    }
    this.#idleGc.stop();
    await Promise.all(shutdowns);
  }

  #stream(call: AdsStream, protocol: Protocol, secure: boolean): void {
    const method = protocol === "sotw" ? "StreamAggregatedResources" : "DeltaAggregatedResources";
    const labels = {
      grpc_type: "bidi_stream",
      grpc_service: discovery.AggregatedDiscoveryService.typeName,
      grpc_method: method,
    };
    this.#env.metrics?.rpcStarted.inc(labels);
    let conn: Connection<Snapshot> | undefined;
    let finished = false;
    const finish = (code: status, details: string) => {
      if (finished) return;
      finished = true;
      this.#env.metrics?.rpcHandled.inc({ ...labels, grpc_code: status[code] });
      if (conn) this.#disconnect(conn);
      if (code === status.OK) call.end();
      else call.emit("error", { code, details });
    };
    if (!this.#push) {
      finish(status.UNAVAILABLE, "server is not ready to serve discovery information");
      return;
    }
    // Requests of one stream are handled one after another, as Istio's per-stream loop does.
    let chain: Promise<void> = Promise.resolve();
    call.on("data", (req: AnyRequest) => {
      chain = chain.then(async () => {
        if (finished) return;
        if (!conn) {
          const opened = await this.#open(call, req, protocol, secure);
          if ("code" in opened) return finish(opened.code, opened.details);
          const hooks = this.#options.connectionHooks;
          await hooks?.connected(opened);
          // The stream may have ended while the proxy was authenticated: nothing would unregister it.
          if (finished || call.destroyed) return hooks?.disconnected(opened);
          conn = opened;
          this.#register(conn);
        }
        if (protocol === "sotw") await handleSotwRequest(this.#env, conn, req as discovery.DiscoveryRequest);
        else await handleDeltaRequest(this.#env, conn, req as discovery.DeltaDiscoveryRequest);
      });
      chain = chain.catch((err: unknown) => {
        if (err instanceof XdsError) {
          this.#env.log.warn(
            { connection: conn?.id, code: status[err.code], err: err.message },
            "ADS: request refused",
          );
          return finish(err.code, err.message);
        }
        this.#env.log.error({ err: err instanceof Error ? err.message : String(err) }, "ADS: request failed");
        finish(status.INTERNAL, err instanceof Error ? err.message : String(err));
      });
    });
    call.on("end", () => finish(status.OK, "OK"));
    call.on("cancelled", () => finish(status.CANCELLED, "cancelled"));
    call.on("error", () => {
      if (conn) this.#disconnect(conn);
    });
    call.on("close", () => {
      if (conn) this.#disconnect(conn);
    });
  }

  /** Reads the proxy from the first request and authenticates it. */
  async #open(
    call: AdsStream,
    first: AnyRequest,
    protocol: Protocol,
    secure: boolean,
  ): Promise<Connection<Snapshot> | { code: status; details: string }> {
    const parsed = (this.#options.parseNode ?? parseProxy)(first.node);
    if (parsed.error !== undefined) return { code: status.INVALID_ARGUMENT, details: parsed.error };
    const proxy = parsed.proxy;
    let identities: string[] = [];
    if (secure) {
      const caller = await authenticate(this.#options.authenticators ?? [], authContext(call), this.#env.log);
      // The message only: the reasons are logged at debug level, never sent.
      if (caller instanceof Error) return { code: status.UNAUTHENTICATED, details: caller.message };
      identities = caller.identities;
      if (this.#options.identityCheck ?? true) {
        const id = checkConnectionIdentity(proxy, identities);
        if (id instanceof Error) return { code: status.PERMISSION_DENIED, details: id.message };
      }
      proxy.verifiedIdentities = identities;
    }
    this.#connectionCounter++;
    const push = this.#push as PushContext<Snapshot>;
    return new Connection(
      `${proxy.id}-${this.#connectionCounter}`,
      proxy,
      protocol,
      call.getPeer(),
      identities,
      push,
      call,
    );
  }

  #register(conn: Connection<Snapshot>): void {
    this.#connections.set(conn.id, conn);
    this.#env.metrics?.connections.inc({ version: conn.proxy.metadata.ISTIO_VERSION ?? "unknown" });
    this.#env.log.info({ connection: conn.id, protocol: conn.protocol, peer: conn.peerAddress }, "ADS: new connection");
  }

  #disconnect(conn: Connection<Snapshot>): void {
    if (!this.#connections.delete(conn.id)) return;
    this.#options.connectionHooks?.disconnected(conn);
    conn.close();
    this.#queue.remove(conn);
    this.#env.metrics?.connections.dec({ version: conn.proxy.metadata.ISTIO_VERSION ?? "unknown" });
    this.#env.log.info({ connection: conn.id }, "ADS: connection closed");
  }

  async #pushConnection(conn: Connection<Snapshot>, req: PushRequest<Snapshot>, queuedAtMs: number): Promise<void> {
    this.#env.metrics?.queueTime.observe((performance.now() - queuedAtMs) / 1000);
    if (conn.closed) return;
    // Asked again when dequeued, as Istio does: the request then merges everything queued for the proxy.
    const skip = !this.#needsPush(conn, req);
    conn.pushContext = req.push;
    // Nothing it sees changed: later requests of this proxy are answered from the new context.
    if (skip) return;
    for (const w of conn.orderedWatches()) {
      if (conn.closed) return;
      try {
        const sending =
          conn.protocol === "sotw"
            ? pushSotwType(this.#env, conn, w, req, false)
            : pushDeltaType(this.#env, conn, w, req);
        if (sending) await sending;
      } catch (err) {
        // A refusal was already given when the proxy asked; a push only skips the type.
        if (!(err instanceof XdsError)) throw err;
        this.#env.log.warn({ connection: conn.id, type: w.typeUrl, err: err.message }, "ADS: push refused");
      }
    }
    // Istio leaves incremental (EDS-only) pushes out of the convergence time.
    if (req.full) this.#env.metrics?.convergence.observe((Date.now() - req.start.getTime()) / 1000);
  }
}

/** The ADS definition with its SotW requests decoded by `decoder`. */
function sharingRequestNames(
  definition: ReturnType<typeof grpcServiceDefinition>,
  decoder: DiscoveryRequestDecoder,
): ReturnType<typeof grpcServiceDefinition> {
  const sotw = definition.streamAggregatedResources;
  return {
    ...definition,
    streamAggregatedResources: { ...sotw, requestDeserialize: (b: Buffer) => decoder.decode(b) },
  };
}

/**
 * The definition with the size of every request message recorded before it is decoded, as istiod's
 * gRPC stats handler records each payload received on its servers (pilot_xds_recv_max).
 */
export function measuringRequests(
  definition: ReturnType<typeof grpcServiceDefinition>,
  metrics: Pick<XdsMetrics, "recordRecvSize"> | undefined,
): ReturnType<typeof grpcServiceDefinition> {
  if (!metrics) return definition;
  return Object.fromEntries(
    Object.entries(definition).map(([name, method]) => [
      name,
      {
        ...method,
        requestDeserialize: (bytes: Buffer) => {
          metrics.recordRecvSize(bytes.length);
          return method.requestDeserialize(bytes);
        },
      },
    ]),
  );
}

function tlsCredentials(tls: TlsFiles | TlsProviders): ServerCredentials {
  if ("identity" in tls)
    return experimental.createCertificateProviderServerCredentials(tls.identity, tls.roots ?? null, false);
  const identity = new experimental.FileWatcherCertificateProvider({
    certificateFile: tls.certFile,
    privateKeyFile: tls.keyFile,
    refreshIntervalMs: 60_000,
  });
  const roots = tls.caFile
    ? new experimental.FileWatcherCertificateProvider({ caCertificateFile: tls.caFile, refreshIntervalMs: 60_000 })
    : null;
  // grpc-js names the first parameter after the CA, but it is the identity provider. With roots, a
  // client certificate is requested and verified if given (Go's VerifyClientCertIfGiven).
  return experimental.createCertificateProviderServerCredentials(identity, roots, false);
}

function authContext(call: CallSurface): AuthContext {
  const cert = call.getAuthContext()?.sslPeerCertificate;
  const metadata: Metadata = call.metadata;
  return {
    transport: "grpc",
    verifiedPeerCertificate: cert?.raw ? new Uint8Array(cert.raw) : undefined,
    header: (name) => {
      const v = metadata.get(name)[0];
      return typeof v === "string" ? v : undefined;
    },
    remoteAddress: call.getPeer(),
  };
}
