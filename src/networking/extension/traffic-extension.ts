// TrafficExtension → Envoy (Istio's model/extensions.go and networking/core/extension/): a Wasm extension is
// one ECDS resource, a TypedExtensionConfig holding the Wasm filter config (remote code by URL and sha256,
// or a local file), which the listeners reference by name through config discovery; a Lua extension is an
// HTTP filter with its code inline. Each joins the filter chain in the position of its phase, by priority.
// WasmPlugins arrive as the TrafficExtensions istiod translates them into (model's translateWasmPlugin),
// named `<name>~istio-translated-wasmplugin`, so their resources and filters carry that name.
import { create } from "@bufbuild/protobuf";
import { AnySchema, StringValueSchema } from "@bufbuild/protobuf/wkt";
import { core, hcm, httpWasm, listener, lua, networkWasm, packAny, wasm } from "../../api/index.ts";
import type { TrafficExtension } from "../../config/types/index.ts";
import { durationFromSeconds } from "../duration.ts";
import type { ListenerClass } from "../httpfilter/listener-class.ts";
import { modeMatches, workloadMode } from "../telemetry/select.ts";

/** Names of the extensions' ECDS resources and filters: `extensions.istio.io/trafficextension/<namespace>.<name>`. */
export const EXTENSION_RESOURCE_PREFIX = "extensions.istio.io/trafficextension/";
const WASM_HTTP_FILTER_TYPE_URL = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm";
const RBAC_HTTP_FILTER_TYPE_URL = "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC";
const WASM_NETWORK_FILTER_TYPE_URL = "type.googleapis.com/envoy.extensions.filters.network.wasm.v3.Wasm";
const RBAC_NETWORK_FILTER_TYPE_URL = "type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC";
const DEFAULT_RUNTIME = "envoy.wasm.runtime.v8";
/** The VM environment the agent reads (and strips) before handing the config to Envoy. */
export const WASM_SECRET_ENV = "ISTIO_META_WASM_IMAGE_PULL_SECRET";
const WASM_POLICY_ENV = "ISTIO_META_WASM_IMAGE_PULL_POLICY";
const WASM_RESOURCE_VERSION_ENV = "ISTIO_META_WASM_PLUGIN_RESOURCE_VERSION";

export type ExtensionPhase = "AUTHN" | "AUTHZ" | "STATS" | "UNSPECIFIED";
/** The filter chains an extension joins: Wasm ones by their type, Lua ones HTTP chains only. */
export type ExtensionChain = "HTTP" | "NETWORK";

/** `<namespace>.<name>`: the Wasm plugin config's name. */
function qualifiedName(extension: TrafficExtension): string {
  return `${extension.metadata.namespace ?? ""}.${extension.metadata.name ?? ""}`;
}

export function extensionResourceName(extension: TrafficExtension): string {
  return `${EXTENSION_RESOURCE_PREFIX}${qualifiedName(extension)}`;
}

/** FailStrategy (FAIL_CLOSE when unset) → Envoy's failure policy; istiod no longer sets fail_open. */
const FAILURE_POLICIES = {
  FAIL_CLOSE: wasm.FailurePolicy.FAIL_CLOSED,
  FAIL_OPEN: wasm.FailurePolicy.FAIL_OPEN,
  FAIL_RELOAD: wasm.FailurePolicy.FAIL_RELOAD,
} as const;

export function extensionChain(extension: TrafficExtension): ExtensionChain {
  return extension.spec?.wasm?.type === "NETWORK" ? "NETWORK" : "HTTP";
}

export function extensionPhase(extension: TrafficExtension): ExtensionPhase {
  const phase = extension.spec?.phase;
  return phase === "AUTHN" || phase === "AUTHZ" || phase === "STATS" ? phase : "UNSPECIFIED";
}

/**
 * Whether the extension's `match` selects a listener (Istio's matchTrafficExtensionSelectors): no match
 * selects every listener; otherwise some entry's mode must fit the class and its ports (if any) the port.
 */
export function matchesListener(
  extension: TrafficExtension,
  listenerClass: ListenerClass,
  port: number | undefined,
): boolean {
  const matches = extension.spec?.match ?? [];
  if (matches.length === 0) return true;
  const mode = workloadMode(listenerClass);
  return matches.some(
    (m) =>
      (m.mode === "UNDEFINED" || modeMatches(m.mode, mode)) &&
      ((m.ports ?? []).length === 0 || (m.ports ?? []).some((p) => p.number !== 0 && p.number === port)),
  );
}

