import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { waitFor } from "../../../test/support/xds-fixtures.ts";
import type { ConfigObject } from "../../config/index.ts";
import { newPushContext } from "../../model/push-context.ts";
import { apiGenerator, GeneratorRegistry, PushPipeline, XdsServer } from "../../xds/index.ts";
import { MemorySource } from "../memory.ts";
import { ConfigStore } from "../store.ts";
import { XdsSource } from "./source.ts";

const virtualService = (name: string, host: string): ConfigObject => ({
  apiVersion: "networking.istio.io/v1",
  kind: "VirtualService",
  metadata: { name, namespace: "shop", labels: { team: "a" } },
  spec: { hosts: [host], http: [{ route: [{ destination: { host } }] }] },
});
const service: ConfigObject = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "reviews", namespace: "shop" },
  spec: { selector: { app: "reviews" }, ports: [{ name: "http", port: 9080 }] },
};
const namespace: ConfigObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } };

/** The upstream control plane: a store, the api generator over ADS, and the push pipeline. */
class Upstream {
  readonly store = new ConfigStore();
  readonly memory = new MemorySource(this.store);
  server!: XdsServer;
  pipeline!: PushPipeline;
  port = 0;

  async start(): Promise<void> {
    const generators = new GeneratorRegistry();
    generators.register("api", apiGenerator({ store: this.store, requireAuth: false, rootNamespace: "istio-system" }));
    this.server = new XdsServer({ generators, initialPush: newPushContext({}) });
    const { grpcPort } = await this.server.listen({ grpcAddr: `127.0.0.1:${this.port}` });
    this.port = grpcPort ?? 0;
    this.pipeline = new PushPipeline({
      store: this.store,
      server: this.server,
      build: () => newPushContext({}),
      debounce: { afterMs: 10, maxMs: 1000, edsDebounce: true },
    });
    this.pipeline.start();
  }

  async stop(): Promise<void> {
    this.pipeline.stop();
    await this.server.close(0);
  }
}

/** What a store holds, without the store-specific resourceVersion. */
function contents(store: ConfigStore): Array<[string, ConfigObject]> {
  return store.list().map(({ key, object }) => {
    const { resourceVersion: _rv, ...metadata } = object.metadata;
    return [`${key.kind} ${key.namespace}/${key.name}`, { ...object, metadata }];
  });
}

const upstream = new Upstream();
const replica = new ConfigStore();
let source: XdsSource;

before(async () => {
  upstream.memory.apply(virtualService("reviews", "reviews"));
  upstream.memory.apply(service);
  upstream.memory.apply(namespace);
  await upstream.start();
  source = new XdsSource({
    address: `127.0.0.1:${upstream.port}`,
    writer: replica,
    namespace: "istio-system",
    backoff: { initialMs: 20, maxMs: 100 },
  });
  await source.start();
});

after(async () => {
  source.stop();
  await upstream.stop();
});

test("the replica's store converges to the upstream store, kinds of every family included", () => {
  assert.ok(source.synced);
  assert.deepEqual(contents(replica), contents(upstream.store));
  assert.equal(replica.list().length, 3);
  assert.equal(replica.list()[0].source, "xds");
});

test("an edit upstream reaches the replica", async () => {
  upstream.memory.apply(virtualService("reviews", "reviews-v2"));
  upstream.memory.apply(virtualService("ratings", "ratings"));
  await waitFor(
    () => JSON.stringify(contents(replica)) === JSON.stringify(contents(upstream.store)),
    "the edit to reach the replica",
  );
  const vs = replica.get({ kind: "networking.istio.io/VirtualService", namespace: "shop", name: "reviews" });
  assert.deepEqual((vs?.object.spec as { hosts?: string[] } | undefined)?.hosts, ["reviews-v2"]);
});

test("a delete upstream reaches the replica", async () => {
  upstream.memory.delete({ kind: "networking.istio.io/VirtualService", namespace: "shop", name: "ratings" });
  await waitFor(
    () => !replica.get({ kind: "networking.istio.io/VirtualService", namespace: "shop", name: "ratings" }),
    "the delete to reach the replica",
  );
  assert.deepEqual(contents(replica), contents(upstream.store));
});

test("after the upstream restarts, the source reconnects and catches up on what changed meanwhile", async () => {
  await upstream.stop();
  upstream.memory.apply(virtualService("details", "details"));
  await upstream.start();
  await waitFor(
    () => !!replica.get({ kind: "networking.istio.io/VirtualService", namespace: "shop", name: "details" }),
    "the replica to catch up after the restart",
  );
  assert.deepEqual(contents(replica), contents(upstream.store));
});
