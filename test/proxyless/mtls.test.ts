// Proxyless mTLS end to end: the agent gets each workload's certificate from the CA (a real
// CreateCertificate over TLS, authenticated by the workload's token) and writes it where the
// bootstrap's file_watcher provider reads it; with PeerAuthentication STRICT the xDS-enabled server
// takes only mTLS, and a client whose DestinationRule says ISTIO_MUTUAL reaches it. The server runs
// here; clients run in their own processes, each with its own identity (grpc-js-xds has one
// bootstrap per process). An AuthorizationPolicy then lets one client identity through and denies another.
import "./mtls-env.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client, credentials, ServerCredentials } from "@grpc/grpc-js";
import * as grpcXds from "@grpc/grpc-js-xds";
import { pino } from "pino";
import { WorkloadCertificates } from "../../src/agent/certs.ts";
import { caClientSigner } from "../../src/agent/certs-client.ts";
import { grpcBootstrap } from "../../src/agent/grpc-bootstrap.ts";
import type { ConfigObject } from "../../src/config/index.ts";
import { freePort } from "../support/free-port.ts";
import { waitFor } from "../support/xds-fixtures.ts";
import { Backend, outcome } from "./echo.ts";
import { ControlPlane, DOMAIN, destinationRule, ECHO_HOST, ECHO_PORT, echoService, NAMESPACE } from "./mesh.ts";
import { ISTIOD_NAME, spiffeId, TestCa } from "./mtls-ca.ts";

const CLIENT_SCRIPT = fileURLToPath(new URL("./mtls-client.ts", import.meta.url));
const log = pino({ level: "silent" });

let ca: TestCa;
let cp: ControlPlane;
let dir: string;
let server: Backend;
const agents: WorkloadCertificates[] = [];

/** Runs the agent's certificate fetching for one workload; resolves once its files are written. */
async function agentFor(account: string): Promise<string> {
  const certDir = join(dir, account);
  const certs = new WorkloadCertificates({
    identity: spiffeId(account),
    sign: caClientSigner({
      address: ca.address,
      rootCertPath: ca.rootCertPath,
      serverName: ISTIOD_NAME,
      tokenPath: ca.tokenFile(`${account}.token`, `${account}-token`),
    }),
    outputDir: certDir,
    keyAlgorithm: "ECDSA-P256",
    log,
  });
  agents.push(certs);
  await certs.start();
  return certDir;
}

/** The agent's gRPC bootstrap for a workload at 127.0.0.1 in the test namespace. */
function bootstrapFor(account: string, certDir: string): string {
  return JSON.stringify(
    grpcBootstrap({
      nodeId: `sidecar~127.0.0.1~${account}-1.${NAMESPACE}~${DOMAIN}`,
      metadata: { NAMESPACE, LABELS: { app: account }, INSTANCE_IPS: "127.0.0.1", SERVICE_ACCOUNT: account },
      locality: {},
      discoveryAddress: cp.address,
      certDir,
    }),
  );
}

const certDirs = new Map<string, Promise<string>>();

/** One call from a client workload in its own process: the backend's name or `error:<code>`. */
async function callFrom(account: string): Promise<string> {
  if (!certDirs.has(account)) certDirs.set(account, agentFor(account));
  const certDir = await certDirs.get(account);
  assert.ok(certDir);
  const child = spawn(process.execPath, ["--import", "tsx", CLIENT_SCRIPT, `${ECHO_HOST}:${ECHO_PORT}`], {
    env: { ...process.env, GRPC_XDS_BOOTSTRAP_CONFIG: bootstrapFor(account, certDir) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  assert.equal(code, 0, `client ${account} exited ${code}`);
  return out.trim();
}

function peerAuthentication(mode: string): ConfigObject {
  return {
    apiVersion: "security.istio.io/v1",
    kind: "PeerAuthentication",
    metadata: { name: "default", namespace: NAMESPACE },
    spec: { mtls: { mode } },
  };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "sluice-mtls-"));
  ca = await TestCa.start({
    "echo-token": spiffeId("echo"),
    "alice-token": spiffeId("alice"),
    "bob-token": spiffeId("bob"),
  });
  cp = await ControlPlane.start([
    peerAuthentication("STRICT"),
    destinationRule({ trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } }),
  ]);
  // The server's certificates must be on disk before grpc-js-xds reads the bootstrap's provider.
  const serverCerts = await agentFor("echo");
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = bootstrapFor("echo", serverCerts);
  grpcXds.register();
  server = new Backend("echo", new grpcXds.XdsServer());
  server.port = await freePort();
  const service = echoService([{ backend: server }]);
  const spec = service.spec as Record<string, unknown>;
  cp.apply({ ...service, spec: { ...spec, subjectAltNames: [spiffeId("echo")] } });
  await server.listen(`127.0.0.1:${server.port}`, new grpcXds.XdsServerCredentials(ServerCredentials.createInsecure()));
});

after(async () => {
  for (const agent of agents) agent.stop();
  server?.stop();
  await cp?.stop();
  await ca?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the agent's certificates name each workload's identity and chain to the CA's root", () => {
  const cert = new X509Certificate(readFileSync(join(dir, "echo", "cert-chain.pem")));
  assert.equal(cert.subjectAltName, `URI:${spiffeId("echo")}`);
  assert.equal(readFileSync(join(dir, "echo", "root-cert.pem"), "utf8"), ca.rootsPem);
});

test("with PeerAuthentication STRICT a plaintext client fails, one with a mesh certificate gets through", async () => {
  const plaintext = new Client(`127.0.0.1:${server.port}`, credentials.createInsecure());
  // The control: the same call over mTLS with a mesh certificate (the server's own; its only SAN is a URI).
  const file = (name: string) => readFileSync(join(dir, "echo", name));
  const meshTls = credentials.createSsl(file("root-cert.pem"), file("key.pem"), file("cert-chain.pem"), {
    checkServerIdentity: () => undefined,
  });
  const mtls = new Client(`127.0.0.1:${server.port}`, meshTls);
  try {
    // The server's certificate provider loads its files in the background: wait until it serves mTLS.
    await waitFor(async () => (await outcome(mtls, { deadlineMs: 2000 })) === "echo", "the server to serve mTLS");
    const calls = server.calls;
    assert.equal(await outcome(plaintext, { deadlineMs: 5000 }), "error:UNAVAILABLE");
    assert.equal(server.calls, calls);
  } finally {
    plaintext.close();
    mtls.close();
  }
});

test("with PeerAuthentication STRICT and ISTIO_MUTUAL, an mTLS client reaches the server", async () => {
  const before = server.calls;
  assert.equal(await callFrom("alice"), "echo");
  assert.equal(server.calls, before + 1);
});

test("an AuthorizationPolicy allowing one service account lets it through and denies another", async () => {
  await cp.applyAndSettle(
    {
      apiVersion: "security.istio.io/v1",
      kind: "AuthorizationPolicy",
      metadata: { name: "allow-alice", namespace: NAMESPACE },
      spec: {
        selector: { matchLabels: { app: "echo" } },
        action: "ALLOW",
        rules: [{ from: [{ source: { principals: ["cluster.local/ns/default/sa/alice"] } }] }],
      },
    },
    `echo-1.${NAMESPACE}`,
  );
  const before = server.calls;
  assert.equal(await callFrom("bob"), "error:PERMISSION_DENIED");
  assert.equal(server.calls, before);
  assert.equal(await callFrom("alice"), "echo");
  assert.equal(server.calls, before + 1);
});
