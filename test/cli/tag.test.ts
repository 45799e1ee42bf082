// `sluice tag` against istioctl's, in the shared test cluster: a revision installed from `sluice
// install`'s objects in a namespace of its own (the Istio namespace of every command, -i), then the
// same steps run by istioctl and by sluice, each undoing its own, and their stdout, stderr, exit
// status and the objects they left compared. The cluster is shared, so tag names are unique to this
// run and `tag list` is compared on this run's rows (other tests' revisions may come and go between
// the two commands). `tag set default` is not run: it would take over every istio-injection=enabled
// namespace of the cluster; `tag generate default` shows its objects instead.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { applyObjects, installObjects, type KubeObject, loadValues, Values } from "../../src/install/index.ts";
import { KubeClient } from "../../src/sources/kube/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { peersSkipReason, requirePeer } from "../peers/paths.ts";
import { writers } from "../support/managed-fields.ts";

const skip = clusterSkipReason() ?? peersSkipReason("istioctl");
const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const ADMISSION = "/apis/admissionregistration.k8s.io/v1";
/** Labels that name who rendered an object (Helm and istioctl's chart version, or Sluice's). */
const PRODUCER_LABELS = ["helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/version"];

interface Run {
  stdout: string;
  stderr: string;
  code: number;
}

type Tool = "istioctl" | "sluice";

