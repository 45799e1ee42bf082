// `sluice ztunnel-config` reading a ztunnel of the cluster, as istioctl finds one: the ztunnel
// DaemonSet's pods in the Istio namespace (-i), the one on a node (--node), or the ztunnel on a
// workload pod's node (the output then filtered to that workload). The test cluster runs no kubelet
// and no ztunnel: the DaemonSet and its pods are objects written by the test (on nodes that do not
// exist), and the CLI goes through test/portforward's front, whose port-forward to a ztunnel pod's
// 15000 reaches a small HTTP server serving a dump. istioctl is not run beside it: its port-forward
// does not speak the front's WebSocket protocol.
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { PortForwardFront } from "../portforward/index.ts";
import { runSluice } from "./processes.ts";

const skip = clusterSkipReason();

describe("sluice ztunnel-config from a ztunnel pod", { skip }, () => {
  let cluster: Cluster;
  let front: PortForwardFront;
  let admin: Server;
  let dir: string;
  let kubeconfig: string;
  let istioNamespace: string;
  let appNamespace: string;
  const adminRequests: string[] = [];

  const sluice = (...args: string[]) => runSluice([...args, "-i", istioNamespace, "--kubeconfig", kubeconfig]);

  const createPod = (name: string, namespace: string, node: string, labels: Record<string, string>) =>
    cluster.must("POST", `/api/v1/namespaces/${namespace}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace, labels },
      spec: { nodeName: node, containers: [{ name: "main", image: "main" }] },
    });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "sluice-zc-kube-"));
    cluster = await sharedCluster();
    front = await PortForwardFront.start(cluster.kubeConfig());
    kubeconfig = join(dir, "kubeconfig");
    front.writeKubeconfig(kubeconfig);
    istioNamespace = await cluster.namespace("istio-system");
    appNamespace = await cluster.namespace("shop");
    await cluster.must("POST", `/apis/apps/v1/namespaces/${istioNamespace}/daemonsets`, {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { name: "ztunnel", namespace: istioNamespace },
      spec: {
        selector: { matchLabels: { app: "ztunnel" } },
        template: { metadata: { labels: { app: "ztunnel" } }, spec: { containers: [{ name: "z", image: "z" }] } },
      },
    });
    await createPod("ztunnel-aaaaa", istioNamespace, "node-a", { app: "ztunnel" });
    await createPod("ztunnel-bbbbb", istioNamespace, "node-b", { app: "ztunnel" });
    await createPod("cart-1", appNamespace, "node-b", { app: "cart" });

    const dump = JSON.stringify({
      workloads: [
        {
          uid: "u1",
          workloadIps: ["10.1.0.1"],
          name: "cart-1",
          namespace: appNamespace,
          node: "node-b",
          protocol: "HBONE",
        },
        {
          uid: "u2",
          workloadIps: ["10.1.0.2"],
          name: "cart-2",
          namespace: appNamespace,
          node: "node-b",
          protocol: "HBONE",
        },
      ],
    });
    admin = createServer((req, res) => {
      adminRequests.push(`${req.method} ${req.url}`);
      if (req.url === "/config_dump") res.end(dump);
      else if (req.method === "POST" && req.url?.startsWith("/logging")) res.end("current log level is info\n");
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => admin.listen(0, "127.0.0.1", resolve));
    const port = (admin.address() as AddressInfo).port;
    for (const name of ["ztunnel-aaaaa", "ztunnel-bbbbb"]) {
      front.forwardPodPort({ name, namespace: istioNamespace }, 15000, port);
    }
  });

  after(async () => {
    await front?.close();
    admin?.close();
    if (cluster) {
      for (const ns of [istioNamespace, appNamespace])
        if (ns) await cluster.request("DELETE", `/api/v1/namespaces/${ns}`);
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The pods the front was asked to forward since `before` requests, as namespace/name:port. */
  const forwardedSince = (before: number) =>
    front.forwardRequests.slice(before).map((f) => `${f.namespace}/${f.pod}:${f.ports.join(",")}`);

  test("without a pod: one of the ztunnel DaemonSet's pods, its /config_dump on 15000", async () => {
    const before = front.forwardRequests.length;
    const { stdout, code } = await sluice("ztunnel-config", "workload");
    assert.equal(code, 0, stdout);
    assert.match(stdout, new RegExp(`^${appNamespace}\\s+cart-1\\s+10\\.1\\.0\\.1\\s+node-b\\s+None\\s+HBONE$`, "m"));
    assert.deepEqual(forwardedSince(before), [`${istioNamespace}/ztunnel-aaaaa:15000`]);
    assert.equal(adminRequests.at(-1), "GET /config_dump");
  });

  test("a node's ztunnel (--node), and a named ztunnel pod", async () => {
    const before = front.forwardRequests.length;
    assert.equal((await sluice("zc", "services", "--node", "node-b")).code, 0);
    assert.equal((await sluice("zc", "policies", `ztunnel-bbbbb.${istioNamespace}`)).code, 0);
    assert.deepEqual(forwardedSince(before), [
      `${istioNamespace}/ztunnel-bbbbb:15000`,
      `${istioNamespace}/ztunnel-bbbbb:15000`,
    ]);
    const none = await sluice("zc", "workload", "--node", "node-c");
    assert.deepEqual(none, { stdout: "Error: no pods found\n", code: 1 });
  });

  test("a workload's pod: its node's ztunnel, the output only that workload", async () => {
    const before = front.forwardRequests.length;
    const { stdout, code } = await sluice("zc", "workload", `cart-1.${appNamespace}`);
    assert.equal(code, 0, stdout);
    assert.deepEqual(
      stdout
        .trimEnd()
        .split("\n")
        .slice(1)
        .map((l) => l.split(/\s+/)[1]),
      ["cart-1"],
    );
    assert.deepEqual(forwardedSince(before), [`${istioNamespace}/ztunnel-bbbbb:15000`]);
  });

  test("certificates differ between ztunnels: without a pod or node there must be one ztunnel", async () => {
    const { stdout, code } = await sluice("zc", "certificates");
    assert.deepEqual({ stdout, code }, { stdout: "Error: ztunnel pod name or --node must be set\n", code: 1 });
  });

  test("a pod whose admin port answers nothing: the failure names the ztunnel", async () => {
    const { stdout, code } = await sluice(
      "zc",
      "workload",
      `ztunnel-aaaaa.${istioNamespace}`,
      "--proxy-admin-port",
      "15001",
    );
    assert.equal(code, 1);
    assert.match(
      stdout,
      new RegExp(`^Error: failed to execute command on ztunnel-aaaaa\\.${istioNamespace} Ztunnel: `),
    );
  });

  test("log: every ztunnel's levels, or one's; --level and --reset as istioctl sends them", async () => {
    const before = adminRequests.length;
    const all = await sluice("zc", "log");
    assert.equal(all.code, 0, all.stdout);
    assert.equal(
      all.stdout,
      `ztunnel-aaaaa.${istioNamespace}:\ncurrent log level is info\n\nztunnel-bbbbb.${istioNamespace}:\ncurrent log level is info\n\n`,
    );
    assert.equal((await sluice("zc", "log", `ztunnel-bbbbb.${istioNamespace}`, "--level", "warning")).code, 0);
    assert.equal((await sluice("zc", "log", "--level", "access:debug,info")).code, 0);
    const reset = await sluice("zc", "log", `ztunnel-aaaaa.${istioNamespace}`, "-r");
    assert.deepEqual(reset, { stdout: `ztunnel-aaaaa.${istioNamespace}:\ncurrent log level is info\n\n`, code: 0 });
    assert.deepEqual(adminRequests.slice(before), [
      "POST /logging?level=",
      "POST /logging?level=",
      "POST /logging?level=warn",
      "POST /logging?level=access:debug,info",
      "POST /logging?level=access:debug,info",
      "POST /logging?level=info&reset",
    ]);
  });

  test("log: bad levels, --level with --reset, and a pod that is no ztunnel are refused", async () => {
    const before = adminRequests.length;
    assert.deepEqual(await sluice("zc", "log", "--level", "loud"), {
      stdout: "Error: unrecognized logging level: loud\n",
      code: 1,
    });
    assert.deepEqual(await sluice("zc", "log", "--level", "access:shouty"), {
      stdout: "Error: unrecognized logging level: shouty\n",
      code: 1,
    });
    assert.deepEqual(await sluice("zc", "log", "--level", "info", "--reset"), {
      stdout: "Error: --level cannot be combined with --reset\n",
      code: 1,
    });
    assert.deepEqual(await sluice("zc", "log", `cart-1.${appNamespace}`), {
      stdout: "Error: workloads command is only supported by Ztunnel proxies: cart-1\n",
      code: 1,
    });
    assert.equal(adminRequests.length, before);
  });
});
