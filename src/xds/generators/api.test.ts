import assert from "node:assert/strict";
import { test } from "node:test";
import { create, type JsonObject, toJson } from "@bufbuild/protobuf";
import { anyUnpack, StructSchema, timestampDate } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { discovery, type mcp } from "../../api/index.ts";
import { apiTypeUrl, parseApiTypeUrl } from "../../api/mcp-type-url.ts";
import { GATEWAY_API_SOURCE } from "../../gatewayapi/index.ts";
import { type ProxyNode, parseProxy } from "../../model/proxy.ts";
import { newPushContext, pushRequest } from "../../model/push-context.ts";
import { ConfigStore, MemorySource } from "../../sources/index.ts";
import { XdsError } from "../errors.ts";
import type { WatchedResource } from "../generator.ts";
import { apiGenerator } from "./api.ts";

function proxy(identities?: string[]): ProxyNode {
  const parsed = parseProxy(
    create(discovery.DiscoveryRequestSchema, {
      node: { id: "sidecar~10.0.0.9~sluiced-2.istio-system~istio-system.svc.cluster.local" },
    }).node,
  );
  assert.ok(parsed.proxy);
  return { ...parsed.proxy, verifiedIdentities: identities };
}

const watch = (typeUrl: string, names: string[] = []): WatchedResource => ({
  typeUrl,
  resourceNames: new Set(names),
  wildcard: names.length === 0,
});
const req = pushRequest({ full: true, push: newPushContext({}) });

function storeWith() {
  const store = new ConfigStore();
  const memory = new MemorySource(store);
  memory.apply({
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: {
      name: "reviews",
      namespace: "shop",
      labels: { app: "reviews" },
      annotations: { note: "x" },
      creationTimestamp: "2026-01-02T03:04:05Z",
    },
    spec: { hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews" } }] }] },
  });
  memory.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
  memory.apply({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "settings", namespace: "shop" },
    data: { mode: "fast" },
  });
  return store;
}

test("type URLs are group/version/kind, with `core` for the core group", () => {
  assert.equal(apiTypeUrl("", "v1", "Service"), "core/v1/Service");
  assert.equal(apiTypeUrl("networking.istio.io", "v1", "VirtualService"), "networking.istio.io/v1/VirtualService");
  assert.deepEqual(parseApiTypeUrl("core/v1/Service"), { group: "", version: "v1", kind: "Service" });
  assert.equal(parseApiTypeUrl("type.googleapis.com/envoy.config.cluster.v3.Cluster"), undefined);
});

