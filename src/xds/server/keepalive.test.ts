// The xDS server's keepalive is grpc-go's: a connection that keeps sending frames is never dropped for
// a ping it answers late (or never), and a silent one is closed after its ping goes unanswered.
// The peers here speak raw HTTP/2 over TCP, so they can send frames without ever answering a ping.
import assert from "node:assert/strict";
import { once } from "node:events";
import { connect as http2Connect } from "node:http2";
import { connect, type Socket } from "node:net";
import { after, test } from "node:test";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { keepServerAlive } from "./keepalive.ts";

const KEEPALIVE = { timeMs: 100, timeoutMs: 100 };
const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
/** A PING of the peer's own (not an answer to the server's): a frame the server reads. */
const PING = Buffer.from([0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]);

const servers: Server[] = [];
after(() => {
  for (const s of servers) s.forceShutdown();
});

async function serve(options: Record<string, number> = {}, keepalive = true): Promise<number> {
  const server = new Server(options);
  servers.push(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  if (keepalive) keepServerAlive(server, KEEPALIVE);
  return port;
}

/** A peer that opens an HTTP/2 connection and never answers anything the server sends. */
async function rawPeer(port: number): Promise<{ socket: Socket; closed: Promise<unknown> }> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.on("data", () => {}); // read and ignore: SETTINGS, PINGs, their ACKs
  socket.on("error", () => {});
  socket.write(Buffer.concat([PREFACE, SETTINGS]));
  return { socket, closed: once(socket, "close") };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("a connection that keeps sending frames stays up without answering a ping", async () => {
  const { socket } = await rawPeer(await serve());
  const sending = setInterval(() => socket.write(PING), 10);
  try {
    // Five keepalive periods: grpc-js's own keepalive would have closed it after the first ping.
    await sleep(5 * (KEEPALIVE.timeMs + KEEPALIVE.timeoutMs));
    assert.equal(socket.destroyed, false, "the server closed a connection that was sending");
    assert.equal(socket.readyState, "open");
  } finally {
    clearInterval(sending);
    socket.destroy();
  }
});

test("a silent connection that does not answer the ping is closed", async () => {
  const { closed } = await rawPeer(await serve());
  await closed; // the server pings after timeMs of quiet, then closes after timeoutMs without a frame
});

test("an idle connection that answers pings stays up", async () => {
  const port = await serve();
  const session = http2Connect(`http://127.0.0.1:${port}`);
  session.on("error", () => {});
  await once(session, "connect");
  await sleep(5 * (KEEPALIVE.timeMs + KEEPALIVE.timeoutMs));
  assert.equal(session.destroyed, false);
  assert.equal(session.closed, false);
  session.destroy();
});

test("grpc-js's own keepalive drops a sending connection whose ping answer is late: why it stays off", async () => {
  const port = await serve(
    { "grpc.keepalive_time_ms": KEEPALIVE.timeMs, "grpc.keepalive_timeout_ms": KEEPALIVE.timeoutMs },
    false,
  );
  const { socket, closed } = await rawPeer(port);
  const sending = setInterval(() => socket.write(PING), 10);
  try {
    await closed;
  } finally {
    clearInterval(sending);
  }
});

test("keepServerAlive needs a bound grpc-js Server's HTTP/2 servers (a grpc-js release that hides them fails here)", () => {
  assert.throws(() => keepServerAlive({} as Server, KEEPALIVE), /no http2Servers map/);
});
