// The sluice-agent command line: grpc-bootstrap writes the file and exits; proxy writes it, serves the
// status port and stops cleanly on SIGTERM or /quitquitquit.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { freePort } from "../../test/support/free-port.ts";

const AGENT = fileURLToPath(new URL("../../bin/sluice-agent.js", import.meta.url));
const POD_ENV = { POD_NAME: "echo-1", POD_NAMESPACE: "test", INSTANCE_IP: "10.4.0.9" };

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "sluice-agent-"));
});
after(async () => {
  await rm(dir, { recursive: true });
});

/** The environment of a child: the pod's variables, none of the test process's agent settings. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  return { ...env, ...POD_ENV, ...extra };
}

function runAgent(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [AGENT, ...args], { cwd: dir, env: childEnv(env) });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

test("grpc-bootstrap writes Istio's bootstrap for the pod to --output and prints the path", async () => {
  const output = join(dir, "out", "bootstrap.json");
  const run = runAgent(
    [
      "grpc-bootstrap",
      "--discovery-address",
      "127.0.0.1:15010",
      "--output",
      output,
      "--output-certs",
      "/var/lib/istio/data",
    ],
    { ISTIO_META_CLUSTER_ID: "Kubernetes" },
  );
  assert.equal(await run.exited, 0, run.output().stderr);
  assert.equal(run.output().stdout, `${output}\n`);
  const bootstrap = JSON.parse(await readFile(output, "utf8"));
  assert.equal(bootstrap.node.id, "sidecar~10.4.0.9~echo-1.test~test.svc.cluster.local");
  assert.equal(bootstrap.node.metadata.GENERATOR, "grpc");
  assert.equal(bootstrap.node.metadata.NAMESPACE, "test");
  assert.equal(bootstrap.node.metadata.CLUSTER_ID, "Kubernetes");
  assert.deepEqual(bootstrap.xds_servers[0].server_uri, "127.0.0.1:15010");
  assert.equal(bootstrap.certificate_providers.default.config.certificate_file, "/var/lib/istio/data/cert-chain.pem");
  assert.equal(bootstrap.server_listener_resource_name_template, "xds.istio.io/grpc/lds/inbound/%s");
});

test("grpc-bootstrap writes to GRPC_XDS_BOOTSTRAP without --output; --node-id names the node", async () => {
  const output = join(dir, "env", "grpc-bootstrap.json");
  const run = runAgent(
    ["grpc-bootstrap", "--discoveryAddress", "istiod:15012", "--node-id", "sidecar~1.2.3.4~a.b~b.svc.cluster.local"],
    {
      GRPC_XDS_BOOTSTRAP: output,
    },
  );
  assert.equal(await run.exited, 0, run.output().stderr);
  const bootstrap = JSON.parse(await readFile(output, "utf8"));
  assert.equal(bootstrap.node.id, "sidecar~1.2.3.4~a.b~b.svc.cluster.local");
  assert.equal(bootstrap.certificate_providers, undefined);
});

test("an unknown flag or command is a usage error (exit 2)", async () => {
  const flag = runAgent(["grpc-bootstrap", "--bogus-flag=1"]);
  assert.equal(await flag.exited, 2);
  assert.match(flag.output().stderr, /Unknown argument: bogus-flag/);
  const command = runAgent(["frobnicate"]);
  assert.equal(await command.exited, 2);
});

test("proxy: an invalid --log_output_level is a usage error naming the entry", async () => {
  const run = runAgent(["proxy", "sidecar", "--log_output_level=default:info,ads:loud"]);
  assert.equal(await run.exited, 2);
  assert.equal(
    run.output().stderr,
    'sluice-agent: --log_output_level: invalid level "loud" in "ads:loud"; levels are none, fatal, error, warn, info, debug\n',
  );
});

/** Starts `proxy` as Istio's grpc-agent template runs it, and waits (at most 30 s) for its status port. */
async function startProxy(env: Record<string, string>) {
  const args = [
    "proxy",
    "sidecar",
    "--domain",
    "test.svc.cluster.local",
    "--proxyLogLevel=warning",
    "--proxyComponentLogLevel=misc:error",
    "--log_output_level=default:info",
    // pilot-agent's proxy command ignores flags it does not know.
    "--someFutureFlag=1",
    "--statusPort",
    String(await freePort()),
    "--discovery-address",
    "127.0.0.1:1",
  ];
  const child = spawn(process.execPath, [AGENT, ...args], {
    cwd: dir,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const lines: { msg: string; port?: number }[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no status port; logged ${JSON.stringify(lines)}`)), 30_000);
    createInterface({ input: child.stdout }).on("line", (line) => {
      const entry = JSON.parse(line) as { msg: string; port?: number };
      lines.push(entry);
      if (entry.msg === "status server listening" && entry.port) {
        clearTimeout(timer);
        resolve(entry.port);
      }
    });
    child.on("exit", () => reject(new Error(`exited early; logged ${JSON.stringify(lines)}`)));
  });
  return { child, exited, port, lines };
}

test("proxy writes the bootstrap, is ready on its status port, and exits 0 on SIGTERM", async () => {
  const bootstrapPath = join(dir, "proxy", "grpc-bootstrap.json");
  const proxy = await startProxy({ GRPC_XDS_BOOTSTRAP: bootstrapPath });
  try {
    const ready = await fetch(`http://127.0.0.1:${proxy.port}/healthz/ready`);
    assert.equal(ready.status, 200);
    const bootstrap = JSON.parse(await readFile(bootstrapPath, "utf8"));
    assert.equal(bootstrap.node.id, "sidecar~10.4.0.9~echo-1.test~test.svc.cluster.local");
    const metrics = await (await fetch(`http://127.0.0.1:${proxy.port}/stats/prometheus`)).text();
    assert.match(metrics, /istio_agent_scrapes_total 1/);

    // `wait` (the postStart hook) returns once the status port is ready.
    const wait = runAgent(["wait", "--url", `http://127.0.0.1:${proxy.port}/healthz/ready`, "--timeoutSeconds", "20"]);
    assert.equal(await wait.exited, 0, wait.output().stderr);
    assert.match(wait.output().stdout, /Envoy is ready!/);
  } finally {
    proxy.child.kill("SIGTERM");
  }
  assert.equal(await proxy.exited, 0);
});

test("proxy exits 0 after a POST to /quitquitquit", async () => {
  const proxy = await startProxy({ GRPC_XDS_BOOTSTRAP: join(dir, "quit", "grpc-bootstrap.json") });
  const res = await fetch(`http://127.0.0.1:${proxy.port}/quitquitquit`, { method: "POST" });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "OK");
  assert.equal(await proxy.exited, 0);
  assert.ok(proxy.lines.some((l) => l.msg === "agent stopping"));
});

test("wait exits 255 with Istio's message when the URL never becomes ready", async () => {
  const wait = runAgent(["wait", "--url", "http://127.0.0.1:1/healthz/ready", "--timeoutSeconds", "0"]);
  assert.equal(await wait.exited, 255);
  assert.match(wait.output().stderr, /^timeout waiting for Envoy proxy to become ready. Last error: /);
});