describe("sluice tag, as istioctl tag", { skip }, () => {
  let cluster: Cluster;
  let ns: string;
  let app: string;
  const unique = randomBytes(3).toString("hex");
  const rev = `tagged-${unique}`;
  const tag = `prod-${unique}`;
  let installed: KubeObject[] = [];

  const run = (tool: Tool, args: string[], stdin = "", istioNamespace = ns): Promise<Run> => {
    const [file, prefix] = tool === "istioctl" ? [requirePeer("istioctl"), []] : [process.execPath, [SLUICE]];
    return new Promise((resolve) => {
      const child = execFile(
        file,
        [...prefix, ...args, "-i", istioNamespace, "--kubeconfig", cluster.kubeconfigPath],
        (err, stdout, stderr) => resolve({ stdout, stderr, code: err ? Number(err.code) : 0 }),
      );
      child.stdin?.end(stdin);
    });
  };
  const both = async (args: string[], stdin = "") => ({
    istioctl: await run("istioctl", args, stdin),
    sluice: await run("sluice", args, stdin),
  });

  /** The objects named `tag` carries, as the cluster has them, without what the API server adds. */
  const tagObjects = async (name: string) => {
    const get = async (path: string) => {
      const res = await cluster.request("GET", path);
      // With who wrote it (managedFields' managers): istioctl applies under istio-ci.
      return res.status === 404 ? undefined : { ...comparable(res.body as KubeObject), writers: writers(res.body) };
    };
    return {
      webhook: await get(`${ADMISSION}/mutatingwebhookconfigurations/istio-revision-tag-${name}-${ns}`),
      service: await get(`/api/v1/namespaces/${ns}/services/istiod-revision-tag-${name}`),
    };
  };

  /** Labels the app namespace istio.io/rev=<value> (null: no label). */
  const labelApp = (value: string | null) =>
    cluster.must(
      "PATCH",
      `/api/v1/namespaces/${app}`,
      { metadata: { labels: { "istio.io/rev": value } } },
      { "content-type": "application/merge-patch+json" },
    );

  before(async () => {
    cluster = await sharedCluster();
    ns = await cluster.namespace("istio-tags");
    app = await cluster.namespace("tags-app");
    // What tags read of a revision: its injector's webhook configuration and its istiod Service.
    installed = installObjects(new Values(loadValues([], [`revision=${rev}`, `global.istioNamespace=${ns}`])), false);
    installed = installed.filter((o) => o.kind === "MutatingWebhookConfiguration" || o.kind === "Service");
    await applyObjects(new KubeClient(cluster.kubeConfig()), installed);
  });

  after(async () => {
    if (!cluster) return;
    for (const name of [`istio-revision-tag-${tag}-${ns}`, `istio-sidecar-injector-${rev}`]) {
      await cluster.request("DELETE", `${ADMISSION}/mutatingwebhookconfigurations/${name}`);
    }
  });

  test("set, set again, set --overwrite, list, remove: the same output and the same objects", async () => {
    const seen: Record<Tool, unknown[]> = { istioctl: [], sluice: [] };
    for (const tool of ["istioctl", "sluice"] as const) {
      const steps: unknown[] = seen[tool];
      const step = async (args: string[], stdin = "") => {
        const r = await run(tool, args, stdin);
        steps.push({ args: args.join(" "), ...r });
        return r;
      };
      const created = await step(["tag", "set", tag, "--revision", rev]);
      assert.equal(created.code, 0, created.stderr);
      steps.push(await tagObjects(tag));
      await step(["tag", "set", tag, "--revision", rev]);
      await step(["tag", "set", tag, "--revision", rev, "--overwrite"]);
      steps.push(await tagObjects(tag));
      await labelApp(tag);
      const listed = await run(tool, ["tag", "list"]);
      steps.push(ownRows(listed.stdout, rev), listed.code);
      const json = await run(tool, ["tag", "list", "-o", "json"]);
      steps.push((JSON.parse(json.stdout) as { revision: string }[]).filter((t) => t.revision === rev));
      await step(["tag", "remove", tag], "n\n");
      await step(["tag", "remove", tag, "--skip-confirmation"]);
      await step(["tag", "remove", tag]);
      steps.push(await tagObjects(tag));
      await labelApp(null);
    }
    assert.deepEqual(seen.sluice, seen.istioctl);
    // What both said, so that the comparison above compared something.
    const said = seen.sluice as Run[];
    assert.match(
      said[0].stdout,
      new RegExp(`^Revision tag "${tag}" created, referencing control plane revision "${rev}"`),
    );
    assert.equal(said[2].stderr, `Error: revision tag "${tag}" already exists, and --overwrite is false\n`);
    assert.deepEqual(seen.sluice[5], [[tag, rev, app]]);
    assert.match(
      said[8].stdout,
      new RegExp(`still injected by tag "${tag}": ${app}\nProceed with operation\\? \\[y/N\\] Aborting operation.\n$`),
    );
    assert.equal(said[9].stdout, `Revision tag ${tag} removed\n`);
    assert.deepEqual(seen.sluice[11], { webhook: undefined, service: undefined });
  });

  test("the refusals: a tag named as a revision, an unknown revision or tag, an unknown format", async () => {
    for (const args of [
      ["tag", "set", rev, "--revision", rev],
      ["tag", "set", `x-${unique}`, "--revision", `nope-${unique}`],
      ["tag", "generate", `x-${unique}`, "--revision", `nope-${unique}`],
      ["tag", "remove", `nope-${unique}`],
      ["tag", "list", "-o", "foo"],
    ]) {
      const r = await both(args);
      assert.deepEqual(r.sluice, r.istioctl, args.join(" "));
      assert.equal(r.sluice.code, 1, args.join(" "));
    }
  });

  test("usage errors say what istioctl says; Sluice's exit status for them is 2", async () => {
    for (const args of [
      ["tag", "set", `x-${unique}`],
      ["tag", "set"],
      ["tag", "set", "a", "b", "--revision", rev],
      ["tag", "remove"],
      ["tag", "list", "extra"],
    ]) {
      const r = await both(args);
      assert.equal(r.istioctl.code, 1, args.join(" "));
      assert.equal(r.sluice.code, 2, args.join(" "));
      assert.equal(r.sluice.stderr.split("\n")[0], r.istioctl.stderr.split("\n")[0], args.join(" "));
    }
  });

  test("generate prints the objects set would apply; for default also the injection and validation webhooks", async () => {
    for (const name of [`gen-${unique}`, "default"]) {
      const r = await both(["tag", "generate", name, "--revision", rev]);
      assert.equal(r.sluice.code, 0, r.sluice.stderr);
      assert.equal(r.sluice.stderr, r.istioctl.stderr);
      const [ours, theirs] = [r.sluice.stdout, r.istioctl.stdout].map((text) =>
        parseAllDocuments(text).map((d) => comparable(d.toJS() as KubeObject)),
      );
      assert.deepEqual(ours, theirs, name);
      assert.deepEqual(
        ours.map((o) => `${o.kind} ${o.metadata.name}`),
        name === "default"
          ? [
              `MutatingWebhookConfiguration istio-revision-tag-default-${ns}`,
              "ValidatingWebhookConfiguration istiod-default-validator",
              "Service istiod-revision-tag-default",
            ]
          : [`MutatingWebhookConfiguration istio-revision-tag-${name}-${ns}`, `Service istiod-revision-tag-${name}`],
      );
    }
  });

  test("a tag whose injector Service is not in the Istio namespace is a conflict, said as istioctl says it", async () => {
    // -i names a namespace without the revision's Service: the tag's webhook would call nothing.
    // istioctl looks for conflicts only under the name a tag has in istio-system; nothing is created.
    const other = "istio-system";
    const runIn = (tool: Tool, args: string[], stdin = "") => run(tool, args, stdin, other);
    const generate = ["tag", "generate", tag, "--revision", rev];
    const [theirs, ours] = [await runIn("istioctl", generate), await runIn("sluice", generate)];
    assert.equal(ours.stderr, theirs.stderr);
    assert.match(ours.stderr, /^creating tag would conflict, pass --skip-confirmation to proceed:\nError \[IST0139\]/);
    // set asks, and a "no" applies nothing.
    const set = ["tag", "set", tag, "--revision", rev];
    const [theirSet, ourSet] = [await runIn("istioctl", set, "n\n"), await runIn("sluice", set, "n\n")];
    assert.deepEqual(ourSet, theirSet);
    assert.equal(ourSet.stdout, "Apply anyways? [y/N] ");
    const left = await cluster.request(
      "GET",
      `${ADMISSION}/mutatingwebhookconfigurations/istio-revision-tag-${tag}-${other}`,
    );
    assert.equal(left.status, 404);
  });
});

/** `tag list`'s rows of one revision, as cells. */
function ownRows(table: string, revision: string): string[][] {
  return table
    .split("\n")
    .map((line) => line.split(/ +/).map((cell) => cell.trim()))
    .filter((cells) => cells[1] === revision)
    .map((cells) => cells.filter((cell, i) => i < 2 || cell !== ""));
}

/**
 * What both tools decide of an object: kind, name, namespace, labels (but who rendered it), the
 * webhooks and the Service's ports and selector. A port without a target port is written
 * `targetPort: 0` by istioctl's Go serializer, which the API server reads as the port itself.
 */
function comparable(o: KubeObject) {
  const labels = Object.fromEntries(
    Object.entries(o.metadata.labels ?? {}).filter(([key]) => !PRODUCER_LABELS.includes(key)),
  );
  const spec = o.spec as { ports?: Record<string, unknown>[]; selector?: unknown } | undefined;
  const ports = spec?.ports?.map((p) => ({ ...p, targetPort: p.targetPort || p.port }));
  return {
    kind: o.kind,
    metadata: { name: o.metadata.name, namespace: o.metadata.namespace, labels, annotations: o.metadata.annotations },
    ...(o.webhooks ? { webhooks: o.webhooks } : {}),
    ...(spec ? { ports, selector: spec.selector } : {}),
  };
}
