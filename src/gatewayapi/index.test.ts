import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ConfigObject } from "../config/index.ts";
import { convertResources, staticServiceLookup } from "./index.ts";

const settings = { domainSuffix: "cluster.local", now: "2026-01-01T00:00:00Z" };
const noServices = staticServiceLookup([]);

function obj(
  kind: string,
  name: string,
  namespace: string | undefined,
  spec: unknown,
  extra: Partial<ConfigObject> = {},
): ConfigObject {
  const group = kind === "Service" ? "v1" : "gateway.networking.k8s.io/v1";
  return { apiVersion: group, kind, metadata: { name, ...(namespace ? { namespace } : {}) }, spec, ...extra };
}

describe("convertResources", () => {
  test("a mesh (GAMMA) route with a Service parent becomes a mesh VirtualService for the Service host", () => {
    const objects = [
      obj("Service", "reviews", "shop", { ports: [{ name: "http", port: 9080 }] }),
      obj("HTTPRoute", "reviews", "shop", {
        parentRefs: [{ group: "", kind: "Service", name: "reviews", port: 9080 }],
        rules: [{ backendRefs: [{ name: "reviews", port: 9080 }] }],
      }),
    ];
    const { config, statuses } = convertResources(objects, settings, noServices);
    assert.equal(config.length, 1);
    assert.equal(config[0].metadata.name, "shop~9080~reviews.shop.svc.cluster.local");
    assert.deepEqual(config[0].spec, {
      hosts: ["reviews.shop.svc.cluster.local"],
      gateways: ["mesh"],
      http: [
        {
          name: "shop.reviews.0",
          match: [{ port: 9080 }],
          route: [{ destination: { host: "reviews.shop.svc.cluster.local", port: { number: 9080 } } }],
        },
      ],
    });
    const parents = (statuses[0].status as { parents: { conditions: { type: string; status: string }[] }[] }).parents;
    assert.equal(parents[0].conditions.find((c) => c.type === "Accepted")?.status, "True");
  });

  test("a route whose backend does not exist is accepted but has ResolvedRefs False", () => {
    const objects = [
      obj("Gateway", "gw", "infra", {
        gatewayClassName: "istio",
        listeners: [{ name: "http", port: 80, protocol: "HTTP" }],
      }),
      obj("HTTPRoute", "r", "infra", {
        parentRefs: [{ name: "gw" }],
        rules: [{ backendRefs: [{ name: "missing", port: 80 }] }],
      }),
    ];
    const { statuses } = convertResources(objects, settings, noServices);
    const route = statuses.find((s) => s.kind === "HTTPRoute");
    assert.ok(route);
    const resolved = (
      route.status as { parents: { conditions: { type: string; reason: string; message: string }[] }[] }
    ).parents[0].conditions.find((c) => c.type === "ResolvedRefs");
    assert.equal(resolved?.reason, "BackendNotFound");
    assert.equal(resolved?.message, "backend(missing.infra.svc.cluster.local) not found");
  });

  test("an object whose status would not change gets no status document", () => {
    const gatewayClass = obj("GatewayClass", "istio", undefined, { controllerName: "istio.io/gateway-controller" });
    const first = convertResources([gatewayClass], settings, noServices);
    assert.equal(first.statuses.length, 1);
    assert.equal(first.statuses[0].status && JSON.stringify(first.statuses[0].status).includes(settings.now), true);
    const again = convertResources([{ ...gatewayClass, status: first.statuses[0].status }], settings, noServices);
    assert.deepEqual(again.statuses, []);
  });

  test("classes of other controllers get neither config nor status", () => {
    const objects = [
      obj("GatewayClass", "other", undefined, { controllerName: "example.com/controller" }),
      obj("Gateway", "gw", "infra", {
        gatewayClassName: "other",
        listeners: [{ name: "http", port: 80, protocol: "HTTP" }],
      }),
    ];
    assert.deepEqual(convertResources(objects, settings, noServices), { config: [], statuses: [] });
  });

  test("a ListenerSet's status drops listeners its spec no longer has", () => {
    const objects = [
      obj("Gateway", "parent", "istio-system", {
        gatewayClassName: "istio",
        allowedListeners: { namespaces: { from: "All" } },
        listeners: [{ name: "default", hostname: "example.com", protocol: "HTTP", port: 80 }],
      }),
      obj(
        "ListenerSet",
        "set",
        "istio-system",
        {
          parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", name: "parent", namespace: "istio-system" },
          listeners: [
            { name: "a", hostname: "a.example.com", protocol: "HTTP", port: 80 },
            { name: "b", hostname: "b.example.com", protocol: "HTTP", port: 80 },
          ],
        },
        { status: { listeners: [{ name: "a" }, { name: "b" }, { name: "stale" }] } },
      ),
    ];
    const { statuses } = convertResources(objects, settings, noServices);
    const set = statuses.find((s) => s.kind === "ListenerSet");
    assert.ok(set);
    assert.deepEqual(
      (set.status as { listeners: { name: string }[] }).listeners.map((l) => l.name),
      ["a", "b"],
    );
  });
});
