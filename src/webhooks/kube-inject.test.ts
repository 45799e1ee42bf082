// Golden tests of `sluice kube-inject`: testdata/<name>.yaml → <name>.yaml.injected (with
// <name>.mesh.yaml as the mesh config and <name>.values.yaml as Istio's values when present;
// native*.yaml with native sidecars), and the
// workloads among Istio's conformance inputs → testdata/conformance/<file>.injected.
// UPDATE_GOLDEN=1 rewrites the goldens.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { assertValidPod } from "../../test/support/pod-check.ts";
import { decodeConfigText } from "../config/decode.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG, loadMeshConfig, type MeshConfig } from "../config/index.ts";
import type { Pod } from "./inject/pod.ts";
import { DEFAULT_INJECTION_SETTINGS, type InjectionSettings, injectionSettingsFromValues } from "./inject/settings.ts";
import { kubeInjectObject, kubeInjectText } from "./kube-inject.ts";

const here = dirname(new URL(import.meta.url).pathname);
const testdata = join(here, "testdata");
const conformanceInputs = join(here, "../../../shared/conformance/istio/inputs");

function kubeInject(
  file: string,
  mesh: MeshConfig,
  settings: InjectionSettings = DEFAULT_INJECTION_SETTINGS,
  warnings: string[] = [],
): string {
  return kubeInjectText(readFileSync(file, "utf8"), file, {
    mesh,
    settings,
    warn: (message) => warnings.push(message),
  });
}

function assertGoldenText(file: string, actual: string): void {
  if (process.env.UPDATE_GOLDEN === "1") {
    writeFileSync(file, actual);
    return;
  }
  assert.ok(existsSync(file), `missing golden file ${file}: run the test with UPDATE_GOLDEN=1`);
  assert.equal(actual, readFileSync(file, "utf8"), `differs from ${file} (UPDATE_GOLDEN=1 rewrites it)`);
}

/** Every injected pod (template) in kube-inject's output is a structurally valid Pod. */
function assertInjectedPodsValid(output: string): number {
  let injected = 0;
  for (const doc of decodeConfigText(output, "output")) {
    const obj = doc.object;
    assert.ok(obj, doc.error);
    const spec = obj.spec as { template?: Pod; jobTemplate?: { spec: { template: Pod } } } | undefined;
    const pod = obj.kind === "Pod" ? (obj as unknown as Pod) : (spec?.template ?? spec?.jobTemplate?.spec.template);
    if (!pod) continue;
    const annotations =
      obj.kind === "CronJob"
        ? (obj.spec as { jobTemplate: { metadata?: Pod["metadata"] } }).jobTemplate.metadata?.annotations
        : pod.metadata?.annotations;
    if (annotations?.["sidecar.istio.io/status"] === undefined) continue;
    assertValidPod(pod);
    injected++;
  }
  return injected;
}

describe("sluice kube-inject goldens", () => {
  const inputs = readdirSync(testdata).filter((f) => /(?<!\.mesh|\.values)\.yaml$/.test(f));
  for (const input of inputs) {
    it(input, () => {
      const beside = (suffix: string) => join(testdata, input.replace(/\.yaml$/, suffix));
      const mesh = existsSync(beside(".mesh.yaml"))
        ? loadMeshConfig(readFileSync(beside(".mesh.yaml"), "utf8")).mesh
        : DEFAULT_MESH_CONFIG;
      const values: unknown = existsSync(beside(".values.yaml"))
        ? parse(readFileSync(beside(".values.yaml"), "utf8"))
        : {};
      const settings = { ...injectionSettingsFromValues(values), nativeSidecars: input.startsWith("native") };
      const output = kubeInject(join(testdata, input), mesh, settings);
      assertGoldenText(join(testdata, `${input}.injected`), output);
      if (input !== "skipped.yaml") assert.ok(assertInjectedPodsValid(output) > 0, "no pod was injected");
    });
  }

  it("injects an empty pod template as a pod without containers", () => {
    const [doc] = decodeConfigText(
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template: {}\n",
      "x",
    );
    const out = kubeInjectObject(doc.object as ConfigObject, {
      mesh: DEFAULT_MESH_CONFIG,
      settings: DEFAULT_INJECTION_SETTINGS,
      warn: () => assert.fail("nothing to skip"),
    });
    const pod = (out.spec as { template: Pod }).template;
    assert.deepEqual(
      pod.spec.containers.map((c) => c.name),
      ["istio-proxy"],
    );
    assertValidPod(pod);
  });

  it("names the file and line of a document it cannot read", () => {
    const text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: []}\n---\n- not\n- an object\n";
    assert.throws(
      () =>
        kubeInjectText(text, "bad.yaml", {
          mesh: DEFAULT_MESH_CONFIG,
          settings: DEFAULT_INJECTION_SETTINGS,
          warn: () => {},
        }),
      /^Error: bad\.yaml:6: /,
    );
  });

  it("says why it skipped a workload", () => {
    const warnings: string[] = [];
    const output = kubeInject(
      join(testdata, "skipped.yaml"),
      DEFAULT_MESH_CONFIG,
      DEFAULT_INJECTION_SETTINGS,
      warnings,
    );
    assert.equal(assertInjectedPodsValid(output), 0);
    assert.deepEqual(warnings, [
      '===> Skipping injection because Deployment "host-net" has host networking enabled\n',
      '===> Skipping injection because Pod "opted-out" has sidecar injection disabled\n',
      '===> Skipping injection because ReplicaSet "opted-out-by-annotation" has sidecar injection disabled\n',
      '===> Skipping injection because Pod "kube-system/dns" has sidecar injection disabled\n',
    ]);
  });

  it("Istio's conformance inputs that hold workloads", (t) => {
    if (!existsSync(conformanceInputs)) {
      t.skip("../shared/conformance/istio/inputs is not present");
      return;
    }
    let files = 0;
    for (const input of readdirSync(conformanceInputs).filter((f) => f.endsWith(".yaml"))) {
      const file = join(conformanceInputs, input);
      const hasWorkload = decodeConfigText(readFileSync(file, "utf8"), file).some((doc) =>
        ["Deployment", "StatefulSet", "DaemonSet", "Pod"].includes(doc.object?.kind ?? ""),
      );
      if (!hasWorkload) continue;
      const output = kubeInject(file, DEFAULT_MESH_CONFIG);
      assertGoldenText(join(testdata, "conformance", `${input}.injected`), output);
      assert.ok(assertInjectedPodsValid(output) > 0, `${input}: no pod was injected`);
      files++;
    }
    assert.ok(files > 0, "no conformance input holds a workload");
  });
});
