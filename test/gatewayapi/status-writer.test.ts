// Statuses of the live conversion written back through the Kubernetes source, against the in-process
// API server: written once, only when they change, never for objects defined by files.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { GatewayStatusWriter } from "../../src/gatewayapi/status-writer.ts";
import { ConfigStore, MemorySource } from "../../src/sources/index.ts";
import { KubeSource } from "../../src/sources/kube/index.ts";
import { storeGatewayConversion, storeRegistry } from "../../src/xds/index.ts";
import { KubeTestServer } from "../kube-apiserver/index.ts";
import { waitFor } from "../xds/fixtures.ts";
import { GATEWAY_API_VERSION, WEB_GATEWAY } from "./fixtures.ts";

const NOW = "2026-12-02T10:00:00Z";

const namespace = (name: string): ConfigObject => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });

function route(name: string, backend: string): ConfigObject {
  return {
    apiVersion: GATEWAY_API_VERSION,
    kind: "HTTPRoute",
    metadata: { name, namespace: "apps" },
    spec: {
      parentRefs: [{ name: "web", namespace: "infra" }],
      rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
    },
  };
}

const cart: ConfigObject = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "cart", namespace: "apps" },
  spec: { ports: [{ name: "http", port: 80 }] },
};

interface Condition {
  type: string;
  status: string;
  reason: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}
type RouteStatus = { parents?: { conditions: Condition[] }[] };
type GatewayStatus = { conditions?: Condition[]; listeners?: { attachedRoutes: number }[] };

describe("GatewayStatusWriter", () => {
  let server: KubeTestServer;
  let source: KubeSource;
  let store: ConfigStore;
  let writer: GatewayStatusWriter;
  const statusWrites = () => server.requests.filter((r) => r.method === "PUT" && r.path.endsWith("/status"));
  const condition = (status: RouteStatus | undefined, type: string) =>
    status?.parents?.[0]?.conditions.find((c) => c.type === type);

  before(async () => {
    server = await KubeTestServer.start();
    for (const ns of ["infra", "apps"]) server.create(namespace(ns));
    server.create(WEB_GATEWAY);
    server.create(cart);
    server.create(route("shop", "cart"));
    store = new ConfigStore({ sourceOrder: ["file", "kubernetes"] });
    source = new KubeSource({ kubeConfig: server.kubeConfig(), writer: store, backoff: { initialMs: 5, maxMs: 20 } });
    await source.start();
    const registry = storeRegistry(store, DEFAULT_MESH_CONFIG, "cluster.local");
    const conversion = storeGatewayConversion(store, registry, "cluster.local");
    writer = new GatewayStatusWriter({ conversion, store, target: source, retryMs: 10, now: () => NOW });
    writer.start();
  });

  after(async () => {
    writer.stop();
    source.stop();
    await server.close();
  });

  test("the route and the Gateway get their statuses, stamped, through the status subresource", async () => {
    await waitFor(
      () => condition(server.get(route("shop", "cart")).status as RouteStatus, "Accepted") !== undefined,
      "route status",
    );
    const accepted = condition(server.get(route("shop", "cart")).status as RouteStatus, "Accepted");
    assert.equal(accepted?.status, "True");
    assert.equal(accepted?.lastTransitionTime, NOW);
    assert.equal(accepted?.observedGeneration, 1);
    await waitFor(
      () => (server.get(WEB_GATEWAY).status as GatewayStatus | undefined)?.listeners?.[0]?.attachedRoutes === 1,
      "gateway status",
    );
  });

  test("once the written statuses come back through the watch, nothing more is written", async () => {
    await waitFor(
      () => store.list().some((s) => s.object.kind === "HTTPRoute" && s.object.status !== undefined),
      "watch",
    );
    await waitFor(() => (storeStatus(store, "Gateway") as GatewayStatus | undefined)?.listeners !== undefined, "watch");
    await writer.idle();
    const written = statusWrites().length;
    // A change the conversion reads but that changes no status: recomputed, nothing written.
    server.update({ ...cart, metadata: { ...cart.metadata, labels: { team: "a" } } });
    await waitFor(() => store.list().some((s) => s.object.metadata.labels?.team === "a"), "the label");
    await writer.idle();
    assert.equal(statusWrites().length, written);
    assert.equal(statusWrites().filter((r) => r.path.includes("/httproutes/shop/")).length, 1);
  });

  test("a route changed to a missing backend gets ResolvedRefs False, at its new generation", async () => {
    const before = statusWrites().length;
    server.update(route("shop", "missing"));
    await waitFor(() => {
      const resolved = condition(server.get(route("shop", "cart")).status as RouteStatus, "ResolvedRefs");
      return resolved?.status === "False" && resolved.observedGeneration === 2;
    }, "ResolvedRefs False");
    assert.equal(
      condition(server.get(route("shop", "cart")).status as RouteStatus, "ResolvedRefs")?.reason,
      "BackendNotFound",
    );
    await writer.idle();
    assert.equal(statusWrites().length - before, 1, "one write for the route; the Gateway's status is unchanged");
  });

  test("objects defined by files get no status written; the cluster Gateway they attach to does", async () => {
    const before = statusWrites().length;
    new MemorySource(store, "file").apply(route("from-file", "cart"));
    await waitFor(
      () => (server.get(WEB_GATEWAY).status as GatewayStatus | undefined)?.listeners?.[0]?.attachedRoutes === 2,
      "two routes attached",
    );
    await writer.idle();
    assert.deepEqual(
      statusWrites()
        .slice(before)
        .map((r) => r.path.split("/").slice(-3, -1).join("/")),
      ["gateways/web"],
    );
  });
});

function storeStatus(store: ConfigStore, kind: string): unknown {
  return store.list().find((s) => s.object.kind === kind)?.object.status;
}
