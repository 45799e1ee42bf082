// `sluice install`'s objects against what Istio's own installer renders for the same values
// (`istioctl manifest generate`, the peer build): the same objects under the same names, with Istio's
// labels, the same webhooks, Service, selectors, autoscaler, mesh config and injector policy — so that
// Istio's tooling, dashboards and runbooks find Sluice where they find istiod. What one renders and the
// other does not is listed below, each with why, and the test fails when the lists stop being true.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, test } from "node:test";
import { parse, parseAllDocuments } from "yaml";
import {
  installObjects,
  type KubeObject,
  loadValues,
  manifestText,
  mergeValues,
  parseValuesText,
  Values,
} from "../../src/install/index.ts";
import { peersSkipReason, requirePeer } from "../peers/paths.ts";

const skip = peersSkipReason("istioctl");

/** Istio's objects Sluice does not render, by `Kind/name` (for the revision's name suffix), and why. */
const onlyIstio = (suffix: string): Readonly<Record<string, string>> => ({
  [`ConfigMap/values${suffix}`]: "istioctl's record of the values it installed with (the operator's bookkeeping)",
});
/** Sluice's objects istioctl leaves out of `manifest generate`, and why. */
const ONLY_SLUICE: Readonly<Record<string, string>> = {
  "Namespace/istio-system": "istioctl creates the namespace outside the manifests",
  "ValidatingWebhookConfiguration/istiod-default-validator":
    "Istio's base chart renders it (defaultrevision-validatingwebhookconfiguration.yaml); istioctl makes it as a tag",
};
/** Sluice's objects under the revision's name suffix that Istio does not render, and why. */
const onlySluiceRevisioned = (suffix: string): Readonly<Record<string, string>> => ({
  [`Role/istio-reader${suffix}`]:
    "the remote-secret reader reads the system namespace's mesh ConfigMap by this Role where Istio's ClusterRole reads every ConfigMap",
  [`RoleBinding/istio-reader${suffix}`]: "its binding",
});
/** The labels Istio's tooling selects on; the chart's bookkeeping labels (helm.sh/chart, managed-by, version) differ. */
const ISTIO_LABELS = [
  "app",
  "istio",
  "istio.io/rev",
  "app.kubernetes.io/name",
  "app.kubernetes.io/part-of",
  "app.kubernetes.io/instance",
  "operator.istio.io/component",
  "install.operator.istio.io/owning-resource",
  "release",
];

const key = (o: KubeObject) => `${o.kind}/${o.metadata.name}`;

function istioctlObjects(sets: string[]): Map<string, KubeObject> {
  const args = ["manifest", "generate", ...sets.flatMap((s) => ["--set", s])];
  const text = execFileSync(requirePeer("istioctl"), args, { encoding: "utf8", maxBuffer: 64 << 20 });
  const out = new Map<string, KubeObject>();
  for (const doc of parseAllDocuments(text)) {
    const object = doc.toJS() as KubeObject | null;
    if (!object || object.kind === "CustomResourceDefinition") continue;
    // The ingress gateway is a component of its own, not the control plane's.
    if (object.metadata.name.includes("ingressgateway")) continue;
    out.set(key(object), object);
  }
  return out;
}

function sluiceObjects(sets: string[]): Map<string, KubeObject> {
  const objects = installObjects(new Values(loadValues([], sets)), false);
  return new Map(objects.map((o) => [key(o), o]));
}

const pick = (labels: Record<string, string> | undefined) =>
  Object.fromEntries(ISTIO_LABELS.filter((l) => labels?.[l] !== undefined).map((l) => [l, labels?.[l]]));
const spec = (o: KubeObject | undefined) => (o as { spec?: Record<string, unknown> } | undefined)?.spec ?? {};
const data = (o: KubeObject | undefined) => (o as { data?: Record<string, string> } | undefined)?.data ?? {};

