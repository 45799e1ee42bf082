// `sluice proxy-status`, `version`, `x internal-debug` and `proxy-config` through a cluster, as
// istioctl reaches one. The objects are in the real test cluster (test/cluster): a fake istiod pod,
// a proxyless gRPC client's pod and an Envoy pod, the istiod namespace's ServiceAccount and CA root
// ConfigMap. sluiced runs in its own process with the cluster's kubeconfig (it reviews the CLI's
// tokens there). The cluster has no kubelet, so the CLI goes through test/portforward's front: the
// pods' port-forwards reach 127.0.0.1 ports (istiod's 15012 is sluiced's TLS port, the Envoy pod's
// 15000 a small Envoy admin serving a recorded config dump), everything else passes to the cluster.
// The CLI runs as a program with --kubeconfig only.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import type { ConfigObject } from "../../src/config/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { PortForwardFront } from "../portforward/index.ts";
import { type Backend, call, startBackend } from "../proxyless/echo.ts";
import { ECHO_HOST, ECHO_PORT, echoService, NAMESPACE, useControlPlane, xdsClient } from "../proxyless/mesh.ts";
import { loggedLine, runSluice, stopProcess } from "./processes.ts";

const SLUICED = fileURLToPath(new URL("../../bin/sluiced.js", import.meta.url));
const DUMP = fileURLToPath(
  new URL("../../../shared/conformance/istio/istioctl/proxyconfig/testdata/config_dump.json", import.meta.url),
);
const skip = clusterSkipReason();
/** The proxyless client's pod: in the mesh's namespace, whose name other tests may share. */
const CLIENT_POD = `client-${randomBytes(3).toString("hex")}`;
const PROXY_ID = `${CLIENT_POD}.${NAMESPACE}`;
const ENVOY_POD = { name: "productpage-v1", namespace: "" };
/** The stand-in for istio-system. */
let istioNamespace = "";

let dir: string;
let kubeconfig: string;
let cluster: Cluster;
let front: PortForwardFront;
let backend: Backend;
let sluiced: ReturnType<typeof spawn>;
let client: ReturnType<typeof xdsClient>;
/** The fake Envoy admin, and the admin requests it answered. */
let envoyAdmin: Server;
const adminRequests: string[] = [];

/** Creates the pod, Running (its status written as a kubelet would). */
async function createPod(
  name: string,
  namespace: string,
  containers: string[],
  labels: Record<string, string> = {},
): Promise<void> {
  const pods = `/api/v1/namespaces/${namespace}/pods`;
  const created = await cluster.must("POST", pods, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels },
    spec: { containers: containers.map((c) => ({ name: c, image: c })) },
  } satisfies ConfigObject);
  await cluster.must("PUT", `${pods}/${name}/status`, {
    ...created.body,
    status: { ...created.body.status, phase: "Running" },
  });
}

/** The CLI through the front, in the test's Istio namespace. */
const sluice = (...args: string[]) => runSluice([...args, "-i", istioNamespace, "--kubeconfig", kubeconfig]);

