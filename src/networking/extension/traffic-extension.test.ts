// Golden tests of TrafficExtensions: each testdata case gives the extensions attached to a proxy (highest
// priority first, as the push snapshot orders them; WasmPlugins as `plugins`, translated as istiod does)
// and the ports its listeners serve; the output is the ECDS resources and, per listener class, the HTTP
// filter chain with the extensions in their phases. Every resource and filter passes Envoy's constraint
// checker.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { test } from "node:test";
import type { JsonValue } from "@bufbuild/protobuf";
import { assertGolden, protoJson, readGoldenInput, testdataDir } from "../../../test/support/golden.ts";
import { core, hcm } from "../../api/index.ts";
import type { RequestAuthenticationJwtRules, TrafficExtension, WasmPlugin } from "../../config/types/index.ts";
import { translateWasmPlugin } from "../../model/index.ts";
import { buildHttpFilters, envoyViolations, type ListenerClass } from "../httpfilter/index.ts";
import { EXTENSION_PHASES, extensionConfig, extensionNetworkFilters } from "./index.ts";

interface Case {
  /** TrafficExtensions, in the order given; the WasmPlugins' translations after them. */
  extensions?: TrafficExtension[];
  plugins?: WasmPlugin[];
  /** The listener port each class is built for. */
  ports?: Partial<Record<ListenerClass, number>>;
  jwtRules?: RequestAuthenticationJwtRules[];
}

const dir = testdataDir(import.meta.url);
const CLASSES: readonly ListenerClass[] = ["sidecarOutbound", "sidecarInbound", "gateway"];

for (const file of readdirSync(dir).filter((f) => f.endsWith(".in.yaml"))) {
  const name = file.slice(0, -".in.yaml".length);
  test(`traffic extension golden: ${name}`, () => {
    const input = readGoldenInput(dir, name) as Case;
    const extensions = [...(input.extensions ?? []), ...(input.plugins ?? []).map(translateWasmPlugin)];
    const ecds = extensions.flatMap((extension) => extensionConfig(extension, '{"auths":{}}') ?? []);
    for (const config of ecds) {
      // Remote code is for the istio-agent, which downloads it and hands Envoy a local file (the cluster is
      // "_"): as in Istio, a plugin without sha256 sends an empty one, which Envoy itself would refuse.
      const violations = envoyViolations(core.TypedExtensionConfigSchema, config).filter(
        (v) => !(v.path.endsWith("code.remote.sha256") && v.rule === "string.min_len"),
      );
      assert.deepEqual(violations, [], config.name);
    }
    const out: Record<string, JsonValue> = { ecds: ecds.map((c) => protoJson(core.TypedExtensionConfigSchema, c)) };
    for (const listenerClass of CLASSES) {
      const port = input.ports?.[listenerClass];
      const filters = buildHttpFilters({
        listenerClass,
        port,
        extensions,
        jwtRules: listenerClass === "sidecarOutbound" ? undefined : input.jwtRules,
        prometheusStats: true,
      });
      for (const filter of filters) assert.deepEqual(envoyViolations(hcm.HttpFilterSchema, filter), [], filter.name);
      const network = extensionNetworkFilters(extensions, EXTENSION_PHASES, listenerClass, port).map((f) => f.name);
      out[listenerClass] = { port: port ?? null, httpFilters: filters.map((f) => f.name), networkFilters: network };
    }
    out.httpFilterReference = protoJson(
      hcm.HttpFilterSchema,
      buildHttpFilters({ listenerClass: "sidecarInbound", extensions: extensions.slice(0, 1) })[1],
    );
    assertGolden(dir, name, out);
  });
}
