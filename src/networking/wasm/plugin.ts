// WasmPlugin → Envoy (Istio's model/extensions.go and networking/core/extension/extensionfilter.go): each
// plugin is one ECDS resource, a TypedExtensionConfig holding the Wasm filter config (remote code by
// URL and sha256, or a local file), which the listeners reference by name through config discovery
// in the filter chain position of its phase, ordered by priority. istiod translates every WasmPlugin
// into a synthetic TrafficExtension named `<name>~istio-translated-wasmplugin`
// (pilot/pkg/config/kube/extensions/translate.go) and names its resources and filters after that.
import { create } from "@bufbuild/protobuf";
import { AnySchema, StringValueSchema } from "@bufbuild/protobuf/wkt";
import { core, hcm, httpWasm, listener, networkWasm, packAny, wasm } from "../../api/index.ts";
import type { WasmPlugin } from "../../config/types/index.ts";
import { durationFromSeconds } from "../duration.ts";
import type { ListenerClass } from "../httpfilter/listener-class.ts";
import { modeMatches, workloadMode } from "../telemetry/select.ts";

/**
 * ECDS resource names of WasmPlugins, as of the TrafficExtensions istiod translates them into:
 * `extensions.istio.io/trafficextension/<namespace>.<name>~istio-translated-wasmplugin`.
 */
export const WASM_PLUGIN_RESOURCE_PREFIX = "extensions.istio.io/trafficextension/";
/** Appended to a WasmPlugin's name by istiod's translation (`~` cannot occur in a Kubernetes name). */
export const WASM_PLUGIN_NAME_SUFFIX = "~istio-translated-wasmplugin";
const WASM_HTTP_FILTER_TYPE_URL = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm";
const RBAC_HTTP_FILTER_TYPE_URL = "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC";
const WASM_NETWORK_FILTER_TYPE_URL = "type.googleapis.com/envoy.extensions.filters.network.wasm.v3.Wasm";
const RBAC_NETWORK_FILTER_TYPE_URL = "type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC";
const DEFAULT_RUNTIME = "envoy.wasm.runtime.v8";
/** The VM environment the agent reads (and strips) before handing the config to Envoy. */
export const WASM_SECRET_ENV = "ISTIO_META_WASM_IMAGE_PULL_SECRET";
const WASM_POLICY_ENV = "ISTIO_META_WASM_IMAGE_PULL_POLICY";
const WASM_RESOURCE_VERSION_ENV = "ISTIO_META_WASM_PLUGIN_RESOURCE_VERSION";

export type WasmPhase = "AUTHN" | "AUTHZ" | "STATS" | "UNSPECIFIED_PHASE";
export type WasmPluginType = "HTTP" | "NETWORK";

/** `<namespace>.<name>~istio-translated-wasmplugin`: the plugin config's name. */
function translatedName(plugin: WasmPlugin): string {
  return `${plugin.metadata.namespace ?? ""}.${plugin.metadata.name ?? ""}${WASM_PLUGIN_NAME_SUFFIX}`;
}

export function wasmResourceName(plugin: WasmPlugin): string {
  return `${WASM_PLUGIN_RESOURCE_PREFIX}${translatedName(plugin)}`;
}

/** FailStrategy (FAIL_CLOSE when unset) → Envoy's failure policy; istiod no longer sets fail_open. */
const FAILURE_POLICIES = {
  FAIL_CLOSE: wasm.FailurePolicy.FAIL_CLOSED,
  FAIL_OPEN: wasm.FailurePolicy.FAIL_OPEN,
  FAIL_RELOAD: wasm.FailurePolicy.FAIL_RELOAD,
} as const;

export function wasmPluginType(plugin: WasmPlugin): WasmPluginType {
  return plugin.spec?.type === "NETWORK" ? "NETWORK" : "HTTP";
}

