// The agent's status server (Istio's pilot/cmd/pilot-agent/status/server.go, port 15020): readiness,
// merged Prometheus metrics, the application's rewritten Kubernetes probes, quit and drain for the
// pod's lifecycle, and the DNS name table. Sluice's agent runs no Envoy, so readiness and metrics
// are the agent's (and the application's) alone, as Istio's with DISABLE_ENVOY.
import { gzipSync } from "node:zlib";
import { toJsonString } from "@bufbuild/protobuf";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { nds } from "../api/index.ts";
import type { NodeType } from "../model/index.ts";
import { type IncomingProbe, type Prober, parseKubeAppProbers, probeTarget, runProbe } from "./app-probers.ts";
import type { ReadyProbe } from "./grpc-ready.ts";
import { httpGet } from "./http-get.ts";
import type { AgentMetrics } from "./metrics.ts";

export interface StatusServerOptions {
  /** Where to listen; "::" (every address, falling back to 0.0.0.0) when absent. */
  host?: string;
  port: number;
  nodeType: NodeType;
  /** The pod IP (INSTANCE_IP): where application probes go. */
  podIP: string;
  /** ISTIO_KUBE_APP_PROBERS. */
  kubeAppProbers?: string;
  /** ISTIO_PROMETHEUS_ANNOTATIONS: `{"scrape","port","path"}` from the pod's prometheus.io annotations. */
  prometheusAnnotations?: string;
  /** REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION: probe `localhost` instead of the pod IP. */
  legacyLocalhostProbes?: boolean;
  /** METRICS_LOCALHOST_ACCESS_ONLY. */
  metricsLocalhostOnly?: boolean;
  readyProbes: ReadyProbe[];
  metrics: AgentMetrics;
  /** /quitquitquit: stop the agent. */
  shutdown: (reason: string) => void;
  /** /drain: start draining. */
  drain: () => void;
  /** The DNS proxy's name table, when the agent runs one. */
  nameTable?: () => nds.NameTable | undefined;
  log: Logger;
}

export interface StatusServer {
  port: number;
  close(): Promise<void>;
}

interface ScrapeConfig {
  port: string;
  path: string;
}

/** Istio's text exposition format, and the OpenMetrics ones an application may answer with. */
const FMT_TEXT = "text/plain; version=0.0.4; charset=utf-8";
const FMT_OPENMETRICS_0_0_1 = "application/openmetrics-text; version=0.0.1; charset=utf-8";
const FMT_OPENMETRICS_1_0_0 = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/** The format of the merged metrics: the application's when it answered OpenMetrics, else text. */
function negotiateMetricsFormat(contentType: string): string {
  const [mediaType, ...params] = contentType.split(";").map((p) => p.trim());
  if (mediaType?.toLowerCase() !== "application/openmetrics-text") return FMT_TEXT;
  const version = params.find((p) => p.toLowerCase().startsWith("version="))?.slice(8) ?? "";
  if (version === "1.0.0") return FMT_OPENMETRICS_1_0_0;
  if (version === "0.0.1" || version === "") return FMT_OPENMETRICS_0_0_1;
  return FMT_TEXT;
}

/** The app scrape settings, or undefined when there is nothing to scrape; throws as Istio refuses to start. */
function scrapeConfig(options: StatusServerOptions): ScrapeConfig | undefined {
  // Port 15020 is exposed on gateways, so only sidecars merge application metrics.
  if (options.nodeType !== "sidecar" || options.prometheusAnnotations === undefined) return undefined;
  let prom: { scrape?: string; port?: string; path?: string };
  try {
    prom = JSON.parse(options.prometheusAnnotations) as typeof prom;
  } catch (err) {
    throw new Error(`failed to unmarshal ISTIO_PROMETHEUS_ANNOTATIONS: ${(err as Error).message}`);
  }
  if (prom.scrape === "false") return undefined;
  const config = { port: prom.port || "80", path: prom.path || "/metrics" };
  if (config.port === String(options.port)) {
    throw new Error(
      "invalid prometheus scrape configuration: application port is the same as agent port, which may lead to a recursive loop. " +
        `Ensure pod does not have prometheus.io/port=${options.port} label, or that injection is not happening multiple times`,
    );
  }
  return config;
}

