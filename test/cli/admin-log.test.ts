// `sluice admin log` and sluiced's ControlZ: the scopes listed, set and reset, directly
// (--ctrlz-address) and through a port-forward to the control plane's pod, found by its labels as
// istioctl finds it. The test cluster runs no kubelet, so test/portforward's front answers the pod's
// port-forward with sluiced's ControlZ port. (istioctl's own admin log cannot run here: client-go's
// port-forward protocol is not the one the front speaks.)
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { PortForwardFront } from "../portforward/index.ts";
import { loggedLine, runSluice, stopProcess } from "./processes.ts";

const SLUICED = fileURLToPath(new URL("../../bin/sluiced.js", import.meta.url));
const MESH = fileURLToPath(new URL("../../examples/mesh", import.meta.url));

describe("sluice admin log against sluiced's ControlZ", () => {
  let sluiced: ChildProcess;
  let address = "";
  const lines: Record<string, unknown>[] = [];
  const admin = (...args: string[]) => runSluice(["admin", "log", "--ctrlz-address", address, ...args]);

  before(async () => {
    sluiced = spawn(
      process.execPath,
      [
        SLUICED,
        ...["--configDir", MESH, "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "", "--httpsAddr", ""],
        ...["--monitoringAddr", "127.0.0.1:0", "--httpAddr", "127.0.0.1:0"],
        ...["--ctrlz_address", "127.0.0.1", "--ctrlz_port", "0", "--log_output_level", "default:info,ads:warn"],
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const listening = await loggedLine(sluiced, (l) => l.msg === "ControlZ listening");
    address = `127.0.0.1:${listening.ctrlzPort}`;
    sluiced.stdout?.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line));
    });
  });

  after(() => stopProcess(sluiced));

  test("lists every scope with its levels, as --log_output_level set them", async () => {
    const { stdout, code } = await admin();
    assert.equal(code, 0, stdout);
    assert.match(stdout, /^ACTIVE SCOPE +DESCRIPTION +LOG LEVEL +STACK TRACE LEVEL\n/);
    assert.match(stdout, /^ads +ADS: the xDS server, its streams and pushes +warn +none$/m);
    assert.match(stdout, /^default +Unscoped logging messages\. +info +none$/m);
    const json = JSON.parse((await admin("-o", "json")).stdout) as { scope_name: string; log_level: string }[];
    assert.deepEqual(
      json.find((s) => s.scope_name === "config"),
      {
        scope_name: "config",
        log_level: "info",
        stack_trace_level: "none",
        description: "Config loading and validation",
      },
    );
  });

  test("sets output and stack trace levels, and resets them", async () => {
    assert.equal((await admin("--level", "config:debug", "--stack-trace-level", "config:debug")).code, 0);
    const scopes = JSON.parse((await admin("-o", "json")).stdout) as {
      scope_name: string;
      log_level: string;
      stack_trace_level: string;
    }[];
    assert.deepEqual(
      scopes.filter((s) => s.scope_name === "config").map((s) => [s.log_level, s.stack_trace_level]),
      [["debug", "debug"]],
    );
    // The ControlZ API itself, as istioctl calls it: an unknown scope is a 400 naming it.
    const unknown = await fetch(`http://${address}/scopej/nosuch`, { method: "PUT", body: "{}" });
    assert.equal(unknown.status, 400);
    assert.equal(await unknown.text(), "unknown scope name: nosuch");
    assert.equal((await admin("--reset")).code, 0);
    const reset = JSON.parse((await admin("-o", "json")).stdout) as { log_level: string; stack_trace_level: string }[];
    assert.ok(reset.every((s) => s.log_level === "info" && s.stack_trace_level === "none"));
  });

  test("refuses a level that is not one", async () => {
    const { stdout, code } = await admin("--level", "ads:verbose");
    assert.equal(code, 1);
    assert.match(stdout, /Error: pattern ads:verbose did not match/);
  });
});

describe("sluice admin log through a port-forward to the control plane pod", { skip: clusterSkipReason() }, () => {
  let cluster: Cluster;
  let front: PortForwardFront;
  let sluiced: ChildProcess;
  let dir: string;
  let kubeconfig: string;
  let namespace: string;
  const sluice = (args: string[]) => runSluice(["--kubeconfig", kubeconfig, "-i", namespace, ...args]);

  before(async () => {
    cluster = await sharedCluster();
    dir = await mkdtemp(join(tmpdir(), "sluice-admin-log-"));
    namespace = await cluster.namespace("istiod");
    for (const [name, revision] of [
      ["istiod-canary-1", "canary"],
      ["istiod-1", "default"],
    ]) {
      await cluster.must("POST", `/api/v1/namespaces/${namespace}/pods`, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, labels: { app: "istiod", "istio.io/rev": revision } },
        spec: { containers: [{ name: "discovery", image: "sluiced" }] },
      });
    }
    sluiced = spawn(
      process.execPath,
      [
        SLUICED,
        ...["--configDir", MESH, "--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "", "--httpsAddr", ""],
        ...["--monitoringAddr", "127.0.0.1:0", "--httpAddr", "127.0.0.1:0"],
        ...["--ctrlz_address", "127.0.0.1", "--ctrlz_port", "0"],
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const listening = await loggedLine(sluiced, (l) => l.msg === "ControlZ listening");
    front = await PortForwardFront.start(cluster.kubeConfig());
    kubeconfig = join(dir, "kubeconfig");
    front.writeKubeconfig(kubeconfig);
    // Only the default revision's pod reaches sluiced: the canary's forward finds nothing listening.
    front.forwardPodPort({ namespace, name: "istiod-1" }, 9876, listening.ctrlzPort as number);
  });

  after(async () => {
    await stopProcess(sluiced);
    await front?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("finds the default revision's pod, and sets and lists its scopes", async () => {
    const set = await sluice(["admin", "log", "--level", "kube:debug,mesh:error"]);
    assert.equal(set.code, 0, set.stdout);
    const listed = await sluice(["admin", "log"]);
    assert.equal(listed.code, 0, listed.stdout);
    assert.match(listed.stdout, /^kube +The Kubernetes config source +debug +none$/m);
    assert.match(listed.stdout, /^mesh +Mesh config +error +none$/m);
    const pod = front.forwardRequests.at(-1);
    assert.deepEqual([pod?.pod, pod?.ports], ["istiod-1", ["9876"]]);
  });

  test("goes to the pod named, and says when nothing answers there", async () => {
    const { stdout, code } = await sluice(["admin", "log", "istiod-canary-1"]);
    assert.equal(code, 1);
    assert.match(stdout, /^Error: /m);
    assert.equal(front.forwardRequests.at(-1)?.pod, "istiod-canary-1");
  });
});
