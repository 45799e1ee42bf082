// `sluice-agent proxy` with OUTPUT_CERTS, as Istio's grpc-agent template runs it: the workload
// certificate comes from the CA named by CA_ADDR / CA_ROOT_CA (token from --token-path), and the
// status port turns ready once the bootstrap's certificate files exist.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ISTIOD_NAME, spiffeId, TestCa } from "../../test/proxyless/mtls-ca.ts";
import { freePort } from "../../test/support/free-port.ts";

const AGENT = fileURLToPath(new URL("../../bin/sluice-agent.js", import.meta.url));

let ca: TestCa;
let dir: string;

before(async () => {
  ca = await TestCa.start({ "echo-token": spiffeId("echo", "test") });
  dir = mkdtempSync(join(tmpdir(), "sluice-agent-cli-"));
});

after(async () => {
  await ca.close();
  rmSync(dir, { recursive: true, force: true });
});

test("proxy with OUTPUT_CERTS fetches the pod's certificate from CA_ADDR and is then ready", async () => {
  const certDir = join(dir, "certs");
  const statusPort = await freePort();
  const child = spawn(
    process.execPath,
    [
      AGENT,
      "proxy",
      "sidecar",
      "--statusPort",
      String(statusPort),
      "--discovery-address",
      "127.0.0.1:1",
      "--token-path",
      ca.tokenFile("echo.token", "echo-token"),
    ],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        POD_NAME: "echo-1",
        POD_NAMESPACE: "test",
        INSTANCE_IP: "127.0.0.1",
        SERVICE_ACCOUNT: "echo",
        ECC_SIGNATURE_ALGORITHM: "ECDSA",
        GRPC_XDS_BOOTSTRAP: join(dir, "grpc-bootstrap.json"),
        OUTPUT_CERTS: certDir,
        CA_ADDR: ca.address,
        CA_ROOT_CA: ca.rootCertPath,
        ISTIOD_SAN: ISTIOD_NAME,
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const lines: string[] = [];
  // A child starts slowly on a busy machine: wait for the log line, at most a minute.
  const issued = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no certificate; logged ${lines.join("\n")}`)), 60_000);
    createInterface({ input: child.stdout }).on("line", (line) => {
      lines.push(line);
      if (line.includes("workload certificate issued")) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  try {
    await issued;
    const ready = await fetch(`http://127.0.0.1:${statusPort}/healthz/ready`);
    assert.equal(ready.status, 200);
    const cert = new X509Certificate(readFileSync(join(certDir, "cert-chain.pem")));
    assert.equal(cert.subjectAltName, `URI:${spiffeId("echo", "test")}`);
    assert.ok(!lines.join("\n").includes("echo-token"), "the token is not logged");
  } finally {
    child.kill("SIGTERM");
  }
  assert.equal(await exited, 0);
});