/** Loopback sources only (Istio's IsRequestFromLocalhost: 127.0.0.0/8 and ::1, also IPv4-mapped). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.toLowerCase().startsWith("::ffff:") ? address.slice(7) : address;
  return v4.startsWith("127.") || address === "::1";
}

/** Go's http.Error: a plain-text message and a newline. */
function httpError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply
    .code(status)
    .header("content-type", "text/plain; charset=utf-8")
    .header("x-content-type-options", "nosniff")
    .send(`${message}\n`);
}

const fromLocalhost = (request: FastifyRequest) => isLoopback(request.socket.remoteAddress);

/** gzhttp's default: smaller bodies are not worth compressing. */
const GZIP_MIN_SIZE = 1024;

/** Whether Accept-Encoding admits gzip (a q of 0 refuses it). */
function acceptsGzip(acceptEncoding: string | undefined): boolean {
  for (const part of (acceptEncoding ?? "").split(",")) {
    const [coding, ...params] = part.split(";").map((p) => p.trim().toLowerCase());
    if (coding !== "gzip" && coding !== "*") continue;
    const q = params.find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

/** Istio wraps every status handler in gzhttp: gzip for clients that accept it, from 1 KiB up. */
function addGzip(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply, payload) => {
    reply.header("vary", "Accept-Encoding");
    if (!acceptsGzip(request.headers["accept-encoding"]) || reply.hasHeader("content-encoding")) return payload;
    const body = typeof payload === "string" ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : undefined;
    if (!body || body.length < GZIP_MIN_SIZE) return payload;
    reply.header("content-encoding", "gzip");
    reply.removeHeader("content-length");
    return gzipSync(body);
  });
}

