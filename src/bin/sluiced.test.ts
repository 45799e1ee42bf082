import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { connect as tlsConnect } from "node:tls";
import { fileURLToPath } from "node:url";
import { Client, credentials, type ServiceError, status } from "@grpc/grpc-js";
import { SotwClient, sidecarNode } from "../../test/support/ads-client.ts";
import { CUSTOM_TYPE } from "../../test/support/custom-type-plugin.ts";

const SLUICED = fileURLToPath(new URL("../../bin/sluiced.js", import.meta.url));
const PLUGIN = fileURLToPath(new URL("../../test/support/custom-type-plugin.ts", import.meta.url));
const SERVICE_ENTRIES = "networking.istio.io/v1/ServiceEntry";

const serviceEntry = (name: string) => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata:
  name: ${name}
  namespace: prod
spec:
  hosts: [${name}.example.com]
  ports:
  - { number: 80, name: http, protocol: HTTP }
`;

interface LogLine {
  msg: string;
  [field: string]: unknown;
}

/** Starts sluiced and reads its JSON log lines. Its HTTP servers are off unless args name their addresses. */
function startSluiced(args: string[], env: Record<string, string> = {}, nodeArgs: string[] = []) {
  const admin = args.includes("--httpAddr") ? [] : ["--httpAddr", "", "--monitoringAddr", "", "--httpsAddr", ""];
  const child = spawn(process.execPath, [...nodeArgs, SLUICED, ...admin, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const lines: LogLine[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(JSON.parse(line) as LogLine);
    for (const wake of waiters.splice(0)) wake();
  });
  /** Waits (at most 60 s: the machine may be busy) for a log line. */
  const logged = async (match: (line: LogLine) => boolean, what: string): Promise<LogLine> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const found = lines.find(match);
      if (found) return found;
      if (Date.now() > deadline) assert.fail(`sluiced did not log ${what}; it logged ${JSON.stringify(lines)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  };
  return { child, exited, logged };
}

test("sluiced loads the config directory, follows its changes, and stops cleanly on SIGTERM", async () => {
  const dir = await mkdtemp(join(tmpdir(), "sluiced-"));
  await writeFile(join(dir, "a.yaml"), serviceEntry("a"));
  await writeFile(join(dir, "bad.yaml"), `${serviceEntry("bad")}---\nkind: [\n`);
  const { child, exited, logged } = startSluiced([
    "--configDir",
    dir,
    "--grpcAddr",
    "127.0.0.1:0",
    "--secureGRPCAddr",
    "",
  ]);

  try {
    const loaded = await logged((l) => l.msg === "config loaded", "the first load");
    assert.equal(loaded.scope, "config", "logged in Istio's config scope (--log_output_level config:<level>)");
    assert.equal(loaded.objects, 1);
    assert.equal(loaded.problems, 1);
    const problem = await logged(
      (l) => l.level === 50 && l.where === `${join(dir, "bad.yaml")}:11`,
      "the syntax error",
    );
    assert.match(problem.msg, /syntax error/);

    await writeFile(join(dir, "b.yaml"), serviceEntry("b"));
    const reloaded = await logged((l) => l.msg === "config file loaded" && l.file === join(dir, "b.yaml"), "b.yaml");
    assert.equal(reloaded.objects, 1);
  } finally {
    child.kill("SIGTERM");
  }
  assert.equal(await exited, 0);
  await logged((l) => l.msg === "shutting down", "its shutdown");
});

test("sluiced follows its --meshConfig file: a change is in force and logged, one that does not load is refused", async () => {
  const dir = await mkdtemp(join(tmpdir(), "sluiced-mesh-"));
  const meshConfig = join(dir, "mesh.yaml");
  await writeFile(meshConfig, "ingressClass: one\n");
  const { child, exited, logged } = startSluiced([
    ...["--meshConfig", meshConfig, "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", ""],
    ...["--httpAddr", "127.0.0.1:0", "--monitoringAddr", "", "--httpsAddr", ""],
  ]);
  try {
    const admin = await logged((l) => l.msg === "admin HTTP server listening", "the admin port");
    await logged((l) => l.msg === "xDS server listening", "the xDS port");
    const ingressClass = async () =>
      ((await (await fetch(`http://127.0.0.1:${admin.httpPort}/debug/mesh`)).json()) as { ingressClass: string })
        .ingressClass;
    assert.equal(await ingressClass(), "one");
    await writeFile(meshConfig, "ingressClass: two\n");
    await logged((l) => l.msg === "mesh config changed" && l.scope === "mesh", "the change");
    assert.equal(await ingressClass(), "two");
    await writeFile(meshConfig, "connectTimeout: 1x\n");
    const refused = await logged((l) => l.msg === "mesh config not changed: it does not load", "the refusal");
    assert.match(String(refused.err), /connectTimeout/);
    assert.equal(await ingressClass(), "two");
  } finally {
    child.kill("SIGTERM");
    await rm(dir, { recursive: true, force: true });
  }
  assert.equal(await exited, 0);
});

