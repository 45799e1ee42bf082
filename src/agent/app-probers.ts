// Kubernetes probes of the application, rewritten by the injector to the agent's
// `/app-health/<container>/{readyz,livez,startupz}` (and `/app-lifecycle/.../{prestopz,poststartz}`)
// and passed as ISTIO_KUBE_APP_PROBERS: the agent runs them against the pod IP as kubelet would
// (pilot/cmd/pilot-agent/status/server.go handleAppProbe*).
import { isIP, connect as tcpConnect } from "node:net";
import { Client, credentials } from "@grpc/grpc-js";
import { httpGet } from "./http-get.ts";

export interface HttpGetAction {
  path?: string;
  port: number | string;
  host?: string;
  scheme?: string;
}

export interface Prober {
  httpGet?: HttpGetAction;
  tcpSocket?: { port: number | string; host?: string };
  grpc?: { port: number; service?: string };
  timeoutSeconds?: number;
}

const APP_PROBER_PATTERN = /^\/(app-health|app-lifecycle)\/[^/]+\/(livez|readyz|startupz|prestopz|poststartz)$/;
/** Kubernetes returns at most this much of a probe's body. */
const MAX_BODY_BYTES = 10 * 1024;
/** Kubelet gives up after this many redirects. */
const MAX_REDIRECTS = 10;

/** Parses ISTIO_KUBE_APP_PROBERS; throws with Istio's messages for what Istio refuses. */
export function parseKubeAppProbers(json: string): Map<string, Prober> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    throw new Error(`failed to decode app prober err = ${(err as Error).message}, json string = ${json}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error(`failed to decode app prober err = not a JSON object, json string = ${json}`);
  }
  const probers = new Map<string, Prober>();
  for (const [path, prober] of Object.entries(parsed as Record<string, Prober>)) {
    if (!APP_PROBER_PATTERN.test(path)) {
      throw new Error(`invalid path, must be in form of regex pattern ${APP_PROBER_PATTERN.source}`);
    }
    const kinds = [prober.httpGet, prober.tcpSocket, prober.grpc].filter((k) => k != null).length;
    if (kinds !== 1) throw new Error("invalid prober type, must be one of type httpGet, tcpSocket or gRPC");
    const port = prober.httpGet?.port ?? prober.tcpSocket?.port;
    if (port !== undefined && typeof port !== "number") {
      throw new Error(`invalid prober config for ${path}, the port must be int type`);
    }
    probers.set(path, prober);
  }
  return probers;
}

/** How to reach the application: its pod IP, from the source address Istio's iptables rules let through. */
export interface ProbeTarget {
  destination: string;
  localAddress: string;
  /** The address family of the source, so `localhost` resolves to the matching loopback (as Go's dialer). */
  family: 4 | 6;
}

/** The target for a pod IP: 127.0.0.6 (or ::6) as source, so the probe is not captured again. */
export function probeTarget(podIP: string, legacyLocalhost: boolean): ProbeTarget {
  const ipv6 = isIP(podIP) === 6 && !podIP.toLowerCase().startsWith("fe80:");
  return {
    destination: legacyLocalhost ? "localhost" : podIP,
    localAddress: ipv6 ? "::6" : "127.0.0.6",
    family: ipv6 ? 6 : 4,
  };
}

export interface ProbeResult {
  status: number;
  body?: Buffer;
}

const hostPort = (host: string, port: number) => (isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`);
const timeoutMs = (prober: Prober) => (prober.timeoutSeconds ?? 0) * 1000;

/** Headers of the incoming probe that are about its own connection, not for the application. */
const CONNECTION_HEADERS = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive"]);

export interface IncomingProbe {
  /** The Host the kubelet used. */
  host: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** The port the status server listens on, rewritten to the application's port in Host. */
  statusPort: number;
}

