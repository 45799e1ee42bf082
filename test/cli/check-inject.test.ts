// `sluice x check-inject` against istioctl's (the peer build), on a private API server holding the
// injection webhooks `sluice install` renders for two revisions: the same table, byte for byte, for
// pods, a Deployment's pod and label sets across namespaces labelled every way injection is chosen.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { analyzeWebhooks, checkInjectTable } from "../../src/cli/check-inject.ts";
import { installObjects, loadValues, Values } from "../../src/install/index.ts";
import { Cluster, clusterSkipReason } from "../cluster/index.ts";
import { peersSkipReason, requirePeer } from "../peers/paths.ts";

const skip = clusterSkipReason() ?? peersSkipReason("istioctl");
const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));

describe("sluice x check-inject and istioctl x check-inject", { skip }, () => {
  let cluster: Cluster;
  const run = (program: string[], args: string[]) =>
    spawnSync(program[0], [...program.slice(1), "--kubeconfig", cluster.kubeconfigPath, "x", "check-inject", ...args], {
      encoding: "utf8",
    });
  const same = (args: string[]) => {
    const ours = run([process.execPath, SLUICE], args);
    const theirs = run([requirePeer("istioctl")], args);
    assert.equal(ours.stdout, theirs.stdout, `stdout of ${args.join(" ")}`);
    assert.equal(ours.status, theirs.status, `exit status of ${args.join(" ")}: ${ours.stderr}`);
    return ours.stdout;
  };

  before(async () => {
    cluster = await Cluster.start({ crdDir: false });
    const namespaces: Record<string, Record<string, string>> = {
      plain: {},
      enabled: { "istio-injection": "enabled" },
      disabled: { "istio-injection": "disabled" },
      canary: { "istio.io/rev": "canary" },
    };
    for (const [name, labels] of Object.entries(namespaces)) {
      await cluster.must("POST", "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, labels },
      });
      for (const [pod, podLabels] of Object.entries({
        app: { app: "web" },
        optout: { app: "web", "sidecar.istio.io/inject": "false" },
        optin: { app: "job", "sidecar.istio.io/inject": "true" },
        rev: { app: "rev", "istio.io/rev": "canary" },
      })) {
        await cluster.must("POST", `/api/v1/namespaces/${name}/pods`, {
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: pod, labels: podLabels },
          spec: { containers: [{ name: "app", image: "example/app" }] },
        });
      }
    }
    await cluster.must("POST", "/apis/apps/v1/namespaces/enabled/deployments", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
      spec: {
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "app", image: "example/app" }] },
        },
      },
    });
    // The webhooks last: the pods above are made without anything to call.
    for (const revision of ["", "canary"]) {
      for (const object of installObjects(new Values(loadValues([], [`revision=${revision}`])), false)) {
        if (object.kind !== "MutatingWebhookConfiguration") continue;
        await cluster.must("POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", object);
      }
    }
  });

  after(async () => {
    await cluster?.stop();
  });

  test("print the same table for every pod and namespace", () => {
    for (const ns of ["plain", "enabled", "disabled", "canary"]) {
      for (const pod of ["app", "optout", "optin", "rev"]) same([`${pod}.${ns}`]);
    }
    // The table is one both tools print: a check that it says something.
    assert.match(
      same(["app.enabled"]),
      /^istio-sidecar-injector\s+default\s+\S+✔\S+\s+Namespace label istio-injection=enabled matches$/m,
    );
  });

  test("find a Deployment's pod, and take labels instead of a pod", () => {
    same(["deployment/web", "-n", "enabled"]);
    same(["-n", "canary", "-l", "app=web"]);
    same(["-n", "plain", "-l", "app=job,sidecar.istio.io/inject=true"]);
    same(["-n", "disabled", "-l", "app=web,istio.io/rev=canary"]);
  });

  test("say which pod is missing", () => {
    const missing = run([process.execPath, SLUICE], ["nothere.plain"]);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /pods "nothere" not found/);
  });
});

describe("check-inject's table", () => {
  test("reports no hooks, and more than one injecting", () => {
    assert.equal(checkInjectTable([]), "ERROR: no Istio injection hooks present.\n");
    const hook = (name: string) => ({
      metadata: { name, labels: { "istio.io/rev": name } },
      webhooks: [
        {
          name: `${name}.sidecar-injector.istio.io`,
          namespaceSelector: { matchExpressions: [{ key: "inject", operator: "In", values: ["yes"] }] },
        },
      ],
    });
    const verdicts = analyzeWebhooks(
      [hook("b"), hook("a"), { metadata: { name: "other" }, webhooks: [{ name: "x.example.com" }] }],
      {},
      { inject: "yes" },
    );
    assert.deepEqual(
      verdicts.map((v) => [v.name, v.injected]),
      [
        ["a", true],
        ["b", true],
      ],
    );
    assert.match(checkInjectTable(verdicts), /ERROR: multiple webhooks will inject, which can lead to errors$/);
  });
});