test("sluiced follows its --networksConfig file: new gateways are pushed, networks that do not load are refused", async () => {
  const dir = await mkdtemp(join(tmpdir(), "sluiced-networks-"));
  const networksConfig = join(dir, "networks.yaml");
  const gateway = (address: string) =>
    `networks: {west: {endpoints: [{fromRegistry: west}], gateways: [{address: ${address}, port: 15443}]}}\n`;
  await writeFile(networksConfig, gateway("192.0.2.1"));
  const { child, exited, logged } = startSluiced([
    ...["--networksConfig", networksConfig, "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", ""],
    ...["--httpAddr", "127.0.0.1:0", "--monitoringAddr", "", "--httpsAddr", ""],
  ]);
  try {
    const admin = await logged((l) => l.msg === "admin HTTP server listening", "the admin port");
    await logged((l) => l.msg === "xDS server listening", "the xDS port");
    const gateways = async () =>
      JSON.stringify(await (await fetch(`http://127.0.0.1:${admin.httpPort}/debug/networkz`)).json());
    assert.match(await gateways(), /192\.0\.2\.1/);
    await writeFile(networksConfig, gateway("192.0.2.2"));
    await logged((l) => l.msg === "mesh networks changed" && l.scope === "mesh", "the change");
    // In force from the push that follows the change (debounced).
    for (let tries = 0; !/192\.0\.2\.2/.test(await gateways()) && tries < 100; tries++) await sleep(100);
    assert.match(await gateways(), /192\.0\.2\.2/);
    await writeFile(networksConfig, "networks: {west: {endpoints: [{fromCidr: not-a-cidr}]}}\n");
    const refused = await logged((l) => l.msg === "mesh networks not changed: they do not load", "the refusal");
    assert.match(String(refused.err), /fromCidr/);
    assert.match(await gateways(), /192\.0\.2\.2/);
  } finally {
    child.kill("SIGTERM");
    await rm(dir, { recursive: true, force: true });
  }
  assert.equal(await exited, 0);
});

test("sluiced refuses an invalid --log_output_level, naming the entry", () => {
  const run = spawnSync(process.execPath, [SLUICED, "--log_output_level", "default:info,ads:loud"], {
    encoding: "utf8",
  });
  assert.notEqual(run.status, 0);
  assert.match(run.stderr, /--log_output_level: invalid level "loud" in "ads:loud"/);
});

