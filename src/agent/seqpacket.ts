// Unix SOCK_SEQPACKET sockets that carry file descriptors (SCM_RIGHTS), which Node has no API for:
// the system calls are a small Node-API addon of ours (native/seqpacket.c, built by `npm run build`),
// and all the rest is here. A message is one datagram, kept whole, with at most one descriptor sent.
import { closeSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** One message received: its bytes and the descriptors that came with it (the receiver's to close). */
export interface SeqpacketMessage {
  data: Buffer;
  fds: number[];
}

/** What a socket tells its owner. */
export interface SeqpacketHandlers {
  /** A message arrived. */
  message(message: SeqpacketMessage): void;
  /** The socket closed, once: the peer's end (no error), a failed read, or close(). */
  closed(error?: Error): void;
}

interface Received extends SeqpacketMessage {
  truncated: boolean;
}

/** native/seqpacket.c's functions; they throw Errors with the errno's name as code. */
interface SeqpacketAddon {
  listen(path: string, backlog: number): number;
  connect(path: string): number;
  /** -1 when no connection is waiting. */
  accept(fd: number): number;
  /** passFd -1: no descriptor. */
  send(fd: number, data: Buffer, passFd: number): void;
  /** null when no message is waiting. */
  receive(fd: number, maxBytes: number): Received | null;
  watch(fd: number, onReadable: () => void): WatchHandle;
  unwatch(handle: WatchHandle): void;
}
declare const watchHandle: unique symbol;
type WatchHandle = { readonly [watchHandle]: true };

const ADDON_PATH = fileURLToPath(new URL("../../native/build/Release/seqpacket.node", import.meta.url));
const requireAddon = createRequire(import.meta.url);

/** The addon (Node's require keeps it loaded after the first call). */
function addon(): SeqpacketAddon {
  try {
    return requireAddon(ADDON_PATH) as SeqpacketAddon;
  } catch (error) {
    throw new Error(`the seqpacket addon does not load (${ADDON_PATH}; npm run build builds it): ${error}`);
  }
}

/** A connected SOCK_SEQPACKET socket, reading messages as they arrive. */
export class SeqpacketSocket {
  readonly #addon = addon();
  readonly #fd: number;
  readonly #maxMessageBytes: number;
  readonly #handlers: SeqpacketHandlers;
  readonly #watch: WatchHandle;
  #closed = false;

  /** Takes over fd, a connected socket; messages over maxMessageBytes close it with an error. */
  constructor(fd: number, maxMessageBytes: number, handlers: SeqpacketHandlers) {
    this.#fd = fd;
    this.#maxMessageBytes = maxMessageBytes;
    this.#handlers = handlers;
    try {
      this.#watch = this.#addon.watch(fd, () => this.#readable());
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Sends data as one message, with passFd (still the caller's) if given; throws if it cannot. */
  send(data: Uint8Array, passFd?: number): void {
    if (this.#closed) throw new Error("the socket is closed");
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    this.#addon.send(this.#fd, bytes, passFd ?? -1);
  }

  close(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#addon.unwatch(this.#watch);
    closeSync(this.#fd);
    this.#handlers.closed(error);
  }

  #readable(): void {
    while (!this.#closed) {
      let received: Received | null;
      try {
        received = this.#addon.receive(this.#fd, this.#maxMessageBytes);
      } catch (error) {
        this.close(error as Error);
        return;
      }
      if (received === null) return;
      const { data, fds, truncated } = received;
      if (truncated) {
        for (const fd of fds) closeSync(fd);
        this.close(new Error(`a message longer than ${this.#maxMessageBytes} bytes or with too many descriptors`));
        return;
      }
      if (data.length === 0 && fds.length === 0) {
        this.close();
        return;
      }
      this.#handlers.message({ data, fds });
    }
  }
}

/** A listening SOCK_SEQPACKET socket: each connection's descriptor goes to onConnection. */
export class SeqpacketServer {
  readonly #addon = addon();
  readonly #fd: number;
  readonly #onConnection: (fd: number) => void;
  readonly #acceptIntervalMs: number;
  readonly #onAcceptError: (error: Error) => void;
  #watch: WatchHandle | undefined;
  #paused: NodeJS.Timeout | undefined;
  #closed = false;

  /**
   * Binds path (which must not exist) and listens. After each connection, the next is accepted no
   * sooner than acceptIntervalMs later. onAcceptError hears of a failed accept (the server goes on).
   */
  constructor(
    path: string,
    options: { acceptIntervalMs: number; onConnection: (fd: number) => void; onAcceptError: (error: Error) => void },
  ) {
    this.#fd = this.#addon.listen(path, 16);
    this.#onConnection = options.onConnection;
    this.#acceptIntervalMs = options.acceptIntervalMs;
    this.#onAcceptError = options.onAcceptError;
    this.#watch = this.#addon.watch(this.#fd, () => this.#acceptOne());
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#paused);
    if (this.#watch) this.#addon.unwatch(this.#watch);
    closeSync(this.#fd);
  }

  #acceptOne(): void {
    let fd = -1;
    try {
      fd = this.#addon.accept(this.#fd);
      if (fd < 0) return; // none waiting
    } catch (error) {
      this.#onAcceptError(error as Error);
    }
    if (fd >= 0) this.#onConnection(fd);
    if (this.#acceptIntervalMs > 0 && this.#watch && !this.#closed) {
      this.#addon.unwatch(this.#watch);
      this.#watch = undefined;
      this.#paused = setTimeout(() => {
        this.#watch = this.#addon.watch(this.#fd, () => this.#acceptOne());
      }, this.#acceptIntervalMs);
    }
  }
}

/** Connects to a listening SOCK_SEQPACKET socket at path. */
export function connectSeqpacket(path: string, maxMessageBytes: number, handlers: SeqpacketHandlers): SeqpacketSocket {
  return new SeqpacketSocket(addon().connect(path), maxMessageBytes, handlers);
}
