import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request, type Server } from "node:http";
import { createServer as createTcpServer } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { gunzipSync } from "node:zlib";
import { create } from "@bufbuild/protobuf";
import {
  Server as GrpcServer,
  status as grpcStatus,
  ServerCredentials,
  type ServerUnaryCall,
  type sendUnaryData,
} from "@grpc/grpc-js";
import { pino } from "pino";
import { rawUnaryMethod } from "../../test/proxyless/echo.ts";
import { nds } from "../api/index.ts";
import { parseKubeAppProbers } from "./app-probers.ts";
import { grpcBootstrap, writeGrpcBootstrap } from "./grpc-bootstrap.ts";
import { grpcReadyProbe } from "./grpc-ready.ts";
import { AgentMetrics } from "./metrics.ts";
import { isLoopback, type StatusServer, type StatusServerOptions, startStatusServer } from "./status-server.ts";

const log = pino({ level: "silent" });

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function call(
  url: string,
  options: { method?: string; headers?: Record<string, string>; localAddress?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: options.method ?? "GET",
      headers: options.headers,
      localAddress: options.localAddress,
      agent: false,
    });
    req.on("error", reject);
    req.on("response", (res) => {
      let body = "";
      res.setEncoding(res.headers["content-encoding"] === "gzip" ? "latin1" : "utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.end();
  });
}

/** An HTTP server on 127.0.0.1 that records requests and answers with `handler`. */
async function startApp(
  handler: (req: IncomingMessage) => { status: number; body?: string; headers?: Record<string, string> },
) {
  const seen: { path: string; headers: IncomingHttpHeaders; remote: string | undefined }[] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? "", headers: req.headers, remote: req.socket.remoteAddress });
    const r = handler(req);
    res.writeHead(r.status, r.headers);
    res.end(r.body ?? "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  assert.ok(address && typeof address === "object");
  return { port: address.port, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const closers: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function startStatus(overrides: Partial<StatusServerOptions> = {}) {
  const calls: string[] = [];
  const server: StatusServer = await startStatusServer({
    host: "127.0.0.1",
    port: 0,
    nodeType: "sidecar",
    podIP: "127.0.0.1",
    readyProbes: [],
    metrics: new AgentMetrics(),
    shutdown: (reason) => calls.push(`shutdown: ${reason}`),
    drain: () => calls.push("drain"),
    log,
    ...overrides,
  });
  closers.push(() => server.close());
  return { server, calls, url: (path: string) => `http://${overrides.host ?? "127.0.0.1"}:${server.port}${path}` };
}

/** A non-loopback IPv4 address of this host, to call the status server from "outside". */
function externalIPv4(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  return undefined;
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "status-server-"));
  closers.push(() => rm(dir, { recursive: true }));
});

test("/healthz/ready: 503 until the gRPC bootstrap is written and the certificates it names exist", async () => {
  const bootstrapPath = join(dir, "ready", "grpc-bootstrap.json");
  const certDir = join(dir, "ready", "certs");
  const { url } = await startStatus({ readyProbes: [grpcReadyProbe(bootstrapPath)] });

  assert.equal((await call(url("/healthz/ready"))).status, 503);
  writeGrpcBootstrap(
    bootstrapPath,
    grpcBootstrap({ nodeId: "n", metadata: {}, locality: {}, discoveryAddress: "a:1", certDir }),
  );
  assert.equal((await call(url("/healthz/ready"))).status, 503, "certificates missing");
  await mkdir(certDir);
  await writeFile(join(certDir, "cert-chain.pem"), "c");
  await writeFile(join(certDir, "key.pem"), "k");
  assert.equal((await call(url("/healthz/ready"))).status, 503, "root certificate missing");
  await writeFile(join(certDir, "root-cert.pem"), "r");
  const ready = await call(url("/healthz/ready"));
  assert.equal(ready.status, 200);
  assert.equal(ready.body, "");
});