test("sluiced serves ADS on --grpcAddr: config over the api generator, pushed after an edit; plugins; debug needs auth", async () => {
  const dir = await mkdtemp(join(tmpdir(), "sluiced-xds-"));
  await writeFile(join(dir, "a.yaml"), serviceEntry("a"));
  const { child, exited, logged } = startSluiced(
    ["--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "", "--plugin", PLUGIN],
    { ENABLE_XDS_API_GENERATOR_AUTH: "false", PILOT_DEBOUNCE_AFTER: "10ms" },
    // The plugin is TypeScript: like a user's, it needs a loader in the compiled sluiced.
    ["--import", "tsx"],
  );
  const clients: SotwClient[] = [];
  try {
    const listening = await logged((l) => l.msg === "xDS server listening", "its xDS port");
    assert.equal(typeof listening.grpcPort, "number");
    const address = `127.0.0.1:${listening.grpcPort}`;

    const config = SotwClient.connect(address);
    clients.push(config);
    config.request({ node: sidecarNode("replica-1", "istio-system"), typeUrl: SERVICE_ENTRIES });
    const first = await config.next();
    assert.equal(first.typeUrl, SERVICE_ENTRIES);
    assert.equal(first.resources.length, 1);
    assert.equal(first.resources[0].typeUrl, "type.googleapis.com/istio.mcp.v1alpha1.Resource");
    config.ack(first);

    await writeFile(join(dir, "b.yaml"), serviceEntry("b"));
    const pushed = await config.next();
    assert.equal(pushed.typeUrl, SERVICE_ENTRIES);
    assert.equal(pushed.resources.length, 2);
    assert.notEqual(pushed.versionInfo, first.versionInfo);
    await logged((l) => l.msg === "push debounce stable" && l.full === true, "the push");

    const plugin = SotwClient.connect(address);
    clients.push(plugin);
    plugin.request({ node: sidecarNode("app-1", "prod"), typeUrl: CUSTOM_TYPE });
    assert.equal((await plugin.next()).typeUrl, CUSTOM_TYPE);

    const debug = SotwClient.connect(address);
    clients.push(debug);
    debug.request({ node: sidecarNode("cli", "istio-system"), typeUrl: "istio.io/debug/syncz" });
    const end = await debug.ended;
    assert.equal(end.code, status.UNAUTHENTICATED);
  } finally {
    for (const c of clients) c.close();
    child.kill("SIGTERM");
  }
  assert.equal(await exited, 0);
  await logged((l) => l.msg === "stopped", "the end of its shutdown");
});

test("a second sluiced takes its config from the first over an xds:// config source and serves it on", async () => {
  const dir = await mkdtemp(join(tmpdir(), "sluiced-upstream-"));
  await writeFile(join(dir, "a.yaml"), serviceEntry("a"));
  await writeFile(join(dir, "b.yaml"), serviceEntry("b"));
  const env = { ENABLE_XDS_API_GENERATOR_AUTH: "false", PILOT_DEBOUNCE_AFTER: "10ms" };
  const upstream = startSluiced(["--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", ""], env);
  let replica: ReturnType<typeof startSluiced> | undefined;
  let client: SotwClient | undefined;
  try {
    const { grpcPort } = await upstream.logged((l) => l.msg === "xDS server listening", "the upstream's port");
    const meshConfig = join(await mkdtemp(join(tmpdir(), "sluiced-replica-")), "mesh.yaml");
    await writeFile(
      meshConfig,
      `rootNamespace: istio-system\nconfigSources:\n- address: xds://127.0.0.1:${grpcPort}\n`,
    );
    replica = startSluiced(["--meshConfig", meshConfig, "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", ""], env);
    const loaded = await replica.logged((l) => l.msg === "config loaded", "the replica's first load");
    assert.equal(loaded.objects, 2);
    const listening = await replica.logged((l) => l.msg === "xDS server listening", "the replica's port");

    client = SotwClient.connect(`127.0.0.1:${listening.grpcPort}`);
    client.request({ node: sidecarNode("reader", "istio-system"), typeUrl: SERVICE_ENTRIES });
    const first = await client.next();
    assert.equal(first.resources.length, 2);
    client.ack(first);

    // An edit and a delete upstream reach the replica's own clients.
    await writeFile(join(dir, "c.yaml"), serviceEntry("c"));
    let res = await client.next();
    client.ack(res);
    assert.equal(res.resources.length, 3);
    await rm(join(dir, "a.yaml"));
    res = await client.next();
    assert.equal(res.resources.length, 2);
  } finally {
    client?.close();
    replica?.child.kill("SIGTERM");
    upstream.child.kill("SIGTERM");
  }
  assert.equal(await upstream.exited, 0);
  assert.equal(await replica?.exited, 0);
});

test("sluiced with its CA and admin server: /ready, /metrics and debug over HTTP; 15012 is TLS from the CA, whose certificate service refuses the unauthenticated; webhooks on HTTPS", async () => {
  const dir = await mkdtemp(join(tmpdir(), "sluiced-ca-"));
  await writeFile(join(dir, "a.yaml"), serviceEntry("a"));
  const caDir = await mkdtemp(join(tmpdir(), "sluiced-cadir-"));
  const networks = join(caDir, "mesh-networks.yaml");
  await writeFile(networks, "networks:\n  east:\n    gateways:\n    - { address: 35.1.1.1, port: 15443 }\n");
  const args = ["--configDir", dir, "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "127.0.0.1:0", "--caDir", caDir];
  args.push("--networksConfig", networks);
  const { child, exited, logged } = startSluiced(
    [...args, "--httpAddr", "127.0.0.1:0", "--monitoringAddr", "127.0.0.1:0", "--httpsAddr", "127.0.0.1:0"],
    {
      ROOT_CA_DIR: join(caDir, "no-cacerts"),
    },
  );
  try {
    const adminPorts = await logged((l) => l.msg === "admin HTTP server listening", "its admin ports");
    const listening = await logged((l) => l.msg === "xDS server listening", "its xDS ports");
    assert.equal(typeof listening.securePort, "number");
    const http = `http://127.0.0.1:${adminPorts.httpPort}`;
    const monitoring = `http://127.0.0.1:${adminPorts.monitoringPort}`;
    assert.equal((await fetch(`${http}/ready`)).status, 200);
    const metrics = await (await fetch(`${monitoring}/metrics`)).text();
    assert.match(metrics, /pilot_info\{/);
    assert.match(metrics, /process_cpu_seconds_total/);
    const configz = (await (await fetch(`${http}/debug/configz`)).json()) as Array<{ kind?: string }>;
    assert.ok(configz.some((object) => object.kind === "ServiceEntry"));
    const networkz = JSON.stringify(await (await fetch(`${http}/debug/networkz`)).json());
    assert.match(networkz, /35\.1\.1\.1/, "--networksConfig's gateway is on the push");
    const templates = (await (await fetch(`${http}/debug/inject`)).json()) as Record<string, string>;
    assert.deepEqual(Object.keys(templates).sort(), ["gateway", "grpc-agent", "grpc-simple", "sidecar"]);

    // The root is persisted in --caDir; the secure port presents a certificate it issued.
    const root = readFileSync(join(caDir, "ca-cert.pem"), "utf8");
    const socket = tlsConnect({
      host: "127.0.0.1",
      port: Number(listening.securePort),
      ca: root,
      servername: "istiod.istio-system.svc",
      ALPNProtocols: ["h2"],
    });
    const peer = await new Promise<string>((resolve, reject) => {
      socket.once("secureConnect", () => resolve(socket.getPeerX509Certificate()?.subjectAltName ?? ""));
      socket.once("error", reject);
    });
    socket.destroy();
    assert.match(peer, /DNS:istiod\.istio-system\.svc/);

    const caClient = new Client(`127.0.0.1:${listening.securePort}`, credentials.createSsl(Buffer.from(root)), {
      "grpc.ssl_target_name_override": "istiod.istio-system.svc",
    });
    const refused = await new Promise<ServiceError | null>((resolve) =>
      caClient.makeUnaryRequest(
        "/istio.v1.auth.IstioCertificateService/CreateCertificate",
        (value: Buffer) => value,
        (value: Buffer) => value,
        Buffer.alloc(0),
        (err) => resolve(err),
      ),
    );
    caClient.close();
    assert.equal(refused?.code, status.UNAUTHENTICATED);

    // The validation webhook (HTTPS with istiod's certificate) refuses an invalid VirtualService.
    const webhooks = await logged((l) => l.msg === "webhooks listening", "its webhook port");
    const review = await postJson(Number(webhooks.port), root, "/validate", {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: "u-1",
        operation: "CREATE",
        kind: { group: "networking.istio.io", version: "v1", kind: "VirtualService" },
        object: {
          apiVersion: "networking.istio.io/v1",
          kind: "VirtualService",
          metadata: { name: "bad", namespace: "default" },
          spec: { hosts: [] },
        },
      },
    });
    assert.equal(review.response.uid, "u-1");
    assert.equal(review.response.allowed, false);
    assert.match(review.response.status.message, /^configuration is invalid: /);
    assert.match(await (await fetch(`${monitoring}/metrics`)).text(), /galley_validation_failed\{/);
  } finally {
    child.kill("SIGTERM");
  }
  assert.equal(await exited, 0);
});

/** POSTs JSON over HTTPS to sluiced's webhook port, trusting `ca` for istiod's name. */
function postJson(
  port: number,
  ca: string,
  path: string,
  body: unknown,
): Promise<{ response: { uid: string; allowed: boolean; status: { message: string } } }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        ca,
        servername: "istiod.istio-system.svc",
        headers: { "content-type": "application/json" },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => resolve(JSON.parse(text)));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}
