// /debug/inject's view of the templates: each one's output for a sample pod, as YAML that reads back
// to the partial pod the injector merges.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parse } from "yaml";
import { DEFAULT_MESH_CONFIG } from "../../config/index.ts";
import { renderedTemplates } from "./inject.ts";
import type { Pod } from "./pod.ts";
import { DEFAULT_INJECTION_SETTINGS } from "./settings.ts";

test("every template is rendered for the sample pod as YAML of a partial pod", () => {
  const rendered = renderedTemplates(DEFAULT_MESH_CONFIG, DEFAULT_INJECTION_SETTINGS);
  assert.deepEqual(Object.keys(rendered).sort(), ["gateway", "grpc-agent", "grpc-simple", "sidecar"]);
  const pod = (name: string): Pod => parse(rendered[name]);
  const names = (containers: { name: string }[] | undefined) => (containers ?? []).map((c) => c.name);
  assert.ok(names(pod("sidecar").spec.containers).includes("istio-proxy"));
  assert.ok(names(pod("sidecar").spec.initContainers).includes("istio-init"));
  assert.ok(names(pod("grpc-agent").spec.containers).includes("istio-proxy"));
  // The sample pod's name reaches the proxy's arguments or environment.
  assert.match(rendered.sidecar, /sample/);
});

test("native sidecars put the proxy among the init containers", () => {
  const rendered = renderedTemplates(DEFAULT_MESH_CONFIG, { ...DEFAULT_INJECTION_SETTINGS, nativeSidecars: true });
  const sidecar: Pod = parse(rendered.sidecar);
  assert.ok((sidecar.spec.initContainers ?? []).some((c) => c.name === "istio-proxy"));
  assert.ok(!(sidecar.spec.containers ?? []).some((c) => c.name === "istio-proxy"));
});
