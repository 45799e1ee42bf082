// ECDS through the discovery service, driven by a raw ADS client as a bookinfo sidecar: its listeners
// reference the WasmPlugins attached to it through config discovery (named, as istiod names the
// TrafficExtensions it translates them into, `extensions.istio.io/trafficextension/<ns>.<name>~istio-
// translated-wasmplugin`), ECDS serves those asked for by name (the image pull secret's docker config in
// the VM environment only for an authenticated proxy), /debug/ecdsz shows them, and a changed plugin is
// pushed.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { pino } from "pino";
import { core, hcm, httpWasm, listener, unpackAny } from "../../src/api/index.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import type { WasmPlugin } from "../../src/config/types/index.ts";
import { parseProxy, translateWasmPlugin } from "../../src/model/index.ts";
import { storePush, storeRegistry } from "../../src/model/store-push.ts";
import { ConfigStore, MemorySource } from "../../src/sources/index.ts";
import { buildExtensionConfigs } from "../../src/xds/generators/ecds.ts";
import { type Discovery, startDiscovery, TypeUrl } from "../../src/xds/index.ts";
import { names, SotwClient, sidecarNode } from "../support/ads-client.ts";
import { anyViolations } from "../support/pgv.ts";

const mesh = DEFAULT_MESH_CONFIG;
const SHA = "4d6ef8e6a1a4d1e6e8f0a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7";
const resource = (name: string) => `extensions.istio.io/trafficextension/${name}~istio-translated-wasmplugin`;
const AUTHN = resource("istio-system.authn");
const STATS = resource("bookinfo.stats");
const RATINGS_ONLY = resource("bookinfo.ratings-only");
const TCP_AUDIT = resource("bookinfo.tcp-audit");

function wasmPlugin(namespace: string, name: string, spec: Record<string, unknown>): ConfigObject {
  return { apiVersion: "extensions.istio.io/v1alpha1", kind: "WasmPlugin", metadata: { name, namespace }, spec };
}

const PULL_SECRET: ConfigObject = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "pull", namespace: "bookinfo" },
  type: "kubernetes.io/dockerconfigjson",
  data: { ".dockerconfigjson": Buffer.from('{"auths":{"ghcr.io":{}}}').toString("base64") },
} as ConfigObject;

const store = new ConfigStore();
const memory = new MemorySource(store);
let discovery: Discovery;

before(async () => {
  memory.apply({
    apiVersion: "networking.istio.io/v1",
    kind: "ServiceEntry",
    metadata: { name: "httpbin", namespace: "bookinfo" },
    spec: {
      hosts: ["httpbin.example.com"],
      ports: [{ number: 80, name: "http", protocol: "HTTP" }],
      resolution: "DNS",
    },
  });
  memory.apply({
    apiVersion: "networking.istio.io/v1",
    kind: "ServiceEntry",
    metadata: { name: "db", namespace: "bookinfo" },
    spec: {
      hosts: ["db.example.com"],
      addresses: ["240.0.0.20"],
      ports: [{ number: 5432, name: "tcp", protocol: "TCP" }],
      resolution: "STATIC",
      endpoints: [{ address: "10.0.0.20" }],
    },
  });
  memory.apply(
    wasmPlugin("istio-system", "authn", { url: "oci://ghcr.io/example/authn:v1", sha256: SHA, phase: "AUTHN" }),
  );
  memory.apply(
    wasmPlugin("bookinfo", "stats", {
      selector: { matchLabels: { app: "reviews" } },
      url: "oci://ghcr.io/example/stats:v1",
      sha256: SHA,
      phase: "STATS",
      imagePullSecret: "pull",
    }),
  );
  memory.apply(
    wasmPlugin("bookinfo", "ratings-only", {
      selector: { matchLabels: { app: "ratings" } },
      url: "oci://ghcr.io/example/ratings:v1",
      sha256: SHA,
    }),
  );
  memory.apply(
    wasmPlugin("bookinfo", "tcp-audit", {
      url: "oci://ghcr.io/example/tcp-audit:v1",
      sha256: SHA,
      type: "NETWORK",
      match: [{ mode: "CLIENT", ports: [{ number: 5432 }] }],
    }),
  );
  memory.apply(PULL_SECRET);
  const registry = storeRegistry(store, mesh, "cluster.local");
  discovery = await startDiscovery({
    store,
    initialPush: storePush(store, registry, mesh, "cluster.local"),
    endpoints: registry,
    build: (previous) => storePush(store, registry, mesh, "cluster.local", previous),
    rootNamespace: "istio-system",
    domainSuffix: "cluster.local",
    debounce: { afterMs: 10, maxMs: 200, edsDebounce: true },
    apiAuth: true,
    debugAuth: { systemNamespace: "istio-system" },
    plugins: [],
    listen: { grpcAddr: "127.0.0.1:0" },
    log: pino({ level: "silent" }),
  });
});

after(async () => {
  await discovery.stop(0);
});

function wasmOf(config: core.TypedExtensionConfig | undefined): httpWasm.Wasm | undefined {
  return config?.typedConfig ? unpackAny(config.typedConfig, httpWasm.WasmSchema) : undefined;
}