test("/healthz/ready: a bootstrap without certificate provider is ready as soon as it is written", async () => {
  const bootstrapPath = join(dir, "plain.json");
  writeGrpcBootstrap(
    bootstrapPath,
    grpcBootstrap({ nodeId: "n", metadata: {}, locality: {}, discoveryAddress: "a:1" }),
  );
  const { url } = await startStatus({ readyProbes: [grpcReadyProbe(bootstrapPath)] });
  assert.equal((await call(url("/healthz/ready"))).status, 200);
});

test("/stats/prometheus and /metrics: agent metrics then the application's, with Prometheus' headers passed on", async () => {
  const app = await startApp(() => ({
    status: 200,
    body: "app_requests_total 7\n",
    headers: { "content-type": "text/plain; version=0.0.4" },
  }));
  closers.push(app.close);
  const { url } = await startStatus({
    prometheusAnnotations: JSON.stringify({ scrape: "true", port: String(app.port), path: "/custom" }),
  });
  for (const path of ["/stats/prometheus", "/metrics"]) {
    const res = await call(url(path), { headers: { accept: "text/plain", "user-agent": "Prometheus/3" } });
    assert.equal(res.status, 200);
    assert.equal(res.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    assert.match(res.body, /^# HELP istio_agent_/);
    assert.match(res.body, /istio_agent_process_cpu_seconds_total/);
    assert.ok(res.body.endsWith("app_requests_total 7\n"), "application metrics come last");
  }
  assert.equal(app.seen[0].path, "/custom");
  assert.equal(app.seen[0].headers["user-agent"], "Prometheus/3");
  assert.equal(app.seen[0].headers.accept, "text/plain");
  const counted = await call(url("/metrics"));
  assert.match(counted.body, /istio_agent_scrapes_total 3/);
});

test("metrics: an OpenMetrics application sets the format; a failing one leaves the agent's and is counted", async () => {
  let failing = false;
  const app = await startApp(() =>
    failing
      ? { status: 500 }
      : {
          status: 200,
          body: "app_up 1\n# EOF\n",
          headers: { "content-type": "application/openmetrics-text; version=1.0.0; charset=utf-8" },
        },
  );
  closers.push(app.close);
  const { url } = await startStatus({ prometheusAnnotations: JSON.stringify({ port: String(app.port) }) });
  const open = await call(url("/stats/prometheus"));
  assert.equal(open.headers["content-type"], "application/openmetrics-text; version=1.0.0; charset=utf-8");
  assert.ok(open.body.endsWith("# EOF\n"));
  assert.equal(app.seen[0].path, "/metrics", "the default path");

  failing = true;
  const failed = await call(url("/stats/prometheus"));
  assert.equal(failed.status, 200);
  assert.equal(failed.headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
  assert.match(failed.body, /istio_agent_scrape_failures_total\{type="application"\} 1/);
  assert.doesNotMatch(failed.body, /app_up/);
});

test("metrics: scrape=false, and gateways, scrape nothing; the agent's own port is refused as a loop", async () => {
  const app = await startApp(() => ({ status: 200, body: "app_up 1\n" }));
  closers.push(app.close);
  const annotations = JSON.stringify({ scrape: "false", port: String(app.port) });
  const off = await startStatus({ prometheusAnnotations: annotations });
  assert.doesNotMatch((await call(off.url("/metrics"))).body, /app_up/);
  const gateway = await startStatus({
    nodeType: "router",
    prometheusAnnotations: JSON.stringify({ port: String(app.port) }),
  });
  assert.doesNotMatch((await call(gateway.url("/metrics"))).body, /app_up/);
  assert.equal(app.seen.length, 0);

  await assert.rejects(
    startStatus({ port: 15020, prometheusAnnotations: JSON.stringify({ port: "15020" }) }),
    /application port is the same as agent port, which may lead to a recursive loop. Ensure pod does not have prometheus.io\/port=15020 label/,
  );
  await assert.rejects(startStatus({ prometheusAnnotations: "{" }), /failed to unmarshal ISTIO_PROMETHEUS_ANNOTATIONS/);
});

test("/app-health httpGet: the application's status and body, from 127.0.0.6, with Host and headers passed on", async () => {
  const app = await startApp((req) =>
    req.url === "/ready" ? { status: 200, body: "fine" } : { status: 503, body: "starting" },
  );
  closers.push(app.close);
  const { url, server } = await startStatus({
    kubeAppProbers: JSON.stringify({
      "/app-health/echo/readyz": { httpGet: { path: "ready", port: app.port }, timeoutSeconds: 5 },
      "/app-health/echo/livez": { httpGet: { path: "/live", port: app.port } },
      "/app-lifecycle/echo/prestopz": { httpGet: { path: "/ready", port: app.port } },
    }),
  });
  const ready = await call(url("/app-health/echo/readyz"), { headers: { "x-probe": "kubelet" } });
  assert.equal(ready.status, 200);
  assert.equal(ready.body, "fine");
  assert.equal(app.seen[0].remote, "127.0.0.6");
  assert.equal(app.seen[0].headers["x-probe"], "kubelet");
  // The kubelet's Host named the status port; the application sees its own.
  assert.equal(app.seen[0].headers.host, `127.0.0.1:${app.port}`);
  assert.notEqual(server.port, app.port);

  const live = await call(url("/app-health/echo/livez"), { headers: { host: "echo.local" } });
  assert.equal(live.status, 503);
  assert.equal(live.body, "starting");
  assert.equal(app.seen[1].headers.host, "echo.local");
  // Lifecycle hooks rewritten to the agent run the same way.
  assert.equal((await call(url("/app-lifecycle/echo/prestopz"))).status, 200);
});

test("/app-health httpGet: redirects to the same host are followed, elsewhere count as success; no answer is 500", async () => {
  const app = await startApp((req) => {
    if (req.url === "/away") return { status: 302, headers: { location: "http://example.invalid/x" } };
    if (req.url === "/here") return { status: 301, headers: { location: "/broken" } };
    return { status: 500, body: "broken" };
  });
  closers.push(app.close);
  const closed = createTcpServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
  const closedPort = (closed.address() as { port: number }).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const { url } = await startStatus({
    kubeAppProbers: JSON.stringify({
      "/app-health/a/readyz": { httpGet: { path: "/away", port: app.port } },
      "/app-health/a/livez": { httpGet: { path: "/here", port: app.port } },
      "/app-health/a/startupz": { httpGet: { path: "/", port: closedPort }, timeoutSeconds: 1 },
    }),
  });
  const away = await call(url("/app-health/a/readyz"));
  assert.equal(away.status, 200);
  assert.equal(away.body, "");
  const here = await call(url("/app-health/a/livez"));
  assert.equal(here.status, 500);
  assert.equal(here.body, "broken");
  assert.deepEqual(
    app.seen.map((s) => s.path),
    ["/away", "/here", "/broken"],
  );
  assert.equal((await call(url("/app-health/a/startupz"))).status, 500);
});

test("/app-health tcpSocket: 200 when the port accepts, 500 when it does not", async () => {
  const open = createTcpServer((s) => s.destroy());
  await new Promise<void>((r) => open.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise<void>((r) => open.close(() => r())));
  const openPort = (open.address() as { port: number }).port;
  const shut = createTcpServer();
  await new Promise<void>((r) => shut.listen(0, "127.0.0.1", r));
  const shutPort = (shut.address() as { port: number }).port;
  await new Promise<void>((r) => shut.close(() => r()));
  const { url } = await startStatus({
    kubeAppProbers: JSON.stringify({
      "/app-health/db/livez": { tcpSocket: { port: openPort }, timeoutSeconds: 2 },
      "/app-health/db/readyz": { tcpSocket: { port: shutPort }, timeoutSeconds: 2 },
    }),
  });
  assert.equal((await call(url("/app-health/db/livez"))).status, 200);
  assert.equal((await call(url("/app-health/db/readyz"))).status, 500);
});

test("/app-health grpc: the standard health service must answer SERVING for the named service", async () => {
  const server = new GrpcServer();
  server.addService(
    { check: rawUnaryMethod("/grpc.health.v1.Health/Check") },
    {
      check: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
        // HealthCheckRequest field 1 is the service; answer SERVING (1) for "echo", NOT_SERVING (2) otherwise.
        const service = call.request.length > 2 ? call.request.subarray(2).toString() : "";
        if (service === "missing") return callback({ code: grpcStatus.NOT_FOUND });
        callback(null, Buffer.from([0x08, service === "echo" ? 1 : 2]));
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  closers.push(() => server.forceShutdown());
  const { url } = await startStatus({
    kubeAppProbers: JSON.stringify({
      "/app-health/g/readyz": { grpc: { port, service: "echo" }, timeoutSeconds: 5 },
      "/app-health/g/livez": { grpc: { port }, timeoutSeconds: 5 },
      "/app-health/g/startupz": { grpc: { port, service: "missing" }, timeoutSeconds: 5 },
    }),
  });
  assert.equal((await call(url("/app-health/g/readyz"))).status, 200);
  assert.equal((await call(url("/app-health/g/livez"))).status, 500);
  assert.equal((await call(url("/app-health/g/startupz"))).status, 500);
});

test("/app-health: a path with no prober is 400 with Istio's message", async () => {
  const { url } = await startStatus({
    kubeAppProbers: JSON.stringify({ "/app-health/echo/readyz": { tcpSocket: { port: 1 } } }),
  });
  const res = await call(url("/app-health/other/readyz"));
  assert.equal(res.status, 400);
  assert.equal(res.body, "app prober config does not exists for /app-health/other/readyz");
});

test("ISTIO_KUBE_APP_PROBERS: Istio's refusals", () => {
  assert.throws(() => parseKubeAppProbers("{"), /^Error: failed to decode app prober err = .*, json string = \{$/);
  assert.throws(
    () => parseKubeAppProbers(JSON.stringify({ "/bad/path": { tcpSocket: { port: 1 } } })),
    /invalid path, must be in form of regex pattern/,
  );
  assert.throws(
    () =>
      parseKubeAppProbers(JSON.stringify({ "/app-health/a/readyz": { tcpSocket: { port: 1 }, grpc: { port: 1 } } })),
    /invalid prober type, must be one of type httpGet, tcpSocket or gRPC/,
  );
  assert.throws(
    () => parseKubeAppProbers(JSON.stringify({ "/app-health/a/livez": { httpGet: { port: "http" } } })),
    /invalid prober config for \/app-health\/a\/livez, the port must be int type/,
  );
  assert.equal(parseKubeAppProbers(JSON.stringify({ "/app-lifecycle/a/prestopz": { grpc: { port: 9 } } })).size, 1);
});

test("/quitquitquit and /drain: POST only (405), then OK and the action", async () => {
  const { url, calls } = await startStatus();
  const get = await call(url("/quitquitquit"));
  assert.equal(get.status, 405);
  assert.equal(get.body, "Method Not Allowed\n");
  assert.deepEqual(calls, []);

  const drain = await call(url("/drain"), { method: "POST", headers: { "content-type": "application/json" } });
  assert.equal(drain.status, 200);
  assert.equal(drain.body, "OK");
  const quit = await call(url("/quitquitquit"), { method: "POST" });
  assert.equal(quit.status, 200);
  assert.equal(quit.body, "OK");
  assert.deepEqual(calls, ["drain", "shutdown: /quitquitquit called"]);
});

test("/debug/ndsz: 404 {} without a DNS name table; the table as JSON when there is one", async () => {
  const none = await startStatus();
  const missing = await call(none.url("/debug/ndsz"));
  assert.equal(missing.status, 404);
  assert.equal(missing.body, "{}");

  const table = create(nds.NameTableSchema, {
    table: { "echo.test.svc.cluster.local": { ips: ["10.0.0.1"], registry: "Kubernetes", namespace: "test" } },
  });
  const withTable = await startStatus({ nameTable: () => table });
  const res = await call(withTable.url("/debug/ndsz"));
  assert.equal(res.status, 200);
  assert.equal(res.headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(res.body), {
    table: { "echo.test.svc.cluster.local": { ips: ["10.0.0.1"], registry: "Kubernetes", namespace: "test" } },
  });
});

test("unknown paths are Go's plain-text 404", async () => {
  const { url } = await startStatus();
  const res = await call(url("/nope"));
  assert.equal(res.status, 404);
  assert.equal(res.body, "404 page not found\n");
});

test("loopback: 127.0.0.0/8, ::1 and IPv4-mapped loopback; nothing else", () => {
  for (const a of ["127.0.0.1", "127.0.0.6", "::1", "::ffff:127.0.0.1"]) assert.ok(isLoopback(a), a);
  for (const a of ["10.0.0.1", "::ffff:10.0.0.1", "::", undefined]) assert.ok(!isLoopback(a), String(a));
});

test("from a non-loopback address: /quitquitquit, /drain and /debug/ndsz are 403; the rest answer", async (t) => {
  // 127.0.0.2 is loopback to Istio too (net.IP.IsLoopback), so this needs a real interface address.
  const external = externalIPv4();
  if (!external) return t.skip("this host has no non-loopback IPv4 address");
  const { url, calls } = await startStatus({ host: external });
  for (const [path, method] of [
    ["/quitquitquit", "POST"],
    ["/drain", "POST"],
    ["/quitquitquit", "GET"],
    ["/debug/ndsz", "GET"],
  ]) {
    const res = await call(url(path), { method, localAddress: external });
    assert.equal(res.status, 403, `${method} ${path}`);
    assert.equal(res.body, "Only requests from localhost are allowed\n");
  }
  assert.deepEqual(calls, []);
  assert.equal((await call(url("/healthz/ready"), { localAddress: external })).status, 200);
  assert.equal((await call(url("/metrics"), { localAddress: external })).status, 200);

  const localOnly = await startStatus({ host: external, metricsLocalhostOnly: true });
  assert.equal((await call(localOnly.url("/metrics"), { localAddress: external })).status, 403);
});

test("responses of 1 KiB and more are gzipped for clients that accept it, as Istio's gzhttp wrapper does", async () => {
  const { url } = await startStatus();
  const zipped = await call(url("/metrics"), { headers: { "accept-encoding": "gzip, deflate" } });
  assert.equal(zipped.headers["content-encoding"], "gzip");
  assert.equal(zipped.headers.vary, "Accept-Encoding");
  assert.match(gunzipSync(Buffer.from(zipped.body, "latin1")).toString(), /istio_agent_scrapes_total 1/);

  const refused = await call(url("/metrics"), { headers: { "accept-encoding": "gzip;q=0" } });
  assert.equal(refused.headers["content-encoding"], undefined);
  assert.match(refused.body, /istio_agent_scrapes_total 2/);
  const small = await call(url("/nope"), { headers: { "accept-encoding": "gzip" } });
  assert.equal(small.headers["content-encoding"], undefined, "a body under 1 KiB stays plain");
});

test("/app-health with REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION probes localhost instead of the pod IP", async () => {
  const app = await startApp(() => ({ status: 204 }));
  closers.push(app.close);
  const { url } = await startStatus({
    podIP: "192.0.2.123",
    legacyLocalhostProbes: true,
    kubeAppProbers: JSON.stringify({ "/app-health/echo/readyz": { httpGet: { path: "/", port: app.port } } }),
  });
  assert.equal((await call(url("/app-health/echo/readyz"))).status, 204);
  assert.equal(app.seen[0].remote, "127.0.0.6");
});