for (const { title, sets, suffix } of [
  { title: "the default revision", sets: [], suffix: "" },
  { title: "revision canary", sets: ["revision=canary"], suffix: "-canary" },
]) {
  describe(`sluice install and istioctl manifest generate, ${title}`, { skip }, () => {
    const istio = skip ? new Map() : istioctlObjects(sets);
    const sluice = sluiceObjects(sets);
    const istiod = `istiod${suffix}`;

    test("render the same objects, but for the listed ones", () => {
      const onlyIstioFound = [...istio.keys()].filter((k) => !sluice.has(k)).sort();
      const onlySluice = [...sluice.keys()].filter((k) => !istio.has(k)).sort();
      const expectedOnlySluice = [
        ...Object.keys(ONLY_SLUICE).filter((k) => suffix === "" || !k.includes("default-validator")),
        ...Object.keys(onlySluiceRevisioned(suffix)),
      ];
      assert.deepEqual(onlyIstioFound, Object.keys(onlyIstio(suffix)).sort());
      assert.deepEqual(onlySluice, expectedOnlySluice.sort());
    });

    test("label every shared object as Istio does", () => {
      for (const [k, theirs] of istio) {
        const ours = sluice.get(k);
        if (!ours) continue;
        assert.deepEqual(pick(ours.metadata.labels), pick(theirs.metadata.labels), `${k} labels`);
        assert.equal(ours.metadata.namespace, theirs.metadata.namespace, `${k} namespace`);
      }
    });

    test("bind the remote-secret reader's ClusterRole to the same ServiceAccount", () => {
      const binding = `ClusterRoleBinding/istio-reader-clusterrole${suffix}-istio-system`;
      const subjects = (o: KubeObject | undefined) => (o as { subjects?: unknown[] } | undefined)?.subjects;
      assert.deepEqual(subjects(sluice.get(binding)), subjects(istio.get(binding)));
    });

    test("register the same webhooks", () => {
      const hooks = (o: KubeObject | undefined) =>
        ((o as { webhooks?: Record<string, unknown>[] } | undefined)?.webhooks ?? []).map(
          ({ caBundle: _c, ...hook }) => hook,
        );
      const mutating = `MutatingWebhookConfiguration/istio-sidecar-injector${suffix}`;
      assert.deepEqual(hooks(sluice.get(mutating)), hooks(istio.get(mutating)));
      const validating = `ValidatingWebhookConfiguration/istio-validator${suffix}-istio-system`;
      assert.deepEqual(hooks(sluice.get(validating)), hooks(istio.get(validating)));
    });

    test("serve the same Service and select the same pods", () => {
      assert.deepEqual(spec(sluice.get(`Service/${istiod}`)), spec(istio.get(`Service/${istiod}`)));
      const ours = spec(sluice.get(`Deployment/${istiod}`)) as Record<string, Record<string, unknown>>;
      const theirs = spec(istio.get(`Deployment/${istiod}`)) as Record<string, Record<string, unknown>>;
      assert.deepEqual(ours.selector, theirs.selector);
      assert.deepEqual(ours.strategy, theirs.strategy);
      const pod = (s: Record<string, Record<string, unknown>>) =>
        s.template as { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
      assert.deepEqual(pick(pod(ours).metadata.labels), pick(pod(theirs).metadata.labels));
      assert.equal(pod(ours).spec.serviceAccountName, pod(theirs).spec.serviceAccountName);
      const container = (s: Record<string, Record<string, unknown>>) =>
        (pod(s).spec.containers as Record<string, unknown>[])[0] ?? {};
      for (const field of ["name", "ports", "readinessProbe", "securityContext", "resources"]) {
        assert.deepEqual(container(ours)[field], container(theirs)[field], `container ${field}`);
      }
      assert.deepEqual(
        spec(sluice.get(`HorizontalPodAutoscaler/${istiod}`)),
        spec(istio.get(`HorizontalPodAutoscaler/${istiod}`)),
      );
    });

    test("configure the same mesh and injection policy", () => {
      const configMap = `ConfigMap/istio${suffix}`;
      assert.deepEqual(parse(data(sluice.get(configMap)).mesh ?? ""), parse(data(istio.get(configMap)).mesh ?? ""));
      assert.deepEqual(
        parse(data(sluice.get(configMap)).meshNetworks ?? ""),
        parse(data(istio.get(configMap)).meshNetworks ?? ""),
      );
      const injector = `ConfigMap/istio-sidecar-injector${suffix}`;
      const policy = (o: KubeObject | undefined) => {
        const config = parse(data(o).config ?? "") as Record<string, unknown>;
        return {
          defaultTemplates: config.defaultTemplates,
          policy: config.policy,
          alwaysInjectSelector: config.alwaysInjectSelector ?? [],
          neverInjectSelector: config.neverInjectSelector ?? [],
          injectedAnnotations: config.injectedAnnotations ?? {},
        };
      };
      assert.deepEqual(policy(sluice.get(injector)), policy(istio.get(injector)));
    });
  });
}

describe("sluice install's values", () => {
  test("take an IstioOperator's values, mesh config and revision", () => {
    const values = parseValuesText(
      [
        "apiVersion: install.istio.io/v1alpha1",
        "kind: IstioOperator",
        "spec:",
        "  revision: blue",
        "  meshConfig: {accessLogFile: /dev/stdout}",
        "  values: {pilot: {replicaCount: 3}}",
      ].join("\n"),
      "operator.yaml",
    );
    assert.deepEqual(values, {
      pilot: { replicaCount: 3 },
      meshConfig: { accessLogFile: "/dev/stdout" },
      revision: "blue",
    });
  });

  test("merge files and --set over the defaults, maps key by key", () => {
    const merged = mergeValues(loadValues([]), { pilot: { env: { A: "1" } } });
    assert.equal(new Values(merged).string("pilot.image"), "sluiced");
    assert.deepEqual(new Values(merged).stringMap("pilot.env"), { A: "1" });
    const objects = installObjects(new Values(loadValues([], ["revision=blue"])), false);
    assert.equal(objects.find((o) => o.kind === "Deployment")?.metadata.name, "istiod-blue");
    const mesh = parse(
      (objects.find((o) => o.metadata.name === "istio-blue") as unknown as { data: { mesh: string } }).data.mesh,
    ) as { defaultConfig: { discoveryAddress: string } };
    assert.equal(mesh.defaultConfig.discoveryAddress, "istiod-blue.istio-system.svc:15012");
  });

  test("name the value of a wrong type", () => {
    assert.throws(
      () => installObjects(new Values(loadValues([], ["pilot.autoscaleMax=[1]"])), false),
      /values: pilot.autoscaleMax must be a whole number, not a list/,
    );
    assert.throws(() => loadValues([], ["pilot.replicaCount"]), /--set pilot.replicaCount: expected path=value/);
  });

  test("set replicas and a disruption budget when the autoscaler is off", () => {
    const objects = installObjects(
      new Values(loadValues([], ["pilot.autoscaleEnabled=false", "pilot.replicaCount=3"])),
      false,
    );
    const kinds = objects.map((o) => o.kind);
    assert.ok(!kinds.includes("HorizontalPodAutoscaler"));
    assert.ok(kinds.includes("PodDisruptionBudget"));
    assert.equal(
      (objects.find((o) => o.kind === "Deployment") as unknown as { spec: { replicas: number } }).spec.replicas,
      3,
    );
  });

  test("analysis: PILOT_ENABLE_ANALYSIS as the values say, and the status update it needs only when enabled", () => {
    const render = (sets: string[]) => {
      const objects = installObjects(new Values(loadValues([], sets)), false);
      const find = <T>(kind: string) => objects.find((o) => o.kind === kind) as unknown as T;
      const deployment = find<{
        spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
      }>("Deployment");
      const env = deployment.spec.template.spec.containers[0].env.find((e) => e.name === "PILOT_ENABLE_ANALYSIS");
      const rules = find<{ rules: { resources: string[]; verbs: string[] }[] }>("ClusterRole").rules;
      return { env: env?.value, statusUpdates: rules.filter((r) => r.resources.includes("*/status")) };
    };
    assert.deepEqual(render([]), { env: "false", statusUpdates: [] });
    const enabled = render(["global.istiod.enableAnalysis=true"]);
    assert.equal(enabled.env, "true");
    assert.deepEqual(
      enabled.statusUpdates.map((r) => r.verbs),
      [["update"]],
    );
  });

  test("render the CRDs first, each a CustomResourceDefinition without descriptions", () => {
    const objects = installObjects(new Values(loadValues([])));
    const crds = objects.filter((o) => o.kind === "CustomResourceDefinition");
    assert.ok(crds.length >= 28, `${crds.length} CRDs`);
    assert.deepEqual(
      objects.slice(0, crds.length).map((o) => o.kind),
      crds.map(() => "CustomResourceDefinition"),
    );
    assert.ok(crds.some((o) => o.metadata.name === "virtualservices.networking.istio.io"));
    assert.ok(crds.some((o) => o.metadata.name === "httproutes.gateway.networking.k8s.io"));
    assert.match(manifestText(objects), /^---\napiVersion: apiextensions.k8s.io\/v1\n/);
  });
});