function codeUri(config: core.TypedExtensionConfig | undefined): string | undefined {
  const vm = wasmOf(config)?.config?.vm;
  const code = vm?.case === "vmConfig" ? vm.value.code?.specifier : undefined;
  return code?.case === "remote" ? code.value.httpUri?.uri : undefined;
}

/** The HTTP filters of the outbound listener 0.0.0.0_80 in an LDS response. */
function httpFilters(lds: Awaited<ReturnType<SotwClient["next"]>>): hcm.HttpFilter[] {
  const outbound = lds.resources
    .map((any) => unpackAny(any, listener.ListenerSchema))
    .find((l) => l?.name === "0.0.0.0_80");
  const filter = outbound?.filterChains
    .flatMap((c) => c.filters)
    .find((f) => f.name === "envoy.filters.network.http_connection_manager");
  return filter?.configType.case === "typedConfig"
    ? (unpackAny(filter.configType.value, hcm.HttpConnectionManagerSchema)?.httpFilters ?? [])
    : [];
}

test("a sidecar's listeners reference its WasmPlugins and ECDS serves them by name, then pushes a change", async () => {
  const client = SotwClient.connect(`127.0.0.1:${discovery.ports.grpcPort}`);
  try {
    client.request({
      node: sidecarNode("reviews-v1", "bookinfo", { LABELS: { app: "reviews" } }),
      typeUrl: TypeUrl.Listener,
    });
    const lds = await client.next();
    const outbound = lds.resources
      .map((any) => unpackAny(any, listener.ListenerSchema))
      .find((l) => l?.name === "0.0.0.0_80");
    const filters = httpFilters(lds);
    const filterNames = filters.map((f) => f.name);
    assert.ok(
      filterNames.indexOf(AUTHN) > 0 && filterNames.indexOf(STATS) > filterNames.indexOf(AUTHN),
      filterNames.join(" "),
    );
    assert.ok(!filterNames.includes(RATINGS_ONLY));
    assert.equal(filters.find((f) => f.name === STATS)?.configType.case, "configDiscovery");
    // The NETWORK plugin runs on the matched TCP port only, before tcp_proxy.
    const tcp = lds.resources
      .map((any) => unpackAny(any, listener.ListenerSchema))
      .find((l) => l?.name === "240.0.0.20_5432");
    const tcpFilters = tcp?.filterChains.flatMap((c) => c.filters).map((f) => f.name) ?? [];
    assert.deepEqual(tcpFilters.slice(0, 1), [TCP_AUDIT], `${tcpFilters.join(" ")} in ${names(lds).join(" ")}`);
    assert.ok(tcpFilters.includes("envoy.filters.network.tcp_proxy"));
    assert.ok(!outbound?.filterChains.flatMap((c) => c.filters).some((f) => f.name === TCP_AUDIT));
    client.ack(lds);

    const asked = [AUTHN, STATS, TCP_AUDIT, RATINGS_ONLY, resource("bookinfo.missing")];
    client.request({ typeUrl: TypeUrl.ExtensionConfiguration, resourceNames: asked });
    const ecds = await client.next();
    assert.equal(ecds.typeUrl, TypeUrl.ExtensionConfiguration);
    for (const any of ecds.resources) assert.deepEqual(anyViolations(any), [], any.typeUrl);
    const configs = ecds.resources.map((any) => unpackAny(any, core.TypedExtensionConfigSchema));
    assert.deepEqual(configs.map((c) => c?.name).sort(), [STATS, TCP_AUDIT, AUTHN]);
    assert.equal(
      configs.find((c) => c?.name === TCP_AUDIT)?.typedConfig?.typeUrl,
      "type.googleapis.com/envoy.extensions.filters.network.wasm.v3.Wasm",
    );
    const stats = configs.find((c) => c?.name === STATS);
    assert.equal(codeUri(stats), "oci://ghcr.io/example/stats:v1");
    const vm = wasmOf(stats)?.config?.vm;
    const env = vm?.case === "vmConfig" ? vm.value.environmentVariables?.keyValues : undefined;
    // A plaintext connection proves no identity: the secret's entry stays, empty, as istiod leaves it.
    assert.equal(env?.ISTIO_META_WASM_IMAGE_PULL_SECRET, "");
    client.ack(ecds, asked);

    // /debug/ecdsz: the extension configs the proxy watches, as config_dump types=ecds.
    const ecdsz = JSON.parse(
      new TextDecoder().decode(discovery.debugEndpoints.serve("ecdsz?proxyID=reviews-v1.bookinfo", undefined)),
    ) as { configs: { "@type": string; name: string }[] };
    assert.deepEqual(ecdsz.configs.map((c) => c.name).sort(), [STATS, TCP_AUDIT, AUTHN]);

    memory.apply(
      wasmPlugin("bookinfo", "stats", {
        selector: { matchLabels: { app: "reviews" } },
        url: "oci://ghcr.io/example/stats:v2",
        sha256: SHA,
        phase: "STATS",
        imagePullSecret: "pull",
      }),
    );
    // The change reaches LDS and ECDS; read until the ECDS push.
    let pushed = await client.next();
    for (let i = 0; i < 3 && pushed.typeUrl !== TypeUrl.ExtensionConfiguration; i++) {
      client.ack(pushed, pushed.typeUrl === TypeUrl.ExtensionConfiguration ? asked : []);
      pushed = await client.next();
    }
    assert.equal(pushed.typeUrl, TypeUrl.ExtensionConfiguration);
    assert.deepEqual(names(pushed).sort(), [STATS, TCP_AUDIT, AUTHN]);
    const updated = pushed.resources
      .map((any) => unpackAny(any, core.TypedExtensionConfigSchema))
      .find((c) => c?.name === STATS);
    assert.equal(codeUri(updated), "oci://ghcr.io/example/stats:v2");
  } finally {
    client.close();
  }
});

