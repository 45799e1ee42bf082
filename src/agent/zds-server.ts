// The node agent's side of ZDS, Istio's ztunnel discovery (cni/pkg/nodeagent/ztunnelserver*.go; the
// protocol is pkg/zdsapi/zds.proto): ztunnel connects to a Unix SOCK_SEQPACKET socket and says hello;
// the agent sends a snapshot, an `add` for each pod in the mesh with the pod's network namespace
// attached as a descriptor (a `keep` for a pod whose namespace is not open yet) and then
// `snapshot_sent`, and from then on an `add` or `del` as pods come and go. Each message is one protobuf
// per datagram and ztunnel acknowledges each before the next is sent (the ack names no request, so a
// connection has one request in flight at a time); an ack with an error is ztunnel refusing it.
//
// As Istio, several ztunnels may be connected (one replacing another on the node): each is sent the
// snapshot, a new pod goes to the one connected last, and a deleted pod to all of them.
import { closeSync, fstatSync, rmSync } from "node:fs";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import { zdsapi } from "../api/index.ts";
import { type SeqpacketMessage, SeqpacketServer, SeqpacketSocket } from "./seqpacket.ts";

/** Where ztunnel connects (the CNI agent's ZTUNNEL_UDS_ADDRESS default). */
export const DEFAULT_ZTUNNEL_SOCKET_PATH = "/var/run/ztunnel/ztunnel.sock";
/** How long ztunnel has to say hello, and to acknowledge each request (Istio's readWriteDeadline). */
export const DEFAULT_ZDS_ACK_TIMEOUT_MS = 5000;
/** Istio accepts at most five connections a second, so that a ztunnel reconnecting in a loop costs little. */
const ACCEPT_INTERVAL_MS = 200;
/** Istio reads ztunnel's messages (hello, acks) into 1 KiB; a longer one is an error. */
const MAX_MESSAGE_BYTES = 1024;

/** A pod in the mesh on this node, as ztunnel is told of it. */
export interface ZdsPod {
  uid: string;
  name: string;
  namespace: string;
  serviceAccount: string;
}

export interface ZdsServerOptions {
  /** The socket to listen on; a file already there (a previous agent's socket) is replaced. */
  socketPath: string;
  log: Logger;
  ackTimeoutMs?: number;
}

/** A pod the agent holds: with its network namespace once open (a `keep` in snapshots until then). */
interface HeldPod {
  pod?: ZdsPod;
  netnsFd?: number;
}

type Request = zdsapi.WorkloadRequest["payload"];

const podName = (pod: ZdsPod) => `pod ${pod.namespace}/${pod.name} (uid ${pod.uid})`;

export class ZdsServer {
  readonly #socketPath: string;
  readonly #log: Logger;
  readonly #ackTimeoutMs: number;
  readonly #listener: SeqpacketServer;
  readonly #pods = new Map<string, HeldPod>();
  /** Connected ztunnels, oldest first. */
  #connections: ZtunnelConnection[] = [];
  #lastConnectionId = 0;

