import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { pino } from "pino";
import { DEFAULT_MESH_CONFIG } from "../../config/index.ts";
import { InjectionError, injectPod } from "./inject.ts";
import { InjectionSettingsWatcher, injectionSettings, parseInjectorConfig } from "./injector-config.ts";
import type { Pod } from "./pod.ts";
import { injectRequired } from "./policy.ts";

// The shape of the `config` key Istio's Helm chart renders (its templates shortened).
const ISTIO_CONFIG = `
defaultTemplates: [sidecar]
policy: enabled
alwaysInjectSelector:
  - matchLabels:
      always: "yes"
neverInjectSelector:
  - matchExpressions:
      - key: never
        operator: Exists
injectedAnnotations:
  example.com/injected: "yes"
template: "{{ Template_Version_And_Istio_Version_Mismatched_Check_Installation }}"
templates:
  sidecar: |
    spec:
      containers: []
  gateway: |
    metadata: {}
`;

function pod(annotations: Record<string, string> = {}, labels: Record<string, string> = { app: "web" }): Pod {
  return {
    metadata: { name: "web-0", namespace: "shop", labels, annotations },
    spec: { containers: [{ name: "web", image: "web:2" }] },
  };
}

function logged() {
  const lines: { level: number; msg: string; from?: unknown; template?: string; err?: string }[] = [];
  const log = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { lines, log };
}

const FROM = { config: "ConfigMap istio-system/istio-sidecar-injector key config", values: "the values" };

describe("parseInjectorConfig", () => {
  it("reads the fields Sluice applies and the names of the templates", () => {
    const config = parseInjectorConfig(ISTIO_CONFIG);
    assert.equal(config.policy, "enabled");
    assert.deepEqual(config.defaultTemplates, ["sidecar"]);
    assert.deepEqual(config.alwaysInjectSelector, [{ matchLabels: { always: "yes" }, matchExpressions: undefined }]);
    assert.deepEqual(config.neverInjectSelector, [
      { matchLabels: undefined, matchExpressions: [{ key: "never", operator: "Exists", values: undefined }] },
    ]);
    assert.deepEqual(config.injectedAnnotations, { "example.com/injected": "yes" });
    assert.deepEqual(config.templates, ["sidecar", "gateway"]);
  });

  it("leaves out what the text leaves out or sets to null, and an empty defaultTemplates", () => {
    assert.deepEqual(parseInjectorConfig("policy: null\ndefaultTemplates: []\n"), {
      policy: undefined,
      alwaysInjectSelector: undefined,
      neverInjectSelector: undefined,
      injectedAnnotations: undefined,
      defaultTemplates: undefined,
      aliases: undefined,
      templates: [],
    });
  });

  it("refuses text that is not YAML, not a map, or has a field of the wrong shape", () => {
    assert.throws(() => parseInjectorConfig("policy: [enabled"), /Flow sequence|flow collection|Missing/i);
    assert.throws(() => parseInjectorConfig("- policy"), /expected a map, found \["policy"\]/);
    assert.throws(() => parseInjectorConfig("policy: on"), /policy: "on" is not one of "enabled", "disabled"/);
    assert.throws(
      () => parseInjectorConfig("injectedAnnotations:\n  a: 1\n"),
      /injectedAnnotations\.a: expected a string/,
    );
    assert.throws(
      () => parseInjectorConfig("neverInjectSelector:\n- matchLabels: [a]\n"),
      /neverInjectSelector\[0\]\.matchLabels: expected a map/,
    );
    assert.throws(() => parseInjectorConfig("aliases:\n  s: sidecar\n"), /aliases\.s: expected a list/);
  });
});

describe("injectionSettings", () => {
  it("puts the config's fields over the values'", () => {
    const values = {
      global: { hub: "registry.example.com/istio", proxy: { autoInject: "disabled" } },
      sidecarInjectorWebhook: { injectedAnnotations: { "from/values": "1" }, defaultTemplates: ["gateway"] },
    };
    const settings = injectionSettings(parseInjectorConfig("policy: enabled\ninjectedAnnotations: {a: b}\n"), values);
    assert.equal(settings.hub, "registry.example.com/istio");
    assert.equal(settings.policy, "enabled");
    assert.deepEqual(settings.injectedAnnotations, { a: "b" });
    // The config leaves defaultTemplates out: the values' stays.
    assert.deepEqual(settings.defaultTemplates, ["gateway"]);
  });

  it("names the config's templates Sluice has no built-in for", () => {
    const settings = injectionSettings(parseInjectorConfig(`templates:\n  sidecar: x\n  custom: y\n`), {});
    assert.deepEqual(settings.customTemplates, ["custom"]);
  });
});

