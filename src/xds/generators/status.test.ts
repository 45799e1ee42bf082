import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { core, csds } from "../../api/index.ts";
import { type ProxyNode, parseProxy } from "../../model/proxy.ts";
import { newPushContext, pushRequest } from "../../model/push-context.ts";
import { XdsError } from "../errors.ts";
import type { WatchedResource } from "../generator.ts";
import type { ConnectionStatus } from "../server/index.ts";
import { TypeUrl } from "../types.ts";
import { DebugEndpoints } from "./debug-endpoints.ts";
import { SYNCZ_TYPE_URL, statusGenerator } from "./status.ts";

function node(id: string, namespace: string, proxyConfig: boolean, identities?: string[]): ProxyNode {
  const parsed = parseProxy(
    create(core.NodeSchema, {
      id: `sidecar~10.0.0.1~${id}~${namespace}.svc.cluster.local`,
      metadata: { NAMESPACE: namespace, ISTIO_VERSION: "1.24.0", ...(proxyConfig ? { PROXY_CONFIG: {} } : {}) },
    }),
  );
  assert.ok(parsed.proxy, parsed.error);
  return { ...parsed.proxy, verifiedIdentities: identities };
}

const sent = { version: "v1", nonce: "n1", time: new Date("2026-01-01T00:00:00Z"), resources: 1, bytes: 10 };
function connection(proxy: ProxyNode, types: ConnectionStatus["types"]): ConnectionStatus {
  return {
    connectionId: `${proxy.id}-1`,
    proxy,
    protocol: "sotw",
    peerAddress: "127.0.0.1:1",
    connectedAt: new Date(),
    identities: [],
    pushVersion: "v1",
    pushContext: newPushContext({}),
    types,
  };
}

const connections = [
  connection(node("app-1.shop", "shop", true), [
    { typeUrl: TypeUrl.Listener, wildcard: true, resourceNames: [], state: "SYNCED", sent, acked: sent },
    {
      typeUrl: TypeUrl.Cluster,
      wildcard: true,
      resourceNames: [],
      state: "NACKED",
      sent,
      lastNack: { ...sent, code: 3, message: "bad cluster" },
    },
  ]),
  connection(node("db-1.data", "data", true), [
    { typeUrl: TypeUrl.Cluster, wildcard: true, resourceNames: [], state: "STALE", sent },
  ]),
  connection(node("cli.istio-system", "istio-system", false), []),
];

const watch = (typeUrl: string, names: string[] = []): WatchedResource => ({
  typeUrl,
  resourceNames: new Set(names),
  wildcard: names.length === 0,
});
const req = pushRequest({ full: true, push: newPushContext({}) });

function generator(enabled = true) {
  const endpoints = new DebugEndpoints();
  endpoints.register("edsz", (r) => ({ namespace: r.callerNamespace ?? "*", proxy: r.query.get("proxyID") }));
  endpoints.register("configz", () => []);
  return statusGenerator({
    syncStatus: () => connections,
    endpoints,
    auth: { systemNamespace: "istio-system", allowedNamespaces: ["ops"], enabled },
  });
}

const SYSTEM = ["spiffe://cluster.local/ns/istio-system/sa/istioctl"];

test("syncz is one CSDS ClientConfig per proxy, types sorted, a NACK as ERROR with its message", () => {
  const result = generator().generate(
    node("cli.istio-system", "istio-system", false, SYSTEM),
    watch(SYNCZ_TYPE_URL),
    req,
  );
  const configs = (result?.resources ?? []).map((r) => r.resource as csds.ClientConfig);
  assert.deepEqual(
    configs.map((c) => c.node?.id),
    ["app-1.shop", "db-1.data"],
    "connections without proxy metadata (CLI queries) are left out",
  );
  const app = configs[0];
  assert.equal(app.node?.metadata?.NAMESPACE, "shop");
  assert.deepEqual(
    app.genericXdsConfigs.map((g) => [g.typeUrl, csds.ConfigStatus[g.configStatus]]),
    [
      [TypeUrl.Cluster, "ERROR"],
      [TypeUrl.Listener, "SYNCED"],
    ],
  );
  assert.equal(app.genericXdsConfigs[0].errorState?.details, "bad cluster");
  assert.equal(csds.ConfigStatus[configs[1].genericXdsConfigs[0].configStatus], "STALE");
});

test("a caller of another namespace sees only its namespace's proxies; an allowed namespace sees all", () => {
  const shop = generator().generate(
    node("tool.shop", "shop", false, ["spiffe://cluster.local/ns/shop/sa/tool"]),
    watch(SYNCZ_TYPE_URL),
    req,
  );
  assert.deepEqual(
    shop?.resources.map((r) => r.name),
    ["app-1.shop"],
  );
  const ops = generator().generate(
    node("tool.ops", "ops", false, ["spiffe://cluster.local/ns/ops/sa/tool"]),
    watch(SYNCZ_TYPE_URL),
    req,
  );
  assert.equal(ops?.resources.length, 2);
});

test("without a verified identity the caller is Unauthenticated, unless debug auth is off", () => {
  const anonymous = node("cli.istio-system", "istio-system", false);
  assert.throws(
    () => generator().generate(anonymous, watch(SYNCZ_TYPE_URL), req),
    (err: unknown) => err instanceof XdsError && err.code === status.UNAUTHENTICATED,
  );
  assert.equal(generator(false).generate(anonymous, watch(SYNCZ_TYPE_URL), req)?.resources.length, 2);
});

test("istio.io/debug/<endpoint> runs a registered endpoint, one resource per query", () => {
  const gen = generator();
  const caller = node("cli.istio-system", "istio-system", false, SYSTEM);
  const [all] = gen.generate(caller, watch("istio.io/debug/edsz"), req)?.resources ?? [];
  assert.equal(all.name, "edsz");
  assert.deepEqual(JSON.parse(new TextDecoder().decode((all.resource as Any).value)), { namespace: "*", proxy: null });
  const named = gen.generate(caller, watch("istio.io/debug/edsz", ["proxyID=app-1.shop"]), req)?.resources ?? [];
  assert.deepEqual(JSON.parse(new TextDecoder().decode((named[0].resource as Any).value)), {
    namespace: "*",
    proxy: "app-1.shop",
  });
  const shopCaller = node("tool.shop", "shop", false, ["spiffe://cluster.local/ns/shop/sa/tool"]);
  assert.throws(
    () => gen.generate(shopCaller, watch("istio.io/debug/configz"), req),
    (err: unknown) => err instanceof XdsError && err.code === status.PERMISSION_DENIED,
  );
});