before(async () => {
  if (skip) return;
  dir = await mkdtemp(join(tmpdir(), "sluice-cli-kube-"));
  cluster = await sharedCluster();
  front = await PortForwardFront.start(cluster.kubeConfig());
  kubeconfig = join(dir, "kubeconfig");
  front.writeKubeconfig(kubeconfig);
  const clusterKubeconfig = join(dir, "cluster-kubeconfig");
  cluster.writeKubeconfig(clusterKubeconfig);
  istioNamespace = await cluster.namespace("istio-system");
  ENVOY_POD.namespace = await cluster.namespace("bookinfo");
  await cluster.must("POST", `/api/v1/namespaces/${istioNamespace}/serviceaccounts`, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "default", namespace: istioNamespace },
  });
  await createPod("istiod-7f9c", istioNamespace, ["discovery"], { app: "istiod" });
  await createPod(CLIENT_POD, NAMESPACE, ["app"]);
  await createPod(ENVOY_POD.name, ENVOY_POD.namespace, ["app", "istio-proxy"]);

  const dump = await readFile(DUMP, "utf8");
  envoyAdmin = createServer((req, res) => {
    adminRequests.push(`${req.method} ${req.url}`);
    if (req.url?.startsWith("/config_dump")) res.end(dump);
    else if (req.url?.startsWith("/logging")) res.end("active loggers:\n  http: info\n");
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => envoyAdmin.listen(0, "127.0.0.1", resolve));
  front.forwardPodPort(ENVOY_POD, 15000, (envoyAdmin.address() as AddressInfo).port);

  backend = await startBackend("echo-a");
  const configDir = join(dir, "config");
  await mkdir(configDir);
  await writeFile(join(configDir, "echo.yaml"), stringify(echoService([{ backend }])));
  // The root namespace is the system namespace whose callers may see every proxy's debug state.
  const meshConfig = join(dir, "mesh.yaml");
  await writeFile(meshConfig, `rootNamespace: ${istioNamespace}\n`);
  sluiced = spawn(
    process.execPath,
    [
      SLUICED,
      ...["--configDir", configDir, "--kubeconfig", clusterKubeconfig, "--caDir", join(dir, "ca")],
      ...["--meshConfig", meshConfig],
      ...["--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "127.0.0.1:0", "--httpsAddr", ""],
      ...["--httpAddr", "127.0.0.1:0", "--monitoringAddr", "127.0.0.1:0"],
    ],
    // Its namespace, as istiod's pod has it: its serving certificate names istiod.<namespace>.svc.
    { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, POD_NAMESPACE: istioNamespace } },
  );
  const listening = await loggedLine(sluiced, (l) => l.msg === "xDS server listening");
  front.forwardPodPort({ name: "istiod-7f9c", namespace: istioNamespace }, 15012, listening.securePort as number);
  // The mesh's root, which sluiced publishes in every namespace, as istiod does: the CLI verifies 15012 with it.
  const root = await readFile(join(dir, "ca", "root-cert.pem"), "utf8");
  const rootPath = `/api/v1/namespaces/${istioNamespace}/configmaps/istio-ca-root-cert`;
  for (let i = 0; (await cluster.request("GET", rootPath)).body?.data?.["root-cert.pem"] !== root; i++) {
    if (i === 300) assert.fail(`sluiced did not publish istio-ca-root-cert in ${istioNamespace}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  useControlPlane(
    { address: `127.0.0.1:${listening.grpcPort}` },
    { id: PROXY_ID, metadata: { CLUSTER_ID: "Kubernetes", ISTIO_VERSION: "1.24.0", PROXY_CONFIG: {} } },
  );
  client = xdsClient(`${ECHO_HOST}:${ECHO_PORT}`);
  assert.equal(await call(client), "echo-a");
});

after(async () => {
  client?.close();
  backend?.stop();
  await stopProcess(sluiced);
  await new Promise((resolve) => envoyAdmin?.close(resolve));
  await front?.close();
  await rm(dir, { recursive: true, force: true });
});

test("proxy-status reaches istiod's TLS port through a port-forward, with a TokenRequest token", { skip }, async () => {
  const forwardsBefore = front.forwardRequests.length;
  const passedBefore = front.passed.length;
  const { stdout, code } = await sluice("proxy-status");
  assert.equal(code, 0, stdout);
  const row = stdout.split("\n").find((r) => r.startsWith(PROXY_ID));
  assert.ok(row, stdout);
  // NAME CLUSTER ISTIOD VERSION SUBSCRIBED TYPES
  assert.match(row, /\sKubernetes\s+\S+\s+1\.24\.0\s+4 \(CDS,LDS,EDS,RDS\)$/);

  assert.deepEqual(front.forwardRequests.slice(forwardsBefore), [
    { namespace: istioNamespace, pod: "istiod-7f9c", ports: ["15012"] },
  ]);
  // The CLI asked the cluster for a token of istiod's namespace's default ServiceAccount ...
  const passed = front.passed.slice(passedBefore);
  assert.ok(passed.includes(`POST /api/v1/namespaces/${istioNamespace}/serviceaccounts/default/token`), String(passed));
  // ... and without that ServiceAccount it has none to show sluiced.
  await cluster.must("DELETE", `/api/v1/namespaces/${istioNamespace}/serviceaccounts/default`);
  try {
    const without = await sluice("proxy-status");
    assert.notEqual(without.code, 0, without.stdout);
    assert.match(without.stdout, new RegExp(`failed to create a token for "default\\.${istioNamespace}"`));
  } finally {
    await cluster.must("POST", `/api/v1/namespaces/${istioNamespace}/serviceaccounts`, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default", namespace: istioNamespace },
    });
  }
});

test("version and internal-debug ask each istiod pod of the cluster", { skip }, async () => {
  const version = await sluice("version");
  assert.equal(version.code, 0, version.stdout);
  assert.match(version.stdout, /\ncontrol plane version: \S.*\ndata plane version: 1\.24\.0 \(1 proxies\)\n$/);
  const debug = await sluice("x", "internal-debug", "syncz");
  assert.equal(debug.code, 0, debug.stdout);
  assert.match(debug.stdout, new RegExp(`"id": "${PROXY_ID.replaceAll(".", "\\.")}"`));
});

test("proxy-config reads a sidecar pod's Envoy admin through a port-forward to 15000", { skip }, async () => {
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

test("proxy-config of a proxyless pod (no Envoy) is the control plane's config dump for it", { skip }, async () => {
  const clusters = await sluice("proxy-config", "cluster", CLIENT_POD, "-n", NAMESPACE);
  assert.equal(clusters.code, 0, clusters.stdout);
  assert.match(
    clusters.stdout,
    new RegExp(`^${ECHO_HOST.replaceAll(".", "\\.")}\\s+${ECHO_PORT}\\s+-\\s+outbound\\s+EDS`, "m"),
  );
  const log = await sluice("pc", "log", PROXY_ID);
  assert.equal(log.code, 2);
  assert.match(
    log.stdout,
    new RegExp(`^Error: pod ${CLIENT_POD}\\.default runs no Envoy \\(proxyless gRPC\\): no log levels$`, "m"),
  );
});

test("a pod that does not exist is a one-line error", { skip }, async () => {
  const missing = await sluice("pc", "cluster", `nope.${ENVOY_POD.namespace}`);
  assert.equal(missing.code, 2);
  assert.equal(missing.stdout, `Error: pod nope not found in namespace ${ENVOY_POD.namespace}\n`);
});
