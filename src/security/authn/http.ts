// The chain over HTTP requests (Istio's AuthContext{Request}): what the admin server's debug
// endpoints hand to the same authenticators as the gRPC ports.
import type { IncomingMessage } from "node:http";
import { isIPv6 } from "node:net";
import { TLSSocket } from "node:tls";
import type { AuthContext } from "./authenticator.ts";

/** An AuthContext of a Node (or fastify's `req.raw`) HTTP request: headers, the verified client certificate and the peer address. */
export function httpAuthContext(req: IncomingMessage): AuthContext {
  const socket = req.socket;
  const ip = socket.remoteAddress ?? "";
  return {
    transport: "http",
    verifiedPeerCertificate: verifiedPeerCertificate(req),
    header: (name) => {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    },
    remoteAddress: ip === "" ? "" : isIPv6(ip) ? `[${ip}]:${socket.remotePort}` : `${ip}:${socket.remotePort}`,
  };
}

/** The client certificate (DER) when the request came over TLS and the certificate verified (Go's VerifiedChains). */
export function verifiedPeerCertificate(req: IncomingMessage): Uint8Array | undefined {
  const socket = req.socket;
  if (!(socket instanceof TLSSocket) || !socket.authorized) return undefined;
  const raw = socket.getPeerCertificate().raw;
  return raw ? new Uint8Array(raw) : undefined;
}
