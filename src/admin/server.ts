// The monitoring and debug HTTP servers (Istio's initServers, initIstiodAdminServer and
// initMonitor, pilot/pkg/bootstrap): --monitoringAddr serves /metrics, /version and the debug
// endpoints; --httpAddr serves /ready and the debug endpoints. Without a monitoring address
// everything is on the HTTP address, as Istio then shares one mux.
import type { AddressInfo } from "node:net";
import fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { compareStrings } from "../model/index.ts";
import { verifiedPeerCertificate } from "../security/authn/index.ts";
import { type Authenticator, type DebugAuthOptions, DebugEndpoints } from "../xds/index.ts";
import { authorizeDebugCall, isLoopback } from "./auth.ts";
import { type DebugSources, registerDebugEndpoints } from "./debug.ts";
import { registerMonitoringMetrics } from "./monitoring.ts";
import { commandLine, cpuProfile, heapSnapshot, PROFILING_ENDPOINTS, profileSeconds } from "./profiling.ts";

export interface AdminServerOptions {
  /** Istio's --monitoringAddr (":15014"); empty: its routes go to httpAddr. */
  monitoringAddr?: string;
  /** Istio's --httpAddr (":8080"); empty: no HTTP server (and no /ready). */
  httpAddr?: string;
  /** /ready answers 200 only when every probe is true (Istio's readiness probes: discovery, ...). */
  readiness: Readonly<Record<string, () => boolean>>;
  /** The process's registry; /metrics serves it, with process metrics, uptime and pilot_info added. */
  metrics: Registry;
  /** /version text and the pilot_info label. */
  version: string;
  /** The chain non-loopback debug callers must pass (bearer tokens, client certificates, XFCC). */
  authenticators: readonly Authenticator[];
  debugAuth: DebugAuthOptions;
  /** Istio's --profile (default true): the profiling endpoints under /debug/pprof/. */
  profiling?: boolean;
  /** ENABLE_DEBUG_ON_HTTP (default true): without it no /debug routes at all. */
  debugOnHttp?: boolean;
  /** METRICS_LOCALHOST_ACCESS_ONLY: /metrics answers 403 to other callers. */
  metricsLocalhostOnly?: boolean;
  /** Which caller IPs count as local (pass unchecked); default Go's IsLoopback (127.0.0.0/8, ::1). */
  isLocal?: (ip: string) => boolean;
  log: Logger;
}

export interface AdminServer {
  monitoringPort?: number;
  httpPort?: number;
  /**
   * Serves the discovery's debug endpoints from now on, after registering Sluice's into them (so
   * xDS serves them too). Until then /debug/* answers 404: the server can start (and /ready answer
   * 503) before the discovery service exists, as istiod's does.
   */
  attachDebug(endpoints: DebugEndpoints, sources: DebugSources): void;
  stop(): Promise<void>;
}

/** The debug endpoints the routes serve; replaced by attachDebug. */
interface DebugState {
  endpoints: DebugEndpoints;
}

const TEXT = "text/plain; charset=utf-8";

