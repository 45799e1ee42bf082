// Port numbers, port names, protocols and subset names.
import type { Findings } from "../findings.ts";
import { isDns1123Label } from "./hosts.ts";
import { report } from "./report.ts";

export function portError(port: number): string | undefined {
  return Number.isInteger(port) && port >= 1 && port <= 65535
    ? undefined
    : `port number ${port} must be in the range 1..65535`;
}

export function validatePort(port: number, out: Findings): boolean {
  return report(out, portError(port));
}

export function validatePortName(name: string, out: Findings): boolean {
  return report(out, isDns1123Label(name) ? undefined : `invalid port name: ${name}`);
}

/** Istio's protocol names, canonical spelling; parsing is case-insensitive. */
export type Protocol =
  | "TCP"
  | "UDP"
  | "GRPC"
  | "GRPC-Web"
  | "HTTP"
  | "HTTP_PROXY"
  | "HTTP2"
  | "HTTPS"
  | "TLS"
  | "Mongo"
  | "Redis"
  | "MySQL";

const PROTOCOLS: ReadonlyMap<string, Protocol> = new Map(
  (
    [
      "TCP",
      "UDP",
      "GRPC",
      "GRPC-Web",
      "HTTP",
      "HTTP_PROXY",
      "HTTP2",
      "HTTPS",
      "TLS",
      "Mongo",
      "Redis",
      "MySQL",
    ] as const
  ).map((p) => [p.toLowerCase(), p]),
);

/** The protocol a port name/protocol string denotes, or undefined when empty or unknown. */
export function parseProtocol(s: string): Protocol | undefined {
  return PROTOCOLS.get(s.toLowerCase());
}

/** Istio's ValidateProtocol: empty means "sniff"; otherwise one of the known protocols. */
export function validateProtocol(protocol: string, out: Findings): boolean {
  return report(out, protocol === "" || parseProtocol(protocol) ? undefined : `unsupported protocol: ${protocol}`);
}

export function isHttpProtocol(s: string): boolean {
  const p = parseProtocol(s);
  return p === "HTTP" || p === "HTTP2" || p === "HTTP_PROXY" || p === "GRPC" || p === "GRPC-Web";
}

export function isTlsProtocol(s: string): boolean {
  const p = parseProtocol(s);
  return p === "HTTPS" || p === "TLS";
}

/** Protocols carried over TCP that Istio cannot route by HTTP attributes. */
export function isTcpBasedProtocol(s: string): boolean {
  const p = parseProtocol(s);
  return p === "TCP" || p === "HTTPS" || p === "TLS" || p === "Mongo" || p === "Redis" || p === "MySQL";
}

export function validateSubsetName(name: string, out: Findings): boolean {
  if (name === "") return report(out, "subset name cannot be empty");
  return report(out, isDns1123Label(name) ? undefined : `subset name is invalid: ${name}`);
}
