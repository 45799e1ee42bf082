// `sluice proxy-status`, `version`, `x internal-debug` and `proxy-config` through a cluster, as
// istioctl reaches one: the in-process API server holds a fake istiod pod whose 15012 is forwarded
// to sluiced's TLS port (sluiced in its own process, reviewing tokens with the same API server), a
// proxyless gRPC client pod connected to it, and an Envoy pod whose 15000 is forwarded to a small
// Envoy admin serving a recorded config dump. The CLI runs as a program with --kubeconfig only.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import type { ConfigObject } from "../../src/config/index.ts";
import { KubeTestServer } from "../kube-apiserver/index.ts";
import { type Backend, call, startBackend } from "../proxyless/echo.ts";
import { ECHO_HOST, ECHO_PORT, echoService, NAMESPACE, useControlPlane, xdsClient } from "../proxyless/mesh.ts";
import { loggedLine, runSluice, stopProcess } from "./processes.ts";

const SLUICED = fileURLToPath(new URL("../../bin/sluiced.js", import.meta.url));
const DUMP = fileURLToPath(
  new URL("../../../shared/conformance/istio/istioctl/proxyconfig/testdata/config_dump.json", import.meta.url),
);
const PROXY_ID = `client.${NAMESPACE}`;
const ENVOY_POD = { name: "productpage-v1", namespace: "bookinfo" };

let dir: string;
let kubeconfig: string;
let api: KubeTestServer;
let backend: Backend;
let sluiced: ReturnType<typeof spawn>;
let client: ReturnType<typeof xdsClient>;
/** The fake Envoy admin, and the admin requests it answered. */
let envoyAdmin: Server;
const adminRequests: string[] = [];

function pod(name: string, namespace: string, containers: string[], labels: Record<string, string> = {}): ConfigObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels },
    spec: { containers: containers.map((c) => ({ name: c })) },
    status: { phase: "Running" },
  };
}

/** The CLI with the test cluster's kubeconfig. */
const sluice = (...args: string[]) => runSluice([...args, "--kubeconfig", kubeconfig]);

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "sluice-cli-kube-"));
  api = await KubeTestServer.start();
  kubeconfig = join(dir, "kubeconfig");
  api.writeKubeconfig(kubeconfig);
  api.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: "istio-system" } });
  api.create(pod("istiod-7f9c", "istio-system", ["discovery"], { app: "istiod" }));
  api.create(pod("client", NAMESPACE, ["app"]));
  api.create(pod(ENVOY_POD.name, ENVOY_POD.namespace, ["app", "istio-proxy"]));

  const dump = await readFile(DUMP, "utf8");
  envoyAdmin = createServer((req, res) => {
    adminRequests.push(`${req.method} ${req.url}`);
    if (req.url?.startsWith("/config_dump")) res.end(dump);
    else if (req.url?.startsWith("/logging")) res.end("active loggers:\n  http: info\n");
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => envoyAdmin.listen(0, "127.0.0.1", resolve));
  api.forwardPodPort(ENVOY_POD, 15000, (envoyAdmin.address() as AddressInfo).port);

  backend = await startBackend("echo-a");
  const configDir = join(dir, "config");
  await mkdir(configDir);
  await writeFile(join(configDir, "echo.yaml"), stringify(echoService([{ backend }])));
  sluiced = spawn(
    process.execPath,
    [
      SLUICED,
      ...["--configDir", configDir, "--kubeconfig", kubeconfig, "--caDir", join(dir, "ca")],
      ...["--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "127.0.0.1:0", "--httpsAddr", ""],
      ...["--httpAddr", "127.0.0.1:0", "--monitoringAddr", "127.0.0.1:0"],
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const listening = await loggedLine(sluiced, (l) => l.msg === "xDS server listening");
  api.forwardPodPort({ name: "istiod-7f9c", namespace: "istio-system" }, 15012, listening.securePort as number);
  // The mesh's root, as istiod publishes it in every namespace.
  api.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "istio-ca-root-cert", namespace: "istio-system" },
    data: { "root-cert.pem": await readFile(join(dir, "ca", "root-cert.pem"), "utf8") },
  });

  useControlPlane(
    { address: `127.0.0.1:${listening.grpcPort}` },
    { metadata: { CLUSTER_ID: "Kubernetes", ISTIO_VERSION: "1.24.0", PROXY_CONFIG: {} } },
  );
  client = xdsClient(`${ECHO_HOST}:${ECHO_PORT}`);
  assert.equal(await call(client), "echo-a");
});