/** The image pull secret as the agent looks it up: `kubernetes://<extension namespace>/<name>`. */
export function pullSecretResource(extension: TrafficExtension): string | undefined {
  const secret = extension.spec?.wasm?.imagePullSecret;
  if (!secret) return undefined;
  const name =
    secret
      .replace(/^kubernetes:\/\//, "")
      .split("/")
      .pop() ?? "";
  return `kubernetes://${extension.metadata.namespace ?? ""}/${name}`;
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
 * A Wasm extension's PluginConfig. `pullSecret` is the docker config the image pull secret names, put
 * into the VM environment for the agent ("" when it cannot be read).
 */
export function wasmPluginConfig(extension: TrafficExtension, pullSecret = ""): wasm.PluginConfig {
  const spec = extension.spec?.wasm ?? { url: "" };
  const env: Record<string, string> = {};
  if (pullSecretResource(extension)) env[WASM_SECRET_ENV] = pullSecret;
  if (spec.imagePullPolicy && spec.imagePullPolicy !== "UNSPECIFIED_POLICY")
    env[WASM_POLICY_ENV] = spec.imagePullPolicy;
  env[WASM_RESOURCE_VERSION_ENV] = extension.metadata.resourceVersion ?? "";
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
    name: qualifiedName(extension),
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

/** The ECDS resource of a Wasm extension, an HTTP or network Wasm filter by its type; Lua has none (inline). */
export function extensionConfig(extension: TrafficExtension, pullSecret = ""): core.TypedExtensionConfig | undefined {
  if (!extension.spec?.wasm) return undefined;
  const config = wasmPluginConfig(extension, pullSecret);
  const typedConfig =
    extensionChain(extension) === "NETWORK"
      ? packAny(networkWasm.WasmSchema, create(networkWasm.WasmSchema, { config }))
      : packAny(httpWasm.WasmSchema, create(httpWasm.WasmSchema, { config }));
  return create(core.TypedExtensionConfigSchema, { name: extensionResourceName(extension), typedConfig });
}

/** ECDS over ADS; proxies wait for the extensions before serving (they may enforce authn/authz). */
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

/** An HTTP extension's filter: Lua code inline, a Wasm module referenced through its ECDS resource. */
export function extensionHttpFilter(extension: TrafficExtension): hcm.HttpFilter {
  const code = extension.spec?.lua?.inlineCode;
  if (code !== undefined) {
    const config = create(lua.LuaSchema, {
      defaultSourceCode: create(core.DataSourceSchema, { specifier: { case: "inlineString", value: code } }),
    });
    return create(hcm.HttpFilterSchema, {
      name: extensionResourceName(extension),
      configType: { case: "typedConfig", value: packAny(lua.LuaSchema, config) },
    });
  }
  return create(hcm.HttpFilterSchema, {
    name: extensionResourceName(extension),
    configType: {
      case: "configDiscovery",
      value: configSource([WASM_HTTP_FILTER_TYPE_URL, RBAC_HTTP_FILTER_TYPE_URL]),
    },
  });
}

/** The network filter referencing a NETWORK extension's ECDS resource (only Wasm modules are NETWORK). */
export function extensionNetworkFilter(extension: TrafficExtension): listener.Filter {
  return create(listener.FilterSchema, {
    name: extensionResourceName(extension),
    configType: {
      case: "configDiscovery",
      value: configSource([WASM_NETWORK_FILTER_TYPE_URL, RBAC_NETWORK_FILTER_TYPE_URL]),
    },
  });
}

/** The network filters of the NETWORK extensions a listener runs in `phases`, phase by phase. */
export function extensionNetworkFilters(
  extensions: readonly TrafficExtension[] | undefined,
  phases: readonly ExtensionPhase[],
  listenerClass: ListenerClass,
  port: number | undefined,
): listener.Filter[] {
  return phases.flatMap((phase) =>
    extensionsFor(extensions ?? [], "NETWORK", phase, listenerClass, port).map(extensionNetworkFilter),
  );
}

/** Every phase, in chain order. */
export const EXTENSION_PHASES: readonly ExtensionPhase[] = ["AUTHN", "AUTHZ", "STATS", "UNSPECIFIED"];

/**
 * The extensions of `chain` and `phase` a listener runs, in the given (priority) order. `extensions` are
 * those attached to the proxy, highest priority first.
 */
export function extensionsFor(
  extensions: readonly TrafficExtension[],
  chain: ExtensionChain,
  phase: ExtensionPhase,
  listenerClass: ListenerClass,
  port: number | undefined,
): TrafficExtension[] {
  return extensions.filter(
    (e) => extensionChain(e) === chain && extensionPhase(e) === phase && matchesListener(e, listenerClass, port),
  );
}
