// Statuses of the live conversion written back through the Kubernetes source, against a real API
// server (test/cluster): written once, only when they change, never for objects defined by files.
// Writes are counted as the MODIFIED events a watch of the two namespaces sees: no controller runs
// in the test cluster, so every change is this test's or the writer's.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { GatewayStatusWriter } from "../../src/gatewayapi/status-writer.ts";
import { type KindWatch, kindClient, type NamespacedClient } from "../../src/library/kube.ts";
import { storeGatewayConversion, storeRegistry } from "../../src/model/store-push.ts";
import { ConfigStore, MemorySource } from "../../src/sources/index.ts";
import { KubeSource } from "../../src/sources/kube/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { writers } from "../support/managed-fields.ts";
import { waitFor } from "../support/xds-fixtures.ts";
import { GATEWAY_API_VERSION, WEB_GATEWAY } from "./fixtures.ts";

const skip = clusterSkipReason();

const NOW = "2026-12-02T10:00:00Z";

interface Condition {
  type: string;
  status: string;
  reason: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}
type RouteStatus = { parents?: { conditions: Condition[] }[] };
type GatewayStatus = { conditions?: Condition[]; listeners?: { attachedRoutes: number }[] };

describe("GatewayStatusWriter", { skip }, () => {
  let cluster: Cluster;
  let infra: string;
  let apps: string;
  let source: KubeSource;
  let store: ConfigStore;
  let writer: GatewayStatusWriter;
  let gateway: ConfigObject;
  let cart: ConfigObject;
  const watches: KindWatch[] = [];
  /** "<plural>/<name>" of every MODIFIED event in the two namespaces, oldest first. */
  const modified: string[] = [];
  let markers = 0;
  let lastMarker: string | undefined;

  // Every kind here is namespaced.
  const client = (obj: ConfigObject) =>
    kindClient(cluster.kubeConfig(), obj.apiVersion, obj.kind) as NamespacedClient<ConfigObject>;
  const create = (obj: ConfigObject) => client(obj).create(obj);
  const read = (obj: ConfigObject) => client(obj).get(obj.metadata.namespace ?? "", obj.metadata.name ?? "");
  const replace = async (obj: ConfigObject) => {
    const current = await read(obj);
    return client(obj).update({
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: current.metadata.resourceVersion },
    });
  };
  const route = (name: string, backend: string): ConfigObject => ({
    apiVersion: GATEWAY_API_VERSION,
    kind: "HTTPRoute",
    metadata: { name, namespace: apps },
    spec: {
      parentRefs: [{ name: "web", namespace: infra }],
      rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
    },
  });
  const routeStatus = async (name = "shop") => (await read(route(name, "cart"))).status as RouteStatus | undefined;
  const gatewayStatus = async () => (await read(gateway)).status as GatewayStatus | undefined;
  const condition = (status: RouteStatus | undefined, type: string) =>
    status?.parents?.[0]?.conditions.find((c) => c.type === type);

  before(async () => {
    cluster = await sharedCluster();
    infra = await cluster.namespace("infra");
    apps = await cluster.namespace("apps");
    gateway = { ...WEB_GATEWAY, metadata: { ...WEB_GATEWAY.metadata, namespace: infra } };
    cart = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "cart", namespace: apps },
      spec: { ports: [{ name: "http", port: 80 }] },
    };
    await create(gateway);
    await create(cart);
    await create(route("shop", "cart"));
    for (const [obj, namespace] of [
      [gateway, infra],
      [route("shop", "cart"), apps],
    ] as const) {
      const { resourceVersion } = await client(obj).list(namespace);
      watches.push(
        await client(obj).watch(
          namespace,
          (type, o) => {
            if (type !== "MODIFIED") return;
            // settled()'s own changes are markers, not writes.
            const marker = o.metadata.annotations?.["sluice.test/marker"];
            if (marker !== undefined && marker !== lastMarker) modified.push(`marker:${marker}`);
            else modified.push(`${obj.kind.toLowerCase()}s/${o.metadata.name}`);
            if (marker !== undefined) lastMarker = marker;
          },
          { resourceVersion },
        ),
      );
    }
    store = new ConfigStore({ sourceOrder: ["file", "kubernetes"] });
    source = new KubeSource({ kubeConfig: cluster.kubeConfig(), writer: store, backoff: { initialMs: 5, maxMs: 20 } });
    await source.start();
    const registry = storeRegistry(store, DEFAULT_MESH_CONFIG, "cluster.local");
    const conversion = storeGatewayConversion(store, registry, "cluster.local");
    writer = new GatewayStatusWriter({ conversion, store, target: source, retryMs: 10, now: () => NOW });
    writer.start();
  });

  after(async () => {
    writer?.stop();
    source?.stop();
    for (const watch of watches) watch.stop();
  });

  /** The writer has nothing left to do, and the watch has delivered everything up to now. */
  async function settled(): Promise<void> {
    await writer.idle();
    // Writes the watch has not delivered yet: a change of our own is seen after them.
    const marker = `settled-${++markers}`;
    await client(gateway).patch(infra, "web", { metadata: { annotations: { "sluice.test/marker": marker } } });
    await waitFor(() => modified.includes(`marker:${marker}`), `the marker's MODIFIED event (seen ${modified})`);
    modified.splice(modified.indexOf(`marker:${marker}`), 1);
  }

  test("the route and the Gateway get their statuses, stamped, through the status subresource", async () => {
    await waitFor(async () => condition(await routeStatus(), "Accepted") !== undefined, "route status");
    const accepted = condition(await routeStatus(), "Accepted");
    assert.equal(accepted?.status, "True");
    assert.equal(accepted?.lastTransitionTime, NOW);
    assert.equal(accepted?.observedGeneration, 1);
    await waitFor(async () => (await gatewayStatus())?.listeners?.[0]?.attachedRoutes === 1, "gateway status");
    // Written through the status subresource: the spec's generation did not move.
    assert.equal((await read(route("shop", "cart"))).metadata.generation, 1);
    assert.equal((await read(gateway)).metadata.generation, 1);
    // As istiod's status updates: an update of the subresource under its user agent's command.
    for (const obj of [route("shop", "cart"), gateway]) {
      const status = writers(await read(obj)).filter(([, , subresource]) => subresource === "status");
      assert.deepEqual(status, [["pilot-discovery", "Update", "status"]], obj.metadata.name);
    }
  });

  test("once the written statuses come back through the watch, nothing more is written", async () => {
    await waitFor(
      () => store.list().some((s) => s.object.kind === "HTTPRoute" && s.object.status !== undefined),
      "watch",
    );
    await waitFor(() => (storeStatus(store, "Gateway") as GatewayStatus | undefined)?.listeners !== undefined, "watch");
    await settled();
    assert.equal(modified.filter((m) => m === "httproutes/shop").length, 1, "one status write for the route");
    const written = modified.length;
    // A change the conversion reads but that changes no status: recomputed, nothing written.
    await replace({ ...cart, metadata: { ...cart.metadata, labels: { team: "a" } } });
    await waitFor(() => store.list().some((s) => s.object.metadata.labels?.team === "a"), "the label");
    await settled();
    assert.deepEqual(modified.slice(written), []);
  });

  test("a route changed to a missing backend gets ResolvedRefs False, at its new generation", async () => {
    await settled();
    const before = modified.length;
    await replace(route("shop", "missing"));
    await waitFor(async () => {
      const resolved = condition(await routeStatus(), "ResolvedRefs");
      return resolved?.status === "False" && resolved.observedGeneration === 2;
    }, "ResolvedRefs False");
    assert.equal(condition(await routeStatus(), "ResolvedRefs")?.reason, "BackendNotFound");
    await settled();
    // Our spec change, then one status write for the route; the Gateway's status is unchanged.
    assert.deepEqual(modified.slice(before), ["httproutes/shop", "httproutes/shop"]);
  });

  test("objects defined by files get no status written; the cluster Gateway they attach to does", async () => {
    await settled();
    const before = modified.length;
    new MemorySource(store, "file").apply(route("from-file", "cart"));
    await waitFor(async () => (await gatewayStatus())?.listeners?.[0]?.attachedRoutes === 2, "two routes attached");
    await settled();
    assert.deepEqual(modified.slice(before), ["gateways/web"]);
  });
});

function storeStatus(store: ConfigStore, kind: string): unknown {
  return store.list().find((s) => s.object.kind === kind)?.object.status;
}