test("every object of the kind is sent as an mcp.Resource named namespace/name with metadata and body", () => {
  const gen = apiGenerator({ store: storeWith(), requireAuth: false, rootNamespace: "istio-system" });
  const result = gen.generate(proxy(), watch("networking.istio.io/v1alpha3/VirtualService"), req);
  assert.equal(result?.resources.length, 1);
  const [r] = result?.resources ?? [];
  assert.equal(r.name, "shop/reviews");
  const res = r.resource as mcp.Resource;
  assert.equal(res.$typeName, "istio.mcp.v1alpha1.Resource");
  assert.equal(res.metadata?.name, "shop/reviews");
  assert.deepEqual(res.metadata?.labels, { app: "reviews" });
  assert.deepEqual(res.metadata?.annotations, { note: "x" });
  assert.equal(
    res.metadata?.createTime && timestampDate(res.metadata.createTime).toISOString(),
    "2026-01-02T03:04:05.000Z",
  );
  assert.equal(res.metadata?.version, r.version);
  const body = res.body && anyUnpack(res.body, StructSchema);
  assert.ok(body);
  assert.deepEqual(toJson(StructSchema, body) as JsonObject, {
    spec: { hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews" } }] }] },
  });
});

test("cluster-scoped objects are named /name; built-in kinds keep their top-level fields in the body", () => {
  const gen = apiGenerator({ store: storeWith(), requireAuth: false, rootNamespace: "istio-system" });
  assert.deepEqual(
    gen.generate(proxy(), watch("core/v1/Namespace"), req)?.resources.map((r) => r.name),
    ["/shop"],
  );
  const [cm] = gen.generate(proxy(), watch("core/v1/ConfigMap"), req)?.resources ?? [];
  const body = (cm.resource as mcp.Resource).body;
  assert.ok(body);
  assert.deepEqual(toJson(StructSchema, anyUnpack(body, StructSchema) ?? create(StructSchema)), {
    data: { mode: "fast" },
  });
});

test("named subscriptions get only those objects; unknown kinds and versions get an empty answer", () => {
  const gen = apiGenerator({ store: storeWith(), requireAuth: false, rootNamespace: "istio-system" });
  assert.deepEqual(gen.generate(proxy(), watch("core/v1/ConfigMap", ["shop/other"]), req)?.resources, []);
  assert.equal(gen.generate(proxy(), watch("core/v1/ConfigMap", ["shop/settings"]), req)?.resources.length, 1);
  assert.deepEqual(gen.generate(proxy(), watch("example.com/v1/Widget"), req)?.resources, []);
  assert.deepEqual(gen.generate(proxy(), watch("networking.istio.io/v9/VirtualService"), req)?.resources, []);
});

test("with auth required, only verified callers of the root namespace are served", () => {
  const gen = apiGenerator({ store: storeWith(), requireAuth: true, rootNamespace: "istio-system" });
  const vs = watch("networking.istio.io/v1/VirtualService");
  assert.throws(
    () => gen.generate(proxy(), vs, req),
    (err: unknown) => err instanceof XdsError && err.code === status.UNAUTHENTICATED,
  );
  assert.throws(
    () => gen.generate(proxy(["spiffe://cluster.local/ns/shop/sa/app"]), vs, req),
    (err: unknown) => err instanceof XdsError && err.code === status.PERMISSION_DENIED,
  );
  const ok = gen.generate(proxy(["spiffe://cluster.local/ns/istio-system/sa/sluiced"]), vs, req);
  assert.equal(ok?.resources.length, 1);
});

test("an unchanged object is the same message on every call, so it is encoded once", () => {
  const gen = apiGenerator({ store: storeWith(), requireAuth: false, rootNamespace: "istio-system" });
  const vs = watch("networking.istio.io/v1/VirtualService");
  const a = gen.generate(proxy(), vs, req)?.resources[0].resource;
  const b = gen.generate(proxy(), vs, req)?.resources[0].resource;
  assert.ok(a);
  assert.equal(a, b);
});

test("Secrets go only to verified control-plane callers, even with auth off", () => {
  const store = new ConfigStore();
  new MemorySource(store).apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "tls", namespace: "shop" },
    data: { key: "c2VjcmV0" },
  });
  const gen = apiGenerator({ store, requireAuth: false, rootNamespace: "istio-system" });
  assert.deepEqual(gen.generate(proxy(), watch("core/v1/Secret"), req)?.resources, []);
  assert.deepEqual(
    gen.generate(proxy(["spiffe://cluster.local/ns/shop/sa/app"]), watch("core/v1/Secret"), req)?.resources,
    [],
  );
  const trusted = gen.generate(
    proxy(["spiffe://cluster.local/ns/istio-system/sa/sluiced"]),
    watch("core/v1/Secret"),
    req,
  );
  assert.deepEqual(
    trusted?.resources.map((r) => r.name),
    ["shop/tls"],
  );
});

test("config converted from Gateway API is not sent: the caller converts the Gateway API objects itself", () => {
  const store = storeWith();
  store.replace(GATEWAY_API_SOURCE, "converted", [
    {
      apiVersion: "networking.istio.io/v1",
      kind: "VirtualService",
      metadata: { name: "shop~web~istio-autogenerated-k8s-gateway~http~*", namespace: "shop" },
      spec: { hosts: ["*"], gateways: ["shop/web~istio-autogenerated-k8s-gateway~http"] },
    },
  ]);
  const gen = apiGenerator({ store, requireAuth: false, rootNamespace: "istio-system" });
  assert.deepEqual(
    gen.generate(proxy(), watch("networking.istio.io/v1/VirtualService"), req)?.resources.map((r) => r.name),
    ["shop/reviews"],
  );
});
