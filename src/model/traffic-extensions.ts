// The TrafficExtensions a push serves: the TrafficExtension objects, and every WasmPlugin translated into
// one as istiod translates them (pilot/pkg/config/kube/extensions/translate.go), so that one path builds
// both. Those istiod would drop (convertToTrafficExtensionWrapper) are left out.
import type { TrafficExtension, TrafficExtensionSpec, WasmPlugin } from "../config/types/index.ts";

/** Appended to a WasmPlugin's name by istiod's translation (`~` cannot occur in a Kubernetes name). */
export const WASM_PLUGIN_NAME_SUFFIX = "~istio-translated-wasmplugin";

/** Envoy's Lua filter takes at most 64 KiB of inline code. */
const MAX_LUA_CODE = 65536;

/** A copy without the fields left undefined, so a translated object holds what a decoded one would. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The synthetic TrafficExtension `<name>~istio-translated-wasmplugin` istiod makes of a WasmPlugin. */
export function translateWasmPlugin(plugin: WasmPlugin): TrafficExtension {
  const spec = plugin.spec ?? { url: "" };
  // The deprecated singular targetRef joins targetRefs, so only the list is read downstream.
  const targetRefs = spec.targetRefs?.length ? spec.targetRefs : spec.targetRef ? [spec.targetRef] : undefined;
  const { metadata } = plugin;
  const translated: TrafficExtensionSpec = defined({
    selector: spec.selector,
    targetRefs,
    // PluginPhase and ExecutionPhase share their numbers; only the unspecified value's name differs.
    phase: spec.phase === "UNSPECIFIED_PHASE" ? undefined : spec.phase,
    priority: spec.priority,
    match: spec.match,
    wasm: defined({
      url: spec.url,
      sha256: spec.sha256,
      imagePullPolicy: spec.imagePullPolicy,
      imagePullSecret: spec.imagePullSecret,
      pluginConfig: spec.pluginConfig,
      pluginName: spec.pluginName,
      failStrategy: spec.failStrategy,
      vmConfig: spec.vmConfig,
      type: spec.type,
    }),
  });
  return {
    apiVersion: "extensions.istio.io/v1alpha1",
    kind: "TrafficExtension",
    metadata: defined({
      name: `${metadata.name ?? ""}${WASM_PLUGIN_NAME_SUFFIX}`,
      namespace: metadata.namespace,
      resourceVersion: metadata.resourceVersion,
      creationTimestamp: metadata.creationTimestamp,
    }),
    spec: translated,
  };
}

/** Whether istiod serves the extension: a Wasm module needs a url, Lua 1 byte to 64 KiB of code. */
export function servedExtension(extension: TrafficExtension): boolean {
  const { wasm, lua } = extension.spec ?? {};
  if (wasm) return wasm.url !== "";
  const length = lua?.inlineCode.length ?? 0;
  return length > 0 && length <= MAX_LUA_CODE;
}

/** The push's extensions: TrafficExtensions, then the WasmPlugins' translations, the unserved left out. */
export function pushTrafficExtensions(
  extensions: readonly TrafficExtension[],
  plugins: readonly WasmPlugin[],
): TrafficExtension[] {
  return [...extensions, ...plugins.map(translateWasmPlugin)].filter(servedExtension);
}