export function wasmPhase(plugin: WasmPlugin): WasmPhase {
  const phase = plugin.spec?.phase;
  return phase === "AUTHN" || phase === "AUTHZ" || phase === "STATS" ? phase : "UNSPECIFIED_PHASE";
}

/**
 * Whether the plugin's `match` selects a listener (Istio's matchTrafficSelectors): no match selects
 * every listener; otherwise some entry's mode must fit the class and its ports (if any) the port.
 */
export function matchesListener(plugin: WasmPlugin, listenerClass: ListenerClass, port: number | undefined): boolean {
  const matches = plugin.spec?.match ?? [];
  if (matches.length === 0) return true;
  const mode = workloadMode(listenerClass);
  return matches.some(
    (m) =>
      (m.mode === "UNDEFINED" || modeMatches(m.mode, mode)) &&
      ((m.ports ?? []).length === 0 || (m.ports ?? []).some((p) => p.number !== 0 && p.number === port)),
  );
}

/** The image pull secret as the agent looks it up: `kubernetes://<plugin namespace>/<name>`. */
export function pullSecretResource(plugin: WasmPlugin): string | undefined {
  const secret = plugin.spec?.imagePullSecret;
  if (!secret) return undefined;
  const name =
    secret
      .replace(/^kubernetes:\/\//, "")
      .split("/")
      .pop() ?? "";
  return `kubernetes://${plugin.metadata.namespace ?? ""}/${name}`;
}

/** Go's JSON of a Struct: keys sorted at every level. */
function sortedJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v !== null && typeof v === "object") {
      const object = v as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(object)
          .sort()
          .map((k) => [k, sort(object[k])]),
      );
    }
    return v;
  };
  return JSON.stringify(sort(value));
}

/** A URL without a scheme is an OCI image. */
function codeSource(url: string, sha256: string | undefined): core.AsyncDataSource {
  if (url.startsWith("file://")) {
    return create(core.AsyncDataSourceSchema, {
      specifier: {
        case: "local",
        value: create(core.DataSourceSchema, { specifier: { case: "filename", value: url.slice("file://".length) } }),
      },
    });
  }
  const uri = /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(url) ? url : `oci://${url}`;
  return create(core.AsyncDataSourceSchema, {
    specifier: {
      case: "remote",
      value: create(core.RemoteDataSourceSchema, {
        httpUri: create(core.HttpUriSchema, {
          uri,
          // The agent downloads the module, so no cluster is needed.
          httpUpstreamType: { case: "cluster", value: "_" },
          timeout: durationFromSeconds(30),
        }),
        sha256: sha256 ?? "",
      }),
    },
  });
}

/**
 * The plugin's Wasm PluginConfig. `pullSecret` is the docker config the image pull secret names, put
 * into the VM environment for the agent ("" when it cannot be read).
 */
export function wasmPluginConfig(plugin: WasmPlugin, pullSecret = ""): wasm.PluginConfig {
  const spec = plugin.spec ?? { url: "" };
  const env: Record<string, string> = {};
  if (pullSecretResource(plugin)) env[WASM_SECRET_ENV] = pullSecret;
  if (spec.imagePullPolicy && spec.imagePullPolicy !== "UNSPECIFIED_POLICY")
    env[WASM_POLICY_ENV] = spec.imagePullPolicy;
  env[WASM_RESOURCE_VERSION_ENV] = plugin.metadata.resourceVersion ?? "";
  const hostEnvKeys: string[] = [];
  for (const variable of spec.vmConfig?.env ?? []) {
    if (variable.valueFrom === "HOST") hostEnvKeys.push(variable.name);
    else env[variable.name] = variable.value ?? "";
  }
  const pluginConfig = spec.pluginConfig ?? {};
  // Without a pluginConfig, an empty Any (no type, no value), as istiod sends it.
  const configuration =
    Object.keys(pluginConfig).length > 0
      ? packAny(StringValueSchema, create(StringValueSchema, { value: sortedJson(pluginConfig) }))
      : create(AnySchema);
  return create(wasm.PluginConfigSchema, {
    name: translatedName(plugin),
    rootId: spec.pluginName ?? "",
    configuration,
    vm: {
      case: "vmConfig",
      value: create(wasm.VmConfigSchema, {
        runtime: DEFAULT_RUNTIME,
        code: codeSource(spec.url, spec.sha256),
        environmentVariables: create(wasm.EnvironmentVariablesSchema, { keyValues: env, hostEnvKeys }),
      }),
    },
    failurePolicy: FAILURE_POLICIES[spec.failStrategy ?? "FAIL_CLOSE"] ?? wasm.FailurePolicy.FAIL_CLOSED,
  });
}