  /** Listens on options.socketPath; throws if it cannot. */
  constructor(options: ZdsServerOptions) {
    this.#socketPath = options.socketPath;
    this.#log = options.log;
    this.#ackTimeoutMs = options.ackTimeoutMs ?? DEFAULT_ZDS_ACK_TIMEOUT_MS;
    try {
      rmSync(this.#socketPath, { force: true });
      this.#listener = new SeqpacketServer(this.#socketPath, {
        acceptIntervalMs: ACCEPT_INTERVAL_MS,
        onConnection: (fd) => this.#connected(fd),
        onAcceptError: (error) => this.#log.error({ err: error }, "failed to accept a ztunnel connection"),
      });
    } catch (error) {
      throw new Error(`cannot listen for ztunnel on ${this.#socketPath}: ${(error as Error).message}`);
    }
  }

  /** How many ztunnels are connected. */
  get connections(): number {
    return this.#connections.length;
  }

  /**
   * Holds the pod with its network namespace (netnsFd stays the caller's: keep it open until
   * deletePod of the pod has settled) and sends it to the ztunnel connected last. Rejects when none
   * is connected (the pod still goes in the next snapshot), or when ztunnel refuses it or does not
   * acknowledge it in time.
   */
  async addPod(pod: ZdsPod, netnsFd: number): Promise<void> {
    if (!pod.uid) throw new TypeError(`${podName(pod)}: the uid is empty`);
    if (!isOpenFd(netnsFd)) throw new TypeError(`${podName(pod)}: netnsFd ${netnsFd} is not an open file descriptor`);
    this.#pods.set(pod.uid, { pod, netnsFd });
    const latest = this.#connections.at(-1);
    if (!latest) throw new Error(`no ztunnel is connected to add ${podName(pod)}; it goes in the next snapshot`);
    const error = await latest.request(addRequest(pod), `add of ${podName(pod)}`, netnsFd);
    if (error) throw new Error(`ztunnel connection ${latest.id} refused the add of ${podName(pod)}: ${error}`);
  }

  /**
   * Holds a pod in the mesh whose network namespace is not open yet (Istio's Ensure, when the agent
   * starts): snapshots send ztunnel a `keep` for it, so that ztunnel keeps what it has of the pod.
   */
  keepPod(uid: string): void {
    if (!this.#pods.has(uid)) this.#pods.set(uid, {});
  }

  /**
   * Lets go of the pod and tells every connected ztunnel to delete it. Rejects, naming each
   * connection, when one refuses or does not acknowledge it in time.
   */
  async deletePod(uid: string): Promise<void> {
    const held = this.#pods.get(uid);
    this.#pods.delete(uid);
    const what = `delete of ${held?.pod ? podName(held.pod) : `pod uid ${uid}`}`;
    const request: Request = { case: "del", value: create(zdsapi.DelWorkloadSchema, { uid }) };
    const connections = [...this.#connections];
    const outcomes = await Promise.allSettled(connections.map((connection) => connection.request(request, what)));
    const failures = outcomes.flatMap((outcome, i) => {
      if (outcome.status === "rejected") return [(outcome.reason as Error).message];
      return outcome.value ? [`ztunnel connection ${connections[i].id} refused it: ${outcome.value}`] : [];
    });
    if (failures.length > 0) throw new Error(`${what} failed: ${failures.join("; ")}`);
  }

  /** Stops listening (removing the socket file) and closes every connection. */
  close(): void {
    this.#listener.close();
    rmSync(this.#socketPath, { force: true });
    for (const connection of [...this.#connections]) connection.close(new Error("the ZDS server closed"));
  }

  #connected(fd: number): void {
    const id = ++this.#lastConnectionId;
    const log = this.#log.child({ ztunnelConnection: id });
    const connection = new ZtunnelConnection(fd, id, this.#ackTimeoutMs, (error) => {
      this.#connections = this.#connections.filter((c) => c !== connection);
      if (error) log.warn({ err: error, connected: this.#connections.length }, "ztunnel disconnected");
      else log.info({ connected: this.#connections.length }, "ztunnel disconnected");
    });
    // Added before its hello, as Istio: a pod added meanwhile waits for the snapshot and follows it.
    this.#connections.push(connection);
    log.info({ connected: this.#connections.length }, "ztunnel connected");
    connection
      .serially(async () => {
        const hello = await connection.hello();
        log.info({ version: zdsapi.Version[hello.version] ?? hello.version }, "received hello from ztunnel");
        await this.#sendSnapshot(connection, log);
      })
      .catch((error: Error) => {
        log.error({ err: error }, "ztunnel connection failed before its snapshot was sent");
        connection.close(error);
      });
  }

  /** Every pod held (a copy: pods may come and go while acks are awaited), then snapshot_sent. */
  async #sendSnapshot(connection: ZtunnelConnection, log: Logger): Promise<void> {
    for (const [uid, { pod, netnsFd }] of [...this.#pods]) {
      const error =
        pod && netnsFd !== undefined
          ? await connection.exchange(addRequest(pod), `add of ${podName(pod)}`, netnsFd)
          : await connection.exchange(
              { case: "keep", value: create(zdsapi.KeepWorkloadSchema, { uid }) },
              `keep of pod uid ${uid}`,
            );
      if (error) log.error({ uid, ackError: error }, "ztunnel refused a pod of the snapshot");
    }
    const error = await connection.exchange(
      { case: "snapshotSent", value: create(zdsapi.SnapshotSentSchema) },
      "end of the snapshot",
    );
    if (error) log.error({ ackError: error }, "ztunnel refused the end of the snapshot");
  }
}

function isOpenFd(fd: number): boolean {
  if (!Number.isInteger(fd) || fd < 0) return false;
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
}

function addRequest(pod: ZdsPod): Request {
  const workloadInfo = create(zdsapi.WorkloadInfoSchema, {
    name: pod.name,
    namespace: pod.namespace,
    serviceAccount: pod.serviceAccount,
  });
  return { case: "add", value: create(zdsapi.AddWorkloadSchema, { uid: pod.uid, workloadInfo }) };
}

/** What a connection waits for: the next message from ztunnel, due before its timer fires. */
interface Awaited {
  what: string;
  resolve(data: Buffer): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** One ztunnel's connection: its hello, then one request and its ack at a time. */
class ZtunnelConnection {
  readonly id: number;
  readonly #socket: SeqpacketSocket;
  readonly #timeoutMs: number;
  #awaited: Awaited | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #closedBy: Error | undefined;

  constructor(fd: number, id: number, timeoutMs: number, onClosed: (error?: Error) => void) {
    this.id = id;
    this.#timeoutMs = timeoutMs;
    this.#socket = new SeqpacketSocket(fd, MAX_MESSAGE_BYTES, {
      message: (message) => this.#received(message),
      closed: (error) => {
        this.#closedBy = error ?? new Error("ztunnel closed it");
        const awaited = this.#awaited;
        this.#awaited = undefined;
        if (awaited) {
          clearTimeout(awaited.timer);
          awaited.reject(
            new Error(`ztunnel connection ${this.id} closed before its ${awaited.what}: ${this.#closedBy.message}`),
          );
        }
        onClosed(error);
      },
    });
  }

  /** Runs job after every job queued before it, so that only one request is ever in flight. */
  serially<T>(job: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(job);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /** Queues one request; resolves to its ack's error ("" when ztunnel applied it). */
  request(payload: Request, what: string, fd?: number): Promise<string> {
    return this.serially(() => this.exchange(payload, what, fd));
  }

  /** ztunnel's first message. */
  async hello(): Promise<zdsapi.ZdsHello> {
    const data = await this.#next("hello");
    try {
      return fromBinary(zdsapi.ZdsHelloSchema, data);
    } catch (error) {
      throw this.#protocolError(`its hello does not decode: ${(error as Error).message}`);
    }
  }

  /** Sends one request (with fd attached) and awaits its ack: only from a job run serially. */
  async exchange(payload: Request, what: string, fd?: number): Promise<string> {
    if (this.#closedBy) throw new Error(`ztunnel connection ${this.id} is closed (${this.#closedBy.message})`);
    try {
      this.#socket.send(toBinary(zdsapi.WorkloadRequestSchema, create(zdsapi.WorkloadRequestSchema, { payload })), fd);
    } catch (error) {
      const failure = new Error(
        `ztunnel connection ${this.id}: sending the ${what} failed: ${(error as Error).message}`,
      );
      this.close(failure);
      throw failure;
    }
    const data = await this.#next(`ack of the ${what}`);
    let response: zdsapi.WorkloadResponse;
    try {
      response = fromBinary(zdsapi.WorkloadResponseSchema, data);
    } catch (error) {
      throw this.#protocolError(`its ack of the ${what} does not decode: ${(error as Error).message}`);
    }
    return response.payload.case === "ack" ? response.payload.value.error : "";
  }

  close(error?: Error): void {
    this.#socket.close(error);
  }

  /** The next message; one not there within the timeout closes the connection. */
  #next(what: string): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#awaited = undefined;
        const error = new Error(`ztunnel connection ${this.id} sent no ${what} within ${this.#timeoutMs} ms`);
        reject(error);
        // Its ack may yet come, and would be taken for the next request's: the connection is done.
        this.close(error);
      }, this.#timeoutMs);
      this.#awaited = { what, resolve, reject, timer };
    });
  }

  #received({ data, fds }: SeqpacketMessage): void {
    const awaited = this.#awaited;
    if (fds.length > 0) {
      for (const fd of fds) closeSync(fd);
      this.#protocolError("it sent descriptors");
    } else if (!awaited) {
      this.#protocolError("it sent a message unasked");
    } else {
      this.#awaited = undefined;
      clearTimeout(awaited.timer);
      awaited.resolve(data);
    }
  }

  #protocolError(why: string): Error {
    const error = new Error(`ztunnel connection ${this.id}: protocol error: ${why}`);
    this.close(error);
    return error;
  }
}