after(async () => {
  client?.close();
  backend?.stop();
  await stopProcess(sluiced);
  await new Promise((resolve) => envoyAdmin?.close(resolve));
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

test("proxy-status reaches istiod's TLS port through a port-forward, with a TokenRequest token", async () => {
  const tokensBefore = api.issuedTokens.length;
  const { stdout, code } = await sluice("proxy-status");
  assert.equal(code, 0, stdout);
  const row = stdout.split("\n").find((r) => r.startsWith(PROXY_ID));
  assert.ok(row, stdout);
  // NAME CLUSTER ISTIOD VERSION SUBSCRIBED TYPES
  assert.match(row, /\sKubernetes\s+\S+\s+1\.24\.0\s+4 \(CDS,LDS,EDS,RDS\)$/);

  const forward = api.requests.findLast(
    (r) => r.path === "/api/v1/namespaces/istio-system/pods/istiod-7f9c/portforward",
  );
  assert.equal(forward?.query.get("ports"), "15012");
  const [issued] = api.issuedTokens.slice(tokensBefore);
  assert.deepEqual(
    { namespace: issued?.namespace, serviceAccount: issued?.serviceAccount, audiences: issued?.audiences },
    { namespace: "istio-system", serviceAccount: "default", audiences: ["istio-ca"] },
  );
  // sluiced's TokenReview of the very token the CLI was issued: it authenticated the CLI with it.
  assert.ok(api.reviewedTokens.includes(issued.token));
});

test("version and internal-debug ask each istiod pod of the cluster", async () => {
  const version = await sluice("version");
  assert.equal(version.code, 0, version.stdout);
  assert.match(version.stdout, /\ncontrol plane version: \S.*\ndata plane version: 1\.24\.0 \(1 proxies\)\n$/);
  const debug = await sluice("x", "internal-debug", "syncz");
  assert.equal(debug.code, 0, debug.stdout);
  assert.match(debug.stdout, new RegExp(`"id": "${PROXY_ID.replaceAll(".", "\\.")}"`));
});

test("proxy-config reads a sidecar pod's Envoy admin through a port-forward to 15000", async () => {
  const fromFile = await sluice("proxy-config", "cluster", "--file", DUMP);
  assert.equal(fromFile.code, 0, fromFile.stdout);
  const fromPod = await sluice("proxy-config", "cluster", `${ENVOY_POD.name}.${ENVOY_POD.namespace}`);
  assert.equal(fromPod.code, 0, fromPod.stdout);
  assert.equal(fromPod.stdout, fromFile.stdout);
  assert.equal(adminRequests.at(-1), "GET /config_dump?include_eds");
  // -n names the namespace of a bare pod name.
  const byNamespace = await sluice("pc", "cluster", ENVOY_POD.name, "-n", ENVOY_POD.namespace);
  assert.equal(byNamespace.stdout, fromFile.stdout);

  const log = await sluice("pc", "log", `${ENVOY_POD.name}.${ENVOY_POD.namespace}`, "--level", "http:debug");
  assert.equal(log.code, 0, log.stdout);
  assert.equal(log.stdout, "active loggers:\n  http: info\n");
  assert.equal(adminRequests.at(-1), "POST /logging?http=debug");
});

test("proxy-config of a proxyless pod (no Envoy) is the control plane's config dump for it", async () => {
  const clusters = await sluice("proxy-config", "cluster", "client", "-n", NAMESPACE);
  assert.equal(clusters.code, 0, clusters.stdout);
  assert.match(
    clusters.stdout,
    new RegExp(`^${ECHO_HOST.replaceAll(".", "\\.")}\\s+${ECHO_PORT}\\s+-\\s+outbound\\s+EDS`, "m"),
  );
  const log = await sluice("pc", "log", PROXY_ID);
  assert.equal(log.code, 2);
  assert.match(log.stdout, /^Error: pod client\.default runs no Envoy \(proxyless gRPC\): no log levels$/m);
});

test("a pod that does not exist is a one-line error", async () => {
  const missing = await sluice("pc", "cluster", "nope.bookinfo");
  assert.equal(missing.code, 2);
  assert.equal(missing.stdout, "Error: pod nope not found in namespace bookinfo\n");
});
