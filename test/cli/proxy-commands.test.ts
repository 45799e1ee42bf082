// `sluice proxy-status`, `proxy-config`, `version` and `x internal-debug` end to end: sluiced in its
// own process over a config directory, a grpc-js-xds client (a proxyless workload, its node metadata
// as Istio's grpc agent writes it) connected and answered, and the CLI run as a program against the
// plaintext xDS port.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { stringify } from "yaml";
import { type Backend, call, startBackend } from "../proxyless/echo.ts";
import { ECHO_HOST, ECHO_PORT, echoService, NAMESPACE, useControlPlane, xdsClient } from "../proxyless/mesh.ts";
import { loggedLine, runSluice, stopProcess } from "./processes.ts";

const SLUICED = fileURLToPath(new URL("../../bin/sluiced.js", import.meta.url));
const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
/** What the control plane calls the proxy (Istio's proxy ID: pod name and namespace). */
const PROXY_ID = `client.${NAMESPACE}`;

let dir: string;
let backend: Backend;
let sluiced: ReturnType<typeof spawn>;
let xdsAddress: string;
let httpAddress: string;
let client: ReturnType<typeof xdsClient>;

const sluice = (...args: string[]) => runSluice(args);

const xds = () => ["--xds-address", xdsAddress, "--plaintext"];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "sluice-cli-"));
  backend = await startBackend("echo-a");
  await writeFile(join(dir, "echo.yaml"), stringify(echoService([{ backend }])));
  sluiced = spawn(
    process.execPath,
    [
      SLUICED,
      ...["--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", ""],
      ...["--httpAddr", "127.0.0.1:0", "--monitoringAddr", "127.0.0.1:0", "--httpsAddr", ""],
    ],
    // The plaintext port serves debug information only with the debug endpoint authentication off;
    // POD_NAME is the control plane ID the ISTIOD column shows.
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ENABLE_DEBUG_ENDPOINT_AUTH: "false", POD_NAME: "sluiced" },
    },
  );
  const lines = [
    loggedLine(sluiced, (l) => l.msg === "admin HTTP server listening"),
    loggedLine(sluiced, (l) => l.msg === "xDS server listening"),
  ];
  const [admin, listening] = await Promise.all(lines);
  httpAddress = `127.0.0.1:${admin.httpPort}`;
  xdsAddress = `127.0.0.1:${listening.grpcPort}`;
  useControlPlane(
    { address: xdsAddress },
    { metadata: { CLUSTER_ID: "Kubernetes", ISTIO_VERSION: "1.24.0", PROXY_CONFIG: {} } },
  );
  client = xdsClient(`${ECHO_HOST}:${ECHO_PORT}`);
  assert.equal(await call(client), "echo-a");
});

after(async () => {
  client?.close();
  backend?.stop();
  await stopProcess(sluiced);
  await rm(dir, { recursive: true, force: true });
});

test("proxy-status lists the connected proxyless client with the types it subscribed to", async () => {
  const { stdout, code } = await sluice("proxy-status", ...xds());
  assert.equal(code, 0, stdout);
  const [header, ...rows] = stdout.trimEnd().split("\n");
  assert.match(header, /^NAME\s+CLUSTER\s+ISTIOD\s+VERSION\s+SUBSCRIBED TYPES$/);
  const row = rows.find((r) => r.startsWith(PROXY_ID));
  assert.ok(row, stdout);
  assert.match(row, /\sKubernetes\s+sluiced\s+1\.24\.0\s+4 \(CDS,LDS,EDS,RDS\)$/);
});

test("proxy-status --verbose shows each type synced; -o json is the syncz response", async () => {
  const verbose = await sluice("ps", ...xds(), "--verbose");
  assert.equal(verbose.code, 0, verbose.stdout);
  const row = verbose.stdout.split("\n").find((r) => r.startsWith(PROXY_ID)) ?? "";
  // CDS ECDS EDS LDS RDS: the client never asked for ECDS.
  assert.match(row, /SYNCED \(\d+s\)\s+IGNORED\s+SYNCED \(\d+s\)\s+SYNCED \(\d+s\)\s+SYNCED \(\d+s\)\s+sluiced/);
  const json = await sluice("ps", ...xds(), "-o", "json");
  const parsed = JSON.parse(json.stdout) as { resources: { node: { id: string } }[] };
  assert.deepEqual(
    parsed.resources.map((r) => r.node.id),
    [PROXY_ID],
  );
  const missing = await sluice("ps", "no-such-proxy", ...xds());
  assert.equal(missing.code, 2);
  assert.match(missing.stdout, /^Error: no proxy matching "no-such-proxy" is connected$/m);
});