/** Go's "host:port" listen address; an empty host (":8080") means every interface. */
export function parseListenAddress(addr: string): { host: string; port: number } {
  const colon = addr.lastIndexOf(":");
  const port = Number(addr.slice(colon + 1));
  if (colon < 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad listen address ${addr}`);
  const host = addr.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  return { host: host === "" ? "::" : host, port };
}

export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  registerMonitoringMetrics(options.metrics, options.version);
  const servers: FastifyInstance[] = [];
  const debug: DebugState = { endpoints: new DebugEndpoints() };
  const result: AdminServer = {
    attachDebug(endpoints, sources) {
      registerDebugEndpoints(endpoints, sources);
      debug.endpoints = endpoints;
    },
    async stop() {
      await Promise.all(servers.splice(0).map((s) => s.close()));
    },
  };
  try {
    const shared = !options.monitoringAddr;
    if (options.monitoringAddr) {
      const app = newApp(options);
      addMonitoringRoutes(app, options);
      addDebugRoutes(app, options, debug);
      servers.push(app);
      result.monitoringPort = await listen(app, "--monitoringAddr", options.monitoringAddr);
    }
    if (options.httpAddr) {
      const app = newApp(options);
      if (shared) addMonitoringRoutes(app, options);
      addReadyRoute(app, options);
      addDebugRoutes(app, options, debug);
      servers.push(app);
      result.httpPort = await listen(app, "--httpAddr", options.httpAddr);
    }
  } catch (err) {
    await result.stop();
    throw err;
  }
  return result;
}

function newApp(options: AdminServerOptions): FastifyInstance {
  // No body limit matters (every route is a read); pino logging stays with the caller's logger.
  const app = fastify({ logger: false });
  app.setNotFoundHandler((_req, reply) => reply.code(404).type(TEXT).send("404 page not found\n"));
  app.setErrorHandler((err, req, reply) => {
    const message = err instanceof Error ? err.message : String(err);
    options.log.error({ url: req.url, err: message }, "admin: request failed");
    reply.code(500).type(TEXT).send(message);
  });
  return app;
}

async function listen(app: FastifyInstance, flag: string, addr: string): Promise<number> {
  const { host, port } = parseListenAddress(addr);
  try {
    await app.listen({ host, port });
  } catch (err) {
    throw new Error(`admin: cannot listen on ${flag} ${addr}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return (app.server.address() as AddressInfo).port;
}

function addMonitoringRoutes(app: FastifyInstance, options: AdminServerOptions): void {
  app.get("/metrics", async (req, reply) => {
    if (options.metricsLocalhostOnly && !(options.isLocal ?? isLoopback)(req.socket.remoteAddress ?? "")) {
      return reply.code(403).send();
    }
    const body = await options.metrics.metrics();
    return reply.type(options.metrics.contentType).send(body);
  });
  app.get("/version", async (_req, reply) => reply.type(TEXT).send(options.version));
}

function addReadyRoute(app: FastifyInstance, options: AdminServerOptions): void {
  app.get("/ready", async (_req, reply) => {
    for (const [name, ready] of Object.entries(options.readiness)) {
      if (!ready()) {
        options.log.warn(`${name} is not ready`);
        return reply.code(503).send();
      }
    }
    return reply.code(200).send();
  });
}

function addDebugRoutes(app: FastifyInstance, options: AdminServerOptions, debug: DebugState): void {
  if (!(options.debugOnHttp ?? true)) return;
  const profiling = options.profiling ?? true;
  // The index is the one debug page Istio serves without the auth check.
  app.get("/debug", async (_req, reply) =>
    reply.type("text/html; charset=utf-8").send(debugIndex(debug.endpoints, profiling)),
  );
  app.all("/debug/*", async (req, reply) => {
    const name = (req.params as Record<string, string>)["*"];
    const isProfile = profiling && name.startsWith("pprof/");
    if (!isProfile && !debug.endpoints.has(name)) return reply.code(404).type(TEXT).send("404 page not found\n");
    const access = await authorizeDebugCall(
      {
        remoteIp: req.socket.remoteAddress ?? "",
        remotePort: req.socket.remotePort ?? 0,
        endpoint: name,
        header: (header) => headerValue(req, header),
        verifiedPeerCertificate: verifiedPeerCertificate(req.raw),
      },
      options.authenticators,
      options.debugAuth,
      options.isLocal,
    );
    if (!access.allowed) {
      // Details only in the log, as Istio (the xDS server says no more either).
      options.log.warn({ url: req.url, status: access.status, reason: access.reason }, "admin: debug request refused");
      return reply.code(access.status).send();
    }
    const query = new URL(req.url, "http://admin").searchParams;
    if (isProfile) return serveProfile(name, query, reply);
    const res = debug.endpoints.respond(name, { query, callerNamespace: access.callerNamespace });
    return reply.code(res.status).type(res.contentType).send(Buffer.from(res.body));
  });
}

function headerValue(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

async function serveProfile(name: string, query: URLSearchParams, reply: FastifyReply): Promise<FastifyReply> {
  switch (name) {
    case "pprof/":
      return reply.type(TEXT).send(
        PROFILING_ENDPOINTS.map((p) => `/debug/${p.path}\t${p.help}`)
          .join("\n")
          .concat("\n"),
      );
    case "pprof/cmdline":
      return reply.type(TEXT).send(commandLine());
    case "pprof/profile": {
      const profile = await cpuProfile(profileSeconds(query));
      if (profile instanceof Error) return reply.code(500).type(TEXT).send(profile.message);
      return reply
        .type("application/json")
        .header("content-disposition", 'attachment; filename="sluiced.cpuprofile"')
        .send(profile);
    }
    case "pprof/heap":
      return reply
        .type("application/octet-stream")
        .header("content-disposition", 'attachment; filename="sluiced.heapsnapshot"')
        .send(heapSnapshot());
    default:
      return reply.code(404).type(TEXT).send("Unknown profile\n");
  }
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Istio's "Pilot Debug Console" page: every debug path with its help. */
function debugIndex(endpoints: DebugEndpoints, profiling: boolean): string {
  const entries = [...endpoints.listing(), ...(profiling ? PROFILING_ENDPOINTS : [])]
    .map((e) => ({ path: `/debug/${e.path}`, help: e.help }))
    .sort((a, b) => compareStrings(a.path, b.path));
  const rows = entries
    .map(
      (e) =>
        `\t<tr>\n\t<td><a href='${escapeHtml(e.path)}'>${escapeHtml(e.path)}</a></td><td>${escapeHtml(e.help)}</td>\n\t</tr>`,
    )
    .join("\n");
  return `<html>
<head>
<title>Pilot Debug Console</title>
</head>
<body>
<br/>
<p>Add <b>?pretty</b> to an endpoint's address for indented JSON (<b>/debug/configz?pretty</b>).</p>
<table id="endpoints">
<tr><th>Endpoint</th><th>Description</th></tr>
${rows}
</table>
<br/>
</body>
</html>
`;
}