/** The ECDS resource of a plugin: an HTTP or network Wasm filter by its type. */
export function wasmExtensionConfig(plugin: WasmPlugin, pullSecret = ""): core.TypedExtensionConfig {
  const config = wasmPluginConfig(plugin, pullSecret);
  const typedConfig =
    wasmPluginType(plugin) === "NETWORK"
      ? packAny(networkWasm.WasmSchema, create(networkWasm.WasmSchema, { config }))
      : packAny(httpWasm.WasmSchema, create(httpWasm.WasmSchema, { config }));
  return create(core.TypedExtensionConfigSchema, { name: wasmResourceName(plugin), typedConfig });
}

/** ECDS over ADS; proxies wait for the plugins before serving (they may enforce authn/authz). */
function configSource(typeUrls: string[]): core.ExtensionConfigSource {
  return create(core.ExtensionConfigSourceSchema, {
    configSource: create(core.ConfigSourceSchema, {
      configSourceSpecifier: { case: "ads", value: create(core.AggregatedConfigSourceSchema) },
      initialFetchTimeout: durationFromSeconds(0),
      resourceApiVersion: core.ApiVersion.V3,
    }),
    typeUrls,
  });
}

/** The HTTP filter referencing an HTTP plugin's ECDS resource. */
export function wasmHttpFilter(plugin: WasmPlugin): hcm.HttpFilter {
  return create(hcm.HttpFilterSchema, {
    name: wasmResourceName(plugin),
    configType: {
      case: "configDiscovery",
      value: configSource([WASM_HTTP_FILTER_TYPE_URL, RBAC_HTTP_FILTER_TYPE_URL]),
    },
  });
}

/** The network filter referencing a NETWORK plugin's ECDS resource. */
export function wasmNetworkFilter(plugin: WasmPlugin): listener.Filter {
  return create(listener.FilterSchema, {
    name: wasmResourceName(plugin),
    configType: {
      case: "configDiscovery",
      value: configSource([WASM_NETWORK_FILTER_TYPE_URL, RBAC_NETWORK_FILTER_TYPE_URL]),
    },
  });
}

/** The network filters of the NETWORK plugins a listener runs in `phases`, phase by phase. */
export function wasmNetworkFilters(
  plugins: readonly WasmPlugin[] | undefined,
  phases: readonly WasmPhase[],
  listenerClass: ListenerClass,
  port: number | undefined,
): listener.Filter[] {
  return phases.flatMap((phase) =>
    pluginsFor(plugins ?? [], "NETWORK", phase, listenerClass, port).map(wasmNetworkFilter),
  );
}

/** Every phase, in chain order. */
export const WASM_PHASES: readonly WasmPhase[] = ["AUTHN", "AUTHZ", "STATS", "UNSPECIFIED_PHASE"];

/**
 * The plugins of `type` and `phase` a listener runs, in the given (priority) order. `plugins` are
 * those attached to the proxy, highest priority first.
 */
export function pluginsFor(
  plugins: readonly WasmPlugin[],
  type: WasmPluginType,
  phase: WasmPhase,
  listenerClass: ListenerClass,
  port: number | undefined,
): WasmPlugin[] {
  return plugins.filter(
    (p) => wasmPluginType(p) === type && wasmPhase(p) === phase && matchesListener(p, listenerClass, port),
  );
}
