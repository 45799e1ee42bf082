// Pod port-forward for tests: the WebSocket protocol `v4.channel.k8s.io` that kubectl and
// client-node's PortForward speak. Every message starts with its channel byte: channel 0 carries the
// port's data both ways, channel 1 the server's errors, and each channel's first server message is
// the port number (2 bytes, little-endian). The pod's end is a 127.0.0.1 port the test registered.
import type { IncomingMessage } from "node:http";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { type RawData, type WebSocket, WebSocketServer } from "ws";

export const PORT_FORWARD_PROTOCOL = "v4.channel.k8s.io";
const DATA_CHANNEL = 0;
const ERROR_CHANNEL = 1;
const NORMAL_CLOSURE = 1000;

// Completes the handshakes the API server's 'upgrade' handler accepts; the server tracks the sockets.
const webSockets = new WebSocketServer({
  noServer: true,
  clientTracking: false,
  handleProtocols: (protocols) => (protocols.has(PORT_FORWARD_PROTOCOL) ? PORT_FORWARD_PROTOCOL : false),
});

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
  // ws accepts a handshake without the subprotocol; the API server refuses it.
  const protocols = (req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim());
  if (!protocols.includes(PORT_FORWARD_PROTOCOL)) {
    rejectUpgrade(socket, 400, `a port-forward needs a WebSocket with protocol ${PORT_FORWARD_PROTOCOL}`);
    return;
  }
  webSockets.handleUpgrade(req, socket, head, (webSocket) => bridge(webSocket, port, podName, target));
}

function bridge(webSocket: WebSocket, port: number, podName: string, target: number | undefined): void {
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16LE(port);
  const send = (channel: number, data: Buffer) => webSocket.send(Buffer.concat([Buffer.from([channel]), data]));
  send(DATA_CHANNEL, portBytes);
  send(ERROR_CHANNEL, portBytes);
  const fail = (message: string) => {
    send(ERROR_CHANNEL, Buffer.from(message));
    webSocket.close(NORMAL_CLOSURE);
  };
  const pod = target === undefined ? undefined : connect(target, "127.0.0.1");
  webSocket.on("close", () => pod?.destroy());
  webSocket.on("error", () => pod?.destroy());
  if (!pod) {
    fail(`error forwarding port ${port} to pod ${podName}: connection refused`);
    return;
  }
  pod.on("data", (chunk: Buffer) => send(DATA_CHANNEL, chunk));
  pod.on("end", () => webSocket.close(NORMAL_CLOSURE));
  pod.on("error", (err) => fail(`error forwarding port ${port} to pod ${podName}: ${err.message}`));
  webSocket.on("message", (data: RawData, isBinary: boolean) => {
    // A Buffer: the server's binaryType is ws's default, "nodebuffer".
    const message = data as Buffer;
    if (isBinary && message[0] === DATA_CHANNEL) pod.write(message.subarray(1));
  });
}