describe("injection under the config", () => {
  const mesh = DEFAULT_MESH_CONFIG;

  it("selects by the config's policy and selectors", () => {
    const settings = injectionSettings(parseInjectorConfig(ISTIO_CONFIG), {});
    assert.equal(injectRequired(settings, pod().spec, pod().metadata), true);
    const never = pod({}, { never: "" });
    assert.equal(injectRequired(settings, never.spec, never.metadata), false);
    const disabled = injectionSettings(parseInjectorConfig("policy: disabled\n"), {});
    assert.equal(injectRequired(disabled, pod().spec, pod().metadata), false);
    const always = pod({}, { always: "yes" });
    assert.equal(
      injectRequired(
        { ...disabled, alwaysInjectSelector: settings.alwaysInjectSelector },
        always.spec,
        always.metadata,
      ),
      true,
    );
  });

  it("adds the injected annotations", () => {
    const settings = injectionSettings(parseInjectorConfig(ISTIO_CONFIG), {});
    const injected = injectPod({ pod: pod(), mesh, settings }).pod;
    assert.equal(injected.metadata.annotations?.["example.com/injected"], "yes");
  });

  it("expands an alias into the templates it names, once", () => {
    const settings = injectionSettings(
      parseInjectorConfig("aliases:\n  proxyless: [grpc-agent]\n  grpc-agent: [nothing]\n"),
      {},
    );
    const injected = injectPod({ pod: pod({ "inject.istio.io/templates": "proxyless" }), mesh, settings }).pod;
    const names = injected.spec.containers.map((c) => c.name);
    assert.ok(names.includes("istio-proxy"), names.join(", "));
    assert.equal(injected.spec.initContainers, undefined, "grpc-agent has no init container");
  });

  it("refuses a pod asking for a template only the config has, saying why", () => {
    const settings = injectionSettings(parseInjectorConfig("templates:\n  custom: |\n    spec: {}\n"), {});
    assert.throws(
      () => injectPod({ pod: pod({ "inject.istio.io/templates": "sidecar,custom" }), mesh, settings }),
      (err: Error) =>
        err instanceof InjectionError &&
        err.message ===
          'failed to run injection template: requested template "custom" is a Go template of the injector config, which Sluice does not run; built-in templates: sidecar, gateway, grpc-agent, grpc-simple',
    );
    assert.throws(
      () => injectPod({ pod: pod({ "inject.istio.io/templates": "constructor" }), mesh, settings }),
      /requested template "constructor" not found; have sidecar, gateway, grpc-agent, grpc-simple/,
    );
  });
});

describe("InjectionSettingsWatcher", () => {
  it("refuses to start on a text that does not parse, naming where it came from", () => {
    const { log } = logged();
    assert.throws(
      () =>
        new InjectionSettingsWatcher({ config: "policy: maybe", values: undefined }, { from: FROM, revision: "", log }),
      /^Error: ConfigMap istio-system\/istio-sidecar-injector key config: policy: "maybe" is not one of/,
    );
    assert.throws(
      () => new InjectionSettingsWatcher({ config: undefined, values: "[1]" }, { from: FROM, revision: "", log }),
      /^Error: the values: expected a map/,
    );
  });

  it("takes a change, keeps the last good text of a key that does not parse or goes missing", () => {
    const { lines, log } = logged();
    const watcher = new InjectionSettingsWatcher(
      { config: "policy: enabled\n", values: '{"global":{"hub":"one.example.com"}}' },
      { from: FROM, revision: "canary", log },
    );
    assert.equal(watcher.settings.revision, "canary");
    assert.equal(watcher.settings.hub, "one.example.com");

    watcher.update({ values: '{"global":{"hub":"two.example.com","proxy":{"image":"proxy"}}}' });
    assert.equal(watcher.settings.hub, "two.example.com");
    assert.equal(watcher.settings.proxyImage, "proxy");
    assert.equal(watcher.settings.revision, "canary", "REVISION stays over the values'");

    watcher.update({ config: "policy: disabled\n", values: '{"global": {' });
    assert.equal(watcher.settings.policy, "disabled", "the good key is taken");
    assert.equal(watcher.settings.hub, "two.example.com", "the bad one keeps its last good text");
    const error = lines.find((l) => l.level === 50);
    assert.equal(error?.from, FROM.values);
    assert.equal(error?.msg, "injection settings not changed: the text does not parse");

    watcher.update({ config: undefined });
    assert.equal(watcher.settings.policy, "disabled");
    assert.ok(lines.some((l) => l.level === 40 && l.from === FROM.config && /missing/.test(l.msg)));
  });

  it("warns once per config change of each template it will not run", () => {
    const { lines, log } = logged();
    // kube-gateway is the Gateway deployment controller's, which has its built-in: no warning.
    const config = "templates:\n  sidecar: a\n  mine: b\n  kube-gateway: k\n";
    const watcher = new InjectionSettingsWatcher({ config, values: undefined }, { from: FROM, revision: "", log });
    const warnings = () => lines.filter((l) => l.level === 40 && l.template !== undefined).map((l) => l.template);
    assert.deepEqual(warnings(), ["mine"]);
    assert.equal(lines.find((l) => l.template === "mine")?.from, FROM.config);
    watcher.update({ values: "global: {hub: x}\n" });
    assert.deepEqual(warnings(), ["mine"], "a values change is no config change");
    watcher.update({ config: `${config}  theirs: c\n` });
    assert.deepEqual(warnings(), ["mine", "mine", "theirs"]);
  });
});
