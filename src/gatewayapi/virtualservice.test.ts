import assert from "node:assert/strict";
import { test } from "node:test";
import type { ConfigObject } from "../config/index.ts";
import {
  type IstioHTTPRoute,
  type KeyedVirtualService,
  mergeVirtualServices,
  sortHTTPRoutes,
} from "./virtualservice.ts";

test("routes sort by Gateway API precedence: exact, longer prefix, method, headers, then no match last", () => {
  const routes: IstioHTTPRoute[] = [
    { name: "catch-all" },
    { name: "short", match: [{ uri: { prefix: "/a" } }] },
    { name: "headers", match: [{ uri: { prefix: "/a" }, headers: { x: { exact: "1" } } }] },
    { name: "method", match: [{ uri: { prefix: "/a" }, method: { exact: "GET" } }] },
    { name: "long", match: [{ uri: { prefix: "/abc" } }] },
    { name: "exact", match: [{ uri: { exact: "/" } }] },
  ];
  assert.deepEqual(
    sortHTTPRoutes(routes).map((r) => r.name),
    ["exact", "long", "method", "headers", "short", "catch-all"],
  );
});

function keyed(name: string, created: string | undefined, rule: IstioHTTPRoute): KeyedVirtualService {
  const config: ConfigObject<{ hosts: string[]; gateways: string[]; http: IstioHTTPRoute[] }> = {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: {
      name,
      namespace: "default",
      annotations: { "internal.istio.io/parents": `HTTPRoute/${name}.default` },
      ...(created ? { creationTimestamp: created } : {}),
    },
    spec: { hosts: ["a.com"], gateways: ["ns/gw"], http: [rule] },
  };
  return { key: "ns/gw/a.com", config };
}

test("VirtualServices with one key merge: oldest first, parents joined, named after the key", () => {
  const [merged] = mergeVirtualServices([
    keyed("newer", "2024-02-01T00:00:00Z", { name: "n", match: [{ uri: { prefix: "/" } }] }),
    keyed("older", undefined, { name: "o", match: [{ uri: { exact: "/x" } }] }),
  ]);
  assert.equal(merged.metadata.name, "ns~gw~a.com");
  assert.equal(
    merged.metadata.annotations?.["internal.istio.io/parents"],
    "HTTPRoute/older.default,HTTPRoute/newer.default",
  );
  assert.deepEqual(
    (merged.spec as { http: IstioHTTPRoute[] }).http.map((r) => r.name),
    ["o", "n"],
  );
});