test("the pull secret's docker config goes only to an authenticated proxy of the plugin's namespace", () => {
  const plugin = wasmPlugin("bookinfo", "stats", {
    url: "oci://ghcr.io/example/stats:v1",
    imagePullSecret: "pull",
  }) as WasmPlugin;
  const secrets = {
    secret: (namespace: string, name: string) =>
      namespace === "bookinfo" && name === "pull" ? PULL_SECRET : undefined,
  };
  const secretOf = (namespace: string, identity?: string) => {
    const parsed = parseProxy(create(core.NodeSchema, sidecarNode("reviews-v1", namespace, {})));
    assert.ok(parsed.proxy, parsed.error);
    const proxy = { ...parsed.proxy, verifiedIdentities: identity ? [identity] : undefined };
    const [config] = buildExtensionConfigs([translateWasmPlugin(plugin)], new Set([STATS]), proxy, secrets);
    const vm = wasmOf(config)?.config?.vm;
    return vm?.case === "vmConfig"
      ? vm.value.environmentVariables?.keyValues.ISTIO_META_WASM_IMAGE_PULL_SECRET
      : undefined;
  };
  assert.equal(secretOf("bookinfo", "spiffe://cluster.local/ns/bookinfo/sa/reviews"), '{"auths":{"ghcr.io":{}}}');
  assert.equal(secretOf("bookinfo"), "");
  assert.equal(secretOf("other", "spiffe://cluster.local/ns/other/sa/reviews"), "");
});

test("TrafficExtensions: Lua inline in the listeners, Wasm through ECDS beside the WasmPlugins, pushed on change", async () => {
  const extension = (name: string, spec: Record<string, unknown>): ConfigObject => ({
    apiVersion: "extensions.istio.io/v1alpha1",
    kind: "TrafficExtension",
    metadata: { name, namespace: "bookinfo" },
    spec: { selector: { matchLabels: { app: "details" } }, ...spec },
  });
  const LUA = "extensions.istio.io/trafficextension/bookinfo.lua-authn";
  const WASM = "extensions.istio.io/trafficextension/bookinfo.wasm-stats";
  const client = SotwClient.connect(`127.0.0.1:${discovery.ports.grpcPort}`);
  try {
    client.request({
      node: sidecarNode("details-v1", "bookinfo", { LABELS: { app: "details" } }),
      typeUrl: TypeUrl.Listener,
    });
    let lds = await client.next();
    assert.ok(!httpFilters(lds).some((f) => f.name === LUA));
    client.ack(lds);
    memory.apply(extension("lua-authn", { phase: "AUTHN", lua: { inlineCode: "function envoy_on_request(h) end" } }));
    memory.apply(
      extension("wasm-stats", { phase: "STATS", wasm: { url: "oci://ghcr.io/example/te:v1", sha256: SHA } }),
    );
    // Each change pushes the listeners: read until both are in.
    for (let i = 0; i < 3 && !httpFilters(lds).some((f) => f.name === WASM); i++) {
      lds = await client.next();
      client.ack(lds);
    }
    const filters = httpFilters(lds);
    const at = (name: string) => filters.findIndex((f) => f.name === name);
    // The Lua extension and the root namespace's WasmPlugin share AUTHN: the proxy's namespace comes first.
    assert.ok(at(LUA) > 0 && at(LUA) < at(AUTHN) && at(AUTHN) < at(WASM), filters.map((f) => f.name).join(" "));
    const lua = filters[at(LUA)].configType;
    assert.equal(
      lua.case === "typedConfig" && lua.value.typeUrl,
      "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua",
    );
    assert.equal(filters[at(WASM)].configType.case, "configDiscovery");

    client.request({ typeUrl: TypeUrl.ExtensionConfiguration, resourceNames: [LUA, WASM] });
    const ecds = await client.next();
    for (const any of ecds.resources) assert.deepEqual(anyViolations(any), [], any.typeUrl);
    assert.deepEqual(names(ecds), [WASM]);
    assert.equal(codeUri(unpackAny(ecds.resources[0], core.TypedExtensionConfigSchema)), "oci://ghcr.io/example/te:v1");
  } finally {
    client.close();
  }
});
