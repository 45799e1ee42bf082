import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { status } from "@grpc/grpc-js";
import { core } from "../../api/index.ts";
import { type ProxyNode, parseProxy } from "../../model/proxy.ts";
import { newPushContext, pushRequest } from "../../model/push-context.ts";
import { XdsError } from "../errors.ts";
import type { WatchedResource } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { debugGenerator } from "./debug.ts";
import { DebugEndpoints, type DebugRequest } from "./debug-endpoints.ts";

const SYSTEM = "spiffe://cluster.local/ns/istio-system/sa/istioctl";
const SHOP = "spiffe://cluster.local/ns/shop/sa/app";

function caller(identities?: string[]): ProxyNode {
  const parsed = parseProxy(
    create(core.NodeSchema, { id: "sidecar~10.0.0.9~cli.istio-system~istio-system.svc.cluster.local" }),
  );
  assert.ok(parsed.proxy);
  return { ...parsed.proxy, verifiedIdentities: identities };
}

const watch = (names: string[]): WatchedResource => ({
  typeUrl: TypeUrl.Debug,
  resourceNames: new Set(names),
  wildcard: false,
});
const req = pushRequest({ full: true, push: newPushContext({}) });

function setup() {
  const seen: DebugRequest[] = [];
  const endpoints = new DebugEndpoints();
  endpoints.register("configz", (r) => {
    seen.push(r);
    return [{ kind: "VirtualService", name: "reviews" }];
  });
  endpoints.register("config_dump", (r) => {
    seen.push(r);
    return `dump of ${r.query.get("proxyID")}`;
  });
  const gen = debugGenerator(endpoints, { systemNamespace: "istio-system" });
  return { gen, seen };
}

const body = (r: { resource: unknown }) => new TextDecoder().decode((r.resource as Any).value);
const refused = (code: status) => (err: unknown) => err instanceof XdsError && err.code === code;

test("a system-namespace caller gets the endpoint's body as an istio.io/debug Any named by the path", () => {
  const { gen, seen } = setup();
  const [r] = gen.generate(caller([SYSTEM]), watch(["configz"]), req)?.resources ?? [];
  assert.equal(r.name, "configz");
  assert.equal((r.resource as Any).typeUrl, "istio.io/debug");
  assert.deepEqual(JSON.parse(body(r)), [{ kind: "VirtualService", name: "reviews" }]);
  assert.equal(seen[0].callerNamespace, undefined, "the system namespace sees everything");
});

test("the query string reaches the endpoint; an unknown endpoint answers as the HTTP mux does", () => {
  const { gen } = setup();
  const [dump] = gen.generate(caller([SYSTEM]), watch(["config_dump?proxyID=app-1.shop"]), req)?.resources ?? [];
  assert.equal(body(dump), "dump of app-1.shop");
  const [missing] = gen.generate(caller([SYSTEM]), watch(["nosuch"]), req)?.resources ?? [];
  assert.equal(body(missing), "404 page not found\n");
});

test("callers without a verified identity (the plaintext port) are Unauthenticated", () => {
  const { gen } = setup();
  assert.throws(() => gen.generate(caller(), watch(["configz"]), req), refused(status.UNAUTHENTICATED));
});

test("exactly one debug request is required", () => {
  const { gen } = setup();
  assert.throws(() => gen.generate(caller([SYSTEM]), watch([]), req), refused(status.INVALID_ARGUMENT));
  assert.throws(
    () => gen.generate(caller([SYSTEM]), watch(["configz", "syncz"]), req),
    refused(status.INVALID_ARGUMENT),
  );
});

test("other namespaces get only config_dump, ndsz and edsz, limited to their namespace", () => {
  const { gen, seen } = setup();
  assert.throws(() => gen.generate(caller([SHOP]), watch(["configz"]), req), refused(status.PERMISSION_DENIED));
  gen.generate(caller([SHOP]), watch(["config_dump?proxyID=app-1.shop"]), req);
  assert.equal(seen.at(-1)?.callerNamespace, "shop");
});