test("proxy-config reads the control plane's config dump of the proxyless client", async () => {
  const clusters = await sluice("proxy-config", "cluster", PROXY_ID, ...xds());
  assert.equal(clusters.code, 0, clusters.stdout);
  assert.match(clusters.stdout, /^SERVICE FQDN\s+PORT\s+SUBSET\s+DIRECTION\s+TYPE\s+DESTINATION RULE$/m);
  assert.match(
    clusters.stdout,
    new RegExp(`^${ECHO_HOST.replaceAll(".", "\\.")}\\s+${ECHO_PORT}\\s+-\\s+outbound\\s+EDS`, "m"),
  );

  const endpoints = await sluice("pc", "endpoint", PROXY_ID, ...xds());
  assert.equal(endpoints.code, 0, endpoints.stdout);
  assert.match(
    endpoints.stdout,
    // A ServiceEntry's endpoint carries no health: UNKNOWN, as istiod sends it.
    new RegExp(`^127\\.0\\.0\\.1:${backend.port}\\s+UNKNOWN\\s+outbound\\|${ECHO_PORT}\\|\\|${ECHO_HOST}`, "m"),
  );

  // The same dump over the control plane's HTTP debug endpoint.
  const overHttp = await sluice("pc", "cluster", PROXY_ID, "--monitoring-address", httpAddress);
  assert.equal(overHttp.stdout, clusters.stdout);

  const json = await sluice("pc", "cluster", PROXY_ID, ...xds(), "--fqdn", ECHO_HOST, "-o", "json");
  const parsed = JSON.parse(json.stdout) as { name: string }[];
  assert.deepEqual(
    parsed.map((c) => c.name),
    [`outbound|${ECHO_PORT}||${ECHO_HOST}`],
  );
});

test("version and internal-debug ask the control plane over xDS", async () => {
  const version = await sluice("version", ...xds());
  assert.equal(version.code, 0, version.stdout);
  assert.match(
    version.stdout,
    /^client version: \S+\nclient revision: ([0-9a-f]{40}|unknown)\ncontrol plane version: \(sluiced\)\ndata plane version: 1\.24\.0 \(1 proxies\)\n$/,
  );
  const debug = await sluice("x", "internal-debug", "syncz", ...xds());
  assert.equal(debug.code, 0, debug.stdout);
  assert.match(debug.stdout, new RegExp(`"id": "${PROXY_ID.replaceAll(".", "\\.")}"`));
});

test("proxy-status <proxy> --file compares the control plane's config with a dump of the proxy's", async () => {
  const dumped = await sluice("x", "internal-debug", `config_dump?proxyID=${PROXY_ID}`, ...xds());
  assert.equal(dumped.code, 0, dumped.stdout);
  const same = join(dir, "same.json");
  await writeFile(same, dumped.stdout);
  const match = await sluice("ps", PROXY_ID, "--file", same, ...xds());
  assert.equal(match.stdout, "Clusters Match\nListeners Match\nRoutes Match\n");

  const dump = JSON.parse(dumped.stdout) as { configs: { "@type": string; dynamicActiveClusters?: unknown[] }[] };
  const clusters = dump.configs.find((c) => c["@type"].endsWith("ClustersConfigDump"));
  assert.ok(clusters?.dynamicActiveClusters?.length, dumped.stdout);
  clusters.dynamicActiveClusters = [];
  const fewer = join(dir, "fewer.json");
  await writeFile(fewer, JSON.stringify(dump));
  const differ = await sluice("ps", PROXY_ID, "--file", fewer, ...xds());
  assert.match(differ.stdout, /^Clusters Don't Match\n--- Istiod Clusters\n\+\+\+ Envoy Clusters\n/);
  assert.match(differ.stdout, /\nListeners Match\nRoutes Match\n$/);
});

test("--log_output_level xds:debug logs the xDS request and its response on stderr, stdout unchanged", async () => {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [
    SLUICE,
    "ps",
    ...xds(),
    "--log_output_level",
    "xds:debug",
  ]);
  assert.match(stdout, new RegExp(`^${PROXY_ID}\\s`, "m"));
  const lines = stderr
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { scope: string; msg: string });
  assert.deepEqual(
    lines.map((l) => `${l.scope} ${l.msg}`),
    ["xds xDS debug request", "xds xDS debug response"],
  );
});
