// `sluice waypoint` against istioctl's, in the shared test cluster: the same steps run by istioctl
// and by sluice in a namespace of their own, each undoing its own, and their stdout, stderr, exit
// status and the Gateways and namespace labels they left compared. No controller programs a
// waypoint here, so the test writes the Programmed condition itself where one is wanted, and
// `--wait` is seen timing out (after one second's read) on a waypoint nobody programs.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { peersSkipReason, requirePeer } from "../peers/paths.ts";
import { writers } from "../support/managed-fields.ts";

const skip = clusterSkipReason() ?? peersSkipReason("istioctl");
const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const GATEWAYS = "/apis/gateway.networking.k8s.io/v1";

interface Run {
  args: string;
  stdout: string;
  stderr: string;
  code: number;
}

type Tool = "istioctl" | "sluice";

describe("sluice waypoint, as istioctl waypoint", { skip }, () => {
  let cluster: Cluster;
  const namespaces: Record<Tool, string> = { istioctl: "", sluice: "" };

  const run = (tool: Tool, args: string[]): Promise<Run> => {
    const [file, prefix] = tool === "istioctl" ? [requirePeer("istioctl"), []] : [process.execPath, [SLUICE]];
    return new Promise((resolve) => {
      execFile(file, [...prefix, ...args, "--kubeconfig", cluster.kubeconfigPath], (err, stdout, stderr) =>
        resolve({ args: args.join(" "), stdout, stderr, code: err ? Number(err.code) : 0 }),
      );
    });
  };

  /** The namespace's Gateways as the cluster has them: labels, spec, status and who wrote them. */
  const gateways = async (ns: string) => {
    const list = (await cluster.must("GET", `${GATEWAYS}/namespaces/${ns}/gateways`)).body as {
      items: { metadata: { name: string; labels?: unknown }; spec: unknown; status?: { conditions?: unknown[] } }[];
    };
    return list.items.map((g) => ({
      name: g.metadata.name,
      labels: g.metadata.labels,
      spec: g.spec,
      conditions: (g.status?.conditions ?? []).length,
      writers: writers(g),
    }));
  };
  const namespaceLabels = async (ns: string) =>
    ((await cluster.must("GET", `/api/v1/namespaces/${ns}`)).body as { metadata: { labels?: Record<string, string> } })
      .metadata.labels?.["istio.io/use-waypoint"];

  /** Marks the Gateway Programmed, as a waypoint controller would (through its status subresource). */
  const markProgrammed = (ns: string, name: string) =>
    cluster.must(
      "PATCH",
      `${GATEWAYS}/namespaces/${ns}/gateways/${name}/status`,
      {
        status: {
          conditions: [
            {
              type: "Programmed",
              status: "True",
              reason: "Programmed",
              message: "Resource programmed, assigned to service(s) waypoint.x.svc.cluster.local:15008",
              lastTransitionTime: "2026-01-01T00:00:00Z",
              observedGeneration: 1,
            },
          ],
        },
      },
      { "content-type": "application/merge-patch+json" },
    );

  before(async () => {
    cluster = await sharedCluster();
    for (const tool of ["istioctl", "sluice"] as const) namespaces[tool] = await cluster.namespace(`waypoint-${tool}`);
  });

  after(async () => {
    if (!cluster) return;
    for (const ns of Object.values(namespaces)) if (ns) await cluster.request("DELETE", `/api/v1/namespaces/${ns}`);
  });

  test("apply, list, status, apply --wait, delete: the same output, Gateways and labels", async () => {
    const seen: Record<Tool, unknown[]> = { istioctl: [], sluice: [] };
    for (const tool of ["istioctl", "sluice"] as const) {
      const ns = namespaces[tool];
      const steps = seen[tool];
      // The namespace's name differs between the tools' runs: each output names it as NS.
      const step = async (...args: string[]) => {
        const r = await run(tool, args);
        const same = (text: string) => text.replaceAll(ns, "NS");
        steps.push({ ...r, args: same(r.args), stdout: same(r.stdout), stderr: same(r.stderr) });
        return r;
      };
      await step("waypoint", "list", "-n", ns);
      const applied = await step("waypoint", "apply", "-n", ns);
      assert.equal(applied.code, 0, applied.stderr);
      await step("waypoint", "apply", "-n", ns, "--name", "wp2", "--for", "all", "-r", "canary", "--enroll-namespace");
      await step("waypoint", "apply", "-n", ns, "--name", "wp3", "--enroll-namespace");
      steps.push(await gateways(ns), await namespaceLabels(ns));
      await markProgrammed(ns, "waypoint");
      await step("waypoint", "list", "-n", ns);
      const all = await run(tool, ["waypoint", "list", "-A"]);
      steps.push(
        all.stdout
          .split("\n")
          .filter((line) => line.startsWith(`${ns} `))
          .map((l) => l.replaceAll(ns, "NS")),
      );
      await step("waypoint", "status", "-n", ns, "--wait=false");
      await step("waypoint", "apply", "-n", ns, "--wait");
      await step("waypoint", "apply", "-n", ns, "--name", "wp2", "-r", "canary", "--wait", "--waypoint-timeout", "1s");
      await step("waypoint", "apply", "-n", `${ns}-missing`);
      await step("waypoint", "delete", "-n", ns, "nosuch", "waypoint");
      await step("waypoint", "delete", "-n", ns, "-r", "canary");
      await step("waypoint", "delete", "-n", ns, "--all");
      steps.push(await gateways(ns));
    }
    assert.deepEqual(seen.sluice, seen.istioctl);
    // What both said, so that the comparison above compared something.
    const said = seen.sluice as Run[];
    assert.equal(said[0].stdout, "No waypoints found.\n");
    assert.equal(said[1].stdout, "✅ waypoint NS/waypoint applied\n");
    assert.match(
      said[2].stdout,
      /not enrolled in ambient[\s\S]*✅ namespace NS labeled with "istio.io\/use-waypoint: wp2"\n$/,
    );
    assert.match(said[3].stdout, /already has an enrolled Waypoint/);
    assert.deepEqual(seen.sluice[5], "wp2");
    assert.match(said[6].stdout, /^NAME\s+REVISION\s+TRAFFIC TYPE\s+PROGRAMMED\nwaypoint\s+default\s+none\s+True\n/);
    assert.equal(said[9].stdout, "✅ waypoint NS/waypoint applied\n✅ waypoint NS/waypoint is ready!\n");
    assert.equal(said[10].stderr, "Error: timed out while waiting for waypoint\tNS/wp2\n");
    assert.equal(said[10].code, 1);
    assert.equal(said[12].stdout, "waypoint NS/nosuch not found\nwaypoint NS/waypoint deleted\n");
    assert.deepEqual(seen.sluice.at(-1), []);
  });
});
