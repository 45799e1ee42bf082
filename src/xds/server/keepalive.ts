// Keepalive as grpc-go's server (istiod) keeps it: a connection is pinged only after the keepalive
// time passes with nothing read from it, and any frame read (a request, an ACK, a ping's answer)
// counts as life; one that stays silent for the timeout after the ping is closed. grpc-js's own
// server keepalive pings every connection on a timer whatever it is doing, and drops one whose answer
// is late: a proxy busy reading a large push (its event loop behind) lost its stream while it was
// receiving and ACKing. So grpc-js's is left off and this one watches each HTTP/2 session.
import type { Http2Server, Http2Session } from "node:http2";
import type { Server } from "@grpc/grpc-js";

export interface KeepaliveOptions {
  /** Quiet time after which the connection is pinged (--keepaliveInterval). */
  timeMs: number;
  /** How long a pinged connection may stay silent before it is closed (--keepaliveTimeout). */
  timeoutMs: number;
}

/** Bytes the session's socket has read: every frame the peer sends moves it. */
function bytesRead(session: Http2Session): number {
  return session.socket?.bytesRead ?? 0;
}

/** Pings `session` after `timeMs` without a frame read, and closes it if nothing is read in `timeoutMs` more. */
export function keepSessionAlive(session: Http2Session, { timeMs, timeoutMs }: KeepaliveOptions): void {
  let seen = bytesRead(session);
  let timer: NodeJS.Timeout | undefined;
  const after = (ms: number, then: () => void) => {
    timer = setTimeout(then, ms);
    timer.unref();
  };
  /** True (and `seen` moved on) when a frame was read since the last look. */
  const readSince = () => {
    const now = bytesRead(session);
    const moved = now !== seen;
    seen = now;
    return moved;
  };
  const idleCheck = () => {
    if (session.destroyed || session.closed) return;
    if (readSince()) return after(timeMs, idleCheck);
    try {
      // The answer is a frame read, which the check below sees; a failed ping is a dead session.
      session.ping(() => {});
    } catch {
      session.destroy();
      return;
    }
    after(timeoutMs, () => {
      if (session.destroyed) return;
      if (readSince()) return after(timeMs, idleCheck);
      session.destroy();
    });
  };
  after(timeMs, idleCheck);
  session.once("close", () => clearTimeout(timer));
}

/** What grpc-js keeps per HTTP/2 server (a private field of its Server, read only here). */
interface Http2ServerEntry {
  sessions?: Set<Http2Session>;
}

/**
 * Watches every session of the HTTP/2 servers behind a bound grpc-js `server`, those open now and
 * those to come. grpc-js has no public hook for its sessions, so this reads its private
 * `http2Servers` map, and fails loudly if a grpc-js release removes it (keepalive.test.ts pins it).
 */
export function keepServerAlive(server: Server, options: KeepaliveOptions): void {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map)) {
    throw new Error("xds: this grpc-js Server has no http2Servers map; the keepalive cannot watch its connections");
  }
  for (const [http2Server, entry] of servers as Map<Http2Server, Http2ServerEntry>) {
    for (const session of entry.sessions ?? []) keepSessionAlive(session, options);
    http2Server.on("session", (session: Http2Session) => keepSessionAlive(session, options));
  }
}