/** An httpGet probe: the application's status and body; redirects count as success, as kubelet. */
async function probeHttp(prober: Prober, action: HttpGetAction, target: ProbeTarget, incoming: IncomingProbe) {
  const port = action.port as number;
  const path = (action.path ?? "").startsWith("/") ? (action.path ?? "") : `/${action.path ?? ""}`;
  const scheme = action.scheme === "HTTPS" ? "https" : "http";
  let url = new URL(`${scheme}://${hostPort(target.destination, port)}${path}`);

  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined && !CONNECTION_HEADERS.has(name)) headers[name] = value;
  }
  if (incoming.host !== undefined) {
    // A Host naming the status port is the kubelet's default: point it at the application's port.
    const m = /^(.*):(\d+)$/.exec(incoming.host);
    headers.host = m && Number(m[2]) === incoming.statusPort ? `${m[1]}:${port}` : incoming.host;
  }

  const originalHost = url.hostname;
  for (let redirects = 0; ; redirects++) {
    const res = await httpGet(url, {
      headers,
      timeoutMs: timeoutMs(prober),
      localAddress: target.localAddress,
      family: target.family,
    });
    if (res.status < 300 || res.status >= 400)
      return { status: res.status, body: res.body.subarray(0, MAX_BODY_BYTES) };
    const location = res.headers.location;
    // Kubelet follows redirects on the same host only; any other redirect is a success.
    if (!location) return { status: 200 };
    const next = new URL(location, url);
    if (next.hostname !== originalHost) return { status: 200 };
    if (redirects + 1 >= MAX_REDIRECTS) throw new Error("stopped after 10 redirects");
    url = next;
  }
}

function probeTcp(prober: Prober, port: number, target: ProbeTarget): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = tcpConnect({
      host: target.destination,
      port,
      localAddress: target.localAddress,
      family: target.family,
    });
    const done = (status: number) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ status });
    };
    const timer = timeoutMs(prober) ? setTimeout(() => done(500), timeoutMs(prober)) : undefined;
    socket.once("connect", () => done(200));
    socket.once("error", () => done(500));
  });
}

const HEALTH_CHECK = "/grpc.health.v1.Health/Check";
const SERVING = 1;

/** grpc.health.v1.HealthCheckRequest: field 1, the service name. */
function encodeHealthCheckRequest(service: string): Buffer {
  const name = Buffer.from(service);
  if (name.length === 0) return Buffer.alloc(0);
  if (name.length > 127) throw new Error("gRPC health service name too long");
  return Buffer.concat([Buffer.from([0x0a, name.length]), name]);
}

/** grpc.health.v1.HealthCheckResponse: field 1, the status enum (0 when absent). */
function decodeHealthStatus(message: Buffer): number {
  return message.length >= 2 && message[0] === 0x08 ? message[1] : 0;
}

/** A grpc probe: the standard health service must answer SERVING within the probe's timeout. */
function probeGrpc(
  prober: Prober,
  action: { port: number; service?: string },
  target: ProbeTarget,
  userAgent: string | undefined,
): Promise<ProbeResult> {
  // As Istio, the timeout bounds connecting and the call together (0 means an expired deadline).
  const deadline = Date.now() + timeoutMs(prober);
  const client = new Client(
    hostPort(target.destination, action.port),
    credentials.createInsecure(),
    userAgent ? { "grpc.primary_user_agent": userAgent } : {},
  );
  return new Promise<ProbeResult>((resolve) => {
    client.waitForReady(deadline, (connectError) => {
      if (connectError) return resolve({ status: 500 });
      client.makeUnaryRequest(
        HEALTH_CHECK,
        (b: Buffer) => b,
        (b: Buffer) => b,
        encodeHealthCheckRequest(action.service ?? ""),
        { deadline },
        (err, response) => {
          resolve({ status: !err && response && decodeHealthStatus(response) === SERVING ? 200 : 500 });
        },
      );
    });
  }).finally(() => client.close());
}

/** Runs one prober as kubelet would and returns what the agent answers; errors become 500. */
export async function runProbe(prober: Prober, target: ProbeTarget, incoming: IncomingProbe): Promise<ProbeResult> {
  try {
    if (prober.httpGet) return await probeHttp(prober, prober.httpGet, target, incoming);
    if (prober.tcpSocket) return await probeTcp(prober, prober.tcpSocket.port as number, target);
    if (prober.grpc) {
      const ua = incoming.headers["user-agent"];
      return await probeGrpc(prober, prober.grpc, target, typeof ua === "string" ? ua : undefined);
    }
  } catch {
    return { status: 500 };
  }
  return { status: 500 };
}