export async function startStatusServer(options: StatusServerOptions): Promise<StatusServer> {
  const { log, metrics } = options;
  const prometheus = scrapeConfig(options);
  const probers: Map<string, Prober> = options.kubeAppProbers ? parseKubeAppProbers(options.kubeAppProbers) : new Map();
  const target = probeTarget(options.podIP, options.legacyLocalhostProbes ?? false);
  /** The port actually bound (the option may be 0). */
  let statusPort = options.port;

  const app: FastifyInstance = Fastify({ logger: false });
  // Every handler answers any method and body, as Go's mux does; none reads the body.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => done(null, body));
  app.setNotFoundHandler((_req, reply) => httpError(reply, 404, "404 page not found"));
  addGzip(app);

  let lastProbeSuccessful = false;
  app.all("/healthz/ready", async (_req, reply) => {
    try {
      for (const probe of options.readyProbes) probe();
      if (!lastProbeSuccessful) log.info("agent is ready");
      lastProbeSuccessful = true;
      return reply.code(200).send();
    } catch (err) {
      log.warn(`agent is NOT ready: ${(err as Error).message}`);
      lastProbeSuccessful = false;
      return reply.code(503).send();
    }
  });

  // Agent metrics then the application's: the application's may end in OpenMetrics' "# EOF".
  const handleStats = async (request: FastifyRequest, reply: FastifyReply) => {
    if (options.metricsLocalhostOnly && !fromLocalhost(request)) {
      return httpError(reply, 403, "Only requests from localhost are allowed");
    }
    metrics.scrapes.inc();
    let format = FMT_TEXT;
    let application: Buffer | undefined;
    if (prometheus) {
      let contentType = "";
      try {
        const scraped = await scrape(`http://localhost:${prometheus.port}${prometheus.path}`, request);
        application = scraped.body;
        contentType = scraped.contentType;
      } catch (err) {
        log.error(`failed scraping application metrics: ${(err as Error).message}`);
        metrics.scrapeFailures.inc({ type: "application" });
      }
      format = negotiateMetricsFormat(contentType);
    }
    let agent = "";
    try {
      agent = await metrics.registry.metrics();
    } catch (err) {
      log.error(`failed scraping and writing agent metrics: ${(err as Error).message}`);
      metrics.scrapeFailures.inc({ type: "agent" });
    }
    reply.header("content-type", format);
    return reply.send(application ? Buffer.concat([Buffer.from(agent), application]) : agent);
  };
  app.all("/metrics", handleStats);
  app.all("/stats/prometheus", handleStats);

  const lifecycle = (what: string, action: () => void) => async (request: FastifyRequest, reply: FastifyReply) => {
    if (!fromLocalhost(request)) return httpError(reply, 403, "Only requests from localhost are allowed");
    if (request.method !== "POST") return httpError(reply, 405, "Method Not Allowed");
    await reply.code(200).send("OK");
    log.info(`handling ${what}`);
    action();
    return reply;
  };
  app.all(
    "/quitquitquit",
    lifecycle("/quitquitquit, notifying the agent to exit", () => options.shutdown("/quitquitquit called")),
  );
  app.all("/drain", lifecycle("/drain, starting drain", options.drain));

  const handleAppProbe = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0];
    const prober = probers.get(path);
    if (!prober) {
      log.error(`Prober does not exists url ${path}`);
      return reply.code(400).send(`app prober config does not exists for ${path}`);
    }
    const incoming: IncomingProbe = { host: request.headers.host, headers: request.headers, statusPort };
    const result = await runProbe(prober, target, incoming);
    // As text: Go sniffs a probe body's type, and probe bodies are text.
    return reply.code(result.status).send(result.body?.toString() ?? "");
  };
  app.all("/app-health/*", handleAppProbe);
  app.all("/app-lifecycle/*", handleAppProbe);

  app.all("/debug/ndsz", async (request, reply) => {
    if (!fromLocalhost(request)) return httpError(reply, 403, "Only requests from localhost are allowed");
    const table = options.nameTable?.();
    if (!table) return reply.code(404).send("{}");
    // A Buffer, so the content type stays as Go writes it (no charset).
    return reply.header("content-type", "application/json").send(Buffer.from(toJsonString(nds.NameTableSchema, table)));
  });

  statusPort = await listen(app, options.host, options.port);
  log.info({ port: statusPort }, "status server listening");
  return { port: statusPort, close: () => app.close() };
}

/** Scrapes metrics as Prometheus would, passing its Accept, User-Agent and timeout on. */
async function scrape(url: string, request: FastifyRequest): Promise<{ body: Buffer; contentType: string }> {
  const headers: Record<string, string> = {};
  for (const name of ["accept", "user-agent", "x-prometheus-scrape-timeout-seconds"]) {
    const value = request.headers[name];
    if (typeof value === "string" && value !== "") headers[name] = value;
  }
  const timeoutSeconds = Number.parseFloat(headers["x-prometheus-scrape-timeout-seconds"] ?? "");
  const res = await httpGet(new URL(url), {
    headers,
    timeoutMs: Number.isFinite(timeoutSeconds) ? timeoutSeconds * 1000 : undefined,
  });
  if (res.status !== 200) throw new Error(`error scraping ${url}, status code: ${res.status}`);
  return { body: res.body, contentType: res.headers["content-type"] ?? "" };
}

/** Listens on `host`, or on every address (IPv6 and IPv4, or IPv4 alone where IPv6 is off). */
async function listen(app: FastifyInstance, host: string | undefined, port: number): Promise<number> {
  if (host !== undefined) {
    await app.listen({ host, port });
  } else {
    try {
      await app.listen({ host: "::", port });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAFNOSUPPORT") throw err;
      await app.listen({ host: "0.0.0.0", port });
    }
  }
  const bound = app.server.address();
  if (bound === null || typeof bound === "string") throw new Error("status server has no TCP address");
  return bound.port;
}
