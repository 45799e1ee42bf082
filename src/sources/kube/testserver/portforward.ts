// The test API server's pod port-forward: the WebSocket protocol `v4.channel.k8s.io` that kubectl and
// client-node's PortForward speak. Every message starts with its channel byte: channel 0 carries the
// port's data both ways, channel 1 the server's errors, and each channel's first server message is
// the port number (2 bytes, little-endian). The pod's end is a 127.0.0.1 port the test registered.
// RFC 6455 framing is written out here (server side: client frames are masked, ours are not).
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { connect } from "node:net";
import type { Duplex } from "node:stream";

export const PORT_FORWARD_PROTOCOL = "v4.channel.k8s.io";
const WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const DATA_CHANNEL = 0;
const ERROR_CHANNEL = 1;
const OPCODE = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

/** Answers an upgrade request with an HTTP error and closes the connection. */
export function rejectUpgrade(socket: Duplex, code: number, message: string): void {
  const body = JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", message, code });
  socket.end(
    `HTTP/1.1 ${code} ${message}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Accepts the WebSocket and bridges its data channel to 127.0.0.1:`target` (or, without a target,
 * reports on the error channel that nothing listens on the pod's `port`, as the kubelet does).
 */
export function acceptPortForward(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  port: number,
  podName: string,
  target: number | undefined,
): void {
  const protocols = (req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim());
  const key = req.headers["sec-websocket-key"];
  if (!key || !protocols.includes(PORT_FORWARD_PROTOCOL)) {
    rejectUpgrade(socket, 400, `a port-forward needs a WebSocket with protocol ${PORT_FORWARD_PROTOCOL}`);
    return;
  }
  const accept = createHash("sha1")
    .update(key + WEBSOCKET_GUID)
    .digest("base64");
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: ${PORT_FORWARD_PROTOCOL}\r\n\r\n`,
  );
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16LE(port);
  const send = (channel: number, data: Buffer) =>
    socket.write(frame(OPCODE.binary, Buffer.concat([Buffer.from([channel]), data])));
  send(DATA_CHANNEL, portBytes);
  send(ERROR_CHANNEL, portBytes);
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    socket.end(frame(OPCODE.close, Buffer.from([0x03, 0xe8]))); // 1000: normal closure
  };
  const fail = (message: string) => {
    send(ERROR_CHANNEL, Buffer.from(message));
    close();
  };
  if (target === undefined) {
    fail(`error forwarding port ${port} to pod ${podName}: connection refused`);
    return;
  }
  const pod = connect(target, "127.0.0.1");
  pod.on("data", (chunk: Buffer) => send(DATA_CHANNEL, chunk));
  pod.on("end", close);
  pod.on("error", (err) => fail(`error forwarding port ${port} to pod ${podName}: ${err.message}`));
  socket.on("close", () => pod.destroy());
  socket.on("error", () => pod.destroy());
  readFrames(socket, head, (opcode, payload) => {
    if (opcode === OPCODE.binary && payload[0] === DATA_CHANNEL) pod.write(payload.subarray(1));
    else if (opcode === OPCODE.ping) socket.write(frame(OPCODE.pong, payload));
    else if (opcode === OPCODE.close) {
      pod.destroy();
      close();
    }
  });
}

/** Calls `onMessage` with each whole message (fragments joined) the client sends. */
function readFrames(socket: Duplex, head: Buffer, onMessage: (opcode: number, payload: Buffer) => void): void {
  let pending = head;
  let fragments: Buffer[] = [];
  let fragmentOpcode = 0;
  const consume = () => {
    for (;;) {
      const parsed = parseFrame(pending);
      if (!parsed) return;
      pending = pending.subarray(parsed.length);
      if (parsed.opcode >= OPCODE.close) {
        onMessage(parsed.opcode, parsed.payload);
        continue;
      }
      if (parsed.opcode !== OPCODE.continuation) fragmentOpcode = parsed.opcode;
      fragments.push(parsed.payload);
      if (parsed.fin) {
        onMessage(fragmentOpcode, Buffer.concat(fragments));
        fragments = [];
      }
    }
  };
  socket.on("data", (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    consume();
  });
  consume();
}

/** One frame at the start of `buffer`, unmasked, or undefined until all of it has arrived. */
function parseFrame(buffer: Buffer): { fin: boolean; opcode: number; payload: Buffer; length: number } | undefined {
  if (buffer.length < 2) return undefined;
  const fin = (buffer[0] & 0x80) !== 0;
  const opcode = buffer[0] & 0x0f;
  const masked = (buffer[1] & 0x80) !== 0;
  let size = buffer[1] & 0x7f;
  let offset = 2;
  if (size === 126) {
    if (buffer.length < 4) return undefined;
    size = buffer.readUInt16BE(2);
    offset = 4;
  } else if (size === 127) {
    if (buffer.length < 10) return undefined;
    size = Number(buffer.readBigUInt64BE(2));
    offset = 10;
  }
  const mask = masked ? buffer.subarray(offset, offset + 4) : undefined;
  if (mask) offset += 4;
  if (buffer.length < offset + size) return undefined;
  const payload = Buffer.from(buffer.subarray(offset, offset + size));
  if (mask) for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4];
  return { fin, opcode, payload, length: offset + size };
}

/** A final, unmasked frame. */
function frame(opcode: number, payload: Buffer): Buffer {
  const size = payload.length;
  const header =
    size < 126
      ? Buffer.from([0x80 | opcode, size])
      : size < 0x10000
        ? Buffer.from([0x80 | opcode, 126, size >> 8, size & 0xff])
        : Buffer.concat([Buffer.from([0x80 | opcode, 127]), bigEndian64(size)]);
  return Buffer.concat([header, payload]);
}

function bigEndian64(value: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(value));
  return bytes;
}
