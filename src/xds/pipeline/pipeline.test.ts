import assert from "node:assert/strict";
import { test } from "node:test";
import { Registry } from "prom-client";
import { FakeClock } from "../../../test/support/fake-clock.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG, keyString } from "../../config/index.ts";
import type { MeshPush } from "../../model/mesh-push.ts";
import { newPushContext, type PushContext, type PushRequest } from "../../model/push-context.ts";
import { sameKeptInputs } from "../../model/push-inputs.ts";
import type { PushSnapshot } from "../../model/push-snapshot.ts";
import { storeGatewayConversion, storePush, storeRegistry } from "../../model/store-push.ts";
import { ConfigStore, MemorySource } from "../../sources/index.ts";
import { PipelineMetrics } from "./metrics.ts";
import { PushPipeline } from "./pipeline.ts";

const service = (name: string, selector: Record<string, string>, port = 80): ConfigObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: "shop" },
  spec: { selector, ports: [{ name: "http", port }] },
});
const pod = (name: string, labels: Record<string, string>, ip = "10.0.0.1"): ConfigObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "shop", labels },
  spec: { containers: [{ name: "app", image: "app" }] },
  status: { podIP: ip, phase: "Running" },
});
const slice = (service: string, ip: string): ConfigObject => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name: `${service}-1`, namespace: "shop", labels: { "kubernetes.io/service-name": service } },
  addressType: "IPv4",
  endpoints: [{ addresses: [ip] }],
  ports: [{ name: "http", port: 80 }],
});
const virtualService = (name: string): ConfigObject => ({
  apiVersion: "networking.istio.io/v1",
  kind: "VirtualService",
  metadata: { name, namespace: "shop" },
  spec: { hosts: [name], http: [{ route: [{ destination: { host: name } }] }] },
});

function setup() {
  const store = new ConfigStore();
  const memory = new MemorySource(store);
  const clock = new FakeClock();
  const metrics = new Registry();
  const pushes: PushRequest[] = [];
  const built: Array<{ previous: PushContext; full: boolean }> = [];
  const server = {
    pushContext: newPushContext({ generation: 0 }) as PushContext | undefined,
    changesComing: 0,
    push(req: PushRequest) {
      pushes.push(req);
      this.pushContext = req.push;
    },
    changeComing() {
      this.changesComing++;
    },
  };
  const pipeline = new PushPipeline({
    store,
    // Which services select a workload is the registry's answer, kept by krt over the store.
    services: storeRegistry(store, DEFAULT_MESH_CONFIG, "cluster.local"),
    server,
    build: (previous, req) => {
      built.push({ previous, full: req.full });
      return newPushContext({ generation: built.length });
    },
    debounce: { afterMs: 100, maxMs: 10_000, edsDebounce: true },
    metrics: new PipelineMetrics(metrics),
    countServices: () => store.list("/Service").length,
    clock,
  });
  pipeline.start();
  return { store, memory, clock, metrics, pushes, built, server, pipeline };
}

const keys = (req: PushRequest) => [...req.configsUpdated.values()].map(keyString).sort();

test("a config change is a full push naming the config, built on the previous push context", async () => {
  const { memory, clock, pushes, built, server } = setup();
  const first = server.pushContext;
  memory.apply(virtualService("reviews"));
  assert.equal(server.changesComing, 1, "the server hears of the change before the debounce ends");
  assert.equal(pushes.length, 0);
  await clock.advance(100);
  assert.equal(pushes.length, 1);
  assert.equal(pushes[0].full, true);
  assert.deepEqual(keys(pushes[0]), ["networking.istio.io/VirtualService shop/reviews"]);
  assert.equal(built[0].previous, first);
  assert.notEqual(pushes[0].push, first, "the push carries the new push context");
  assert.ok(Object.isFrozen(pushes[0]));
});

test("an EndpointSlice change is an incremental push naming the service's hostname", async () => {
  const { memory, clock, pushes } = setup();
  memory.apply(slice("reviews", "10.0.0.1"));
  await clock.advance(100);
  assert.equal(pushes.length, 1);
  assert.equal(pushes[0].full, false);
  assert.deepEqual(keys(pushes[0]), ["networking.istio.io/ServiceEntry shop/reviews.shop.svc.cluster.local"]);
  assert.equal(pushes[0].reasons.get("endpoint"), 1);
});

test("a Pod change pushes EDS for the services selecting it, before or after the change", async () => {
  const { memory, clock, pushes } = setup();
  memory.apply(service("reviews", { app: "reviews" }));
  memory.apply(service("ratings", { app: "ratings" }));
  await clock.advance(100);
  pushes.length = 0;
  memory.apply(pod("p1", { app: "reviews" }));
  await clock.advance(100);
  assert.equal(pushes[0].full, false);
  assert.deepEqual(keys(pushes[0]), ["networking.istio.io/ServiceEntry shop/reviews.shop.svc.cluster.local"]);
  memory.apply(pod("p1", { app: "ratings" }));
  await clock.advance(100);
  assert.deepEqual(keys(pushes[1]), [
    "networking.istio.io/ServiceEntry shop/ratings.shop.svc.cluster.local",
    "networking.istio.io/ServiceEntry shop/reviews.shop.svc.cluster.local",
  ]);
  memory.apply(pod("lonely", { app: "nobody" }));
  await clock.advance(1000);
  assert.equal(pushes.length, 2, "a pod no service selects pushes nothing");
});

test("an endpoint change that leaves every endpoint as it was pushes nothing (a Pod before its slice lists it)", async () => {
  const store = new ConfigStore();
  const memory = new MemorySource(store);
  const clock = new FakeClock();
  const registry = storeRegistry(store, DEFAULT_MESH_CONFIG, "cluster.local");
  const build = (previous?: MeshPush) => storePush(store, registry, DEFAULT_MESH_CONFIG, "cluster.local", previous);
  const pushes: PushRequest[] = [];
  const server = {
    pushContext: build() as MeshPush | undefined,
    push(req: PushRequest<PushSnapshot>) {
      pushes.push(req);
      this.pushContext = req.push as MeshPush;
    },
  };
  const pipeline = new PushPipeline<PushSnapshot>({
    store,
    services: registry,
    server,
    build: (previous) => build(previous as MeshPush),
    sameState: (previous, next) => sameKeptInputs(previous.snapshot.inputs, next.snapshot.inputs),
    clock,
  });
  pipeline.start();
  memory.apply(service("reviews", { app: "reviews" }));
  memory.apply(slice("reviews", "10.0.0.1"));
  // Ready, so that the slice's address takes its labels (the slice names no targetRef).
  const readyPod = (name: string, labels: Record<string, string>, ip: string): ConfigObject => ({
    ...pod(name, labels, ip),
    status: { podIP: ip, phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
  });
  memory.apply(readyPod("p1", { app: "reviews" }, "10.0.0.1"));
  await clock.advance(100);
  assert.equal(pushes.length, 1, "the service and its endpoint are pushed");
  const pushed = server.pushContext;

  memory.apply(readyPod("p2", { app: "reviews" }, "10.0.0.2"));
  await clock.advance(1000);
  assert.equal(pushes.length, 1, "a Pod no EndpointSlice lists yet changes no endpoint");
  assert.equal(server.pushContext, pushed, "the server keeps the push context it pushed");

  memory.apply(slice("reviews", "10.0.0.2"));
  await clock.advance(100);
  assert.equal(pushes.length, 2, "the slice listing it is pushed");
  assert.equal(pushes[1].full, false);
  assert.deepEqual(keys(pushes[1]), ["networking.istio.io/ServiceEntry shop/reviews.shop.svc.cluster.local"]);

  memory.apply(readyPod("p2", { app: "reviews", version: "v2" }, "10.0.0.2"));
  await clock.advance(100);
  assert.equal(pushes.length, 3, "new labels on a Pod the slice lists change its endpoint's labels");
  assert.equal(pushes[2].full, false);

  memory.apply(virtualService("reviews"));
  await clock.advance(100);
  assert.equal(pushes.length, 4, "a config change is pushed as ever");
  assert.equal(pushes[3].full, true);

  // The ambient index's changes are not in the push context: pushed though the store holds what it did.
  pipeline.pushPolicies(new Set(["shop/allow"]));
  await clock.advance(100);
  assert.equal(pushes.length, 5, "an ambient policy change is pushed");
});

const serviceEntry = (name: string, resolution: string): ConfigObject => ({
  apiVersion: "networking.istio.io/v1",
  kind: "ServiceEntry",
  metadata: { name, namespace: "shop" },
  spec: {
    hosts: [`${name}.example.com`],
    ports: [{ number: 80, name: "http", protocol: "HTTP" }],
    resolution,
    workloadSelector: { labels: { app: name } },
  },
});
const workloadEntry = (name: string, app: string): ConfigObject => ({
  apiVersion: "networking.istio.io/v1",
  kind: "WorkloadEntry",
  metadata: { name, namespace: "shop" },
  spec: { address: "10.0.1.1", labels: { app } },
});

test("a WorkloadEntry behind a DNS ServiceEntry is a full push naming it (CDS holds its endpoints); STATIC is EDS-only", async () => {
  const { memory, clock, pushes } = setup();
  memory.apply(serviceEntry("dns", "DNS"));
  memory.apply(serviceEntry("static", "STATIC"));
  await clock.advance(100);
  pushes.length = 0;
  memory.apply(workloadEntry("w1", "dns"));
  await clock.advance(100);
  assert.equal(pushes.length, 1);
  assert.equal(pushes[0].full, true);
  assert.deepEqual(keys(pushes[0]), ["networking.istio.io/ServiceEntry shop/dns.example.com"]);
  assert.equal(pushes[0].reasons.get("endpoint"), 1);
  memory.apply(workloadEntry("w2", "static"));
  await clock.advance(100);
  assert.equal(pushes.length, 2);
  assert.equal(pushes[1].full, false);
  assert.deepEqual(keys(pushes[1]), ["networking.istio.io/ServiceEntry shop/static.example.com"]);
});

test("a Service whose selector alone changed is incremental; any other Service change is full", async () => {
  const { memory, clock, pushes } = setup();
  memory.apply(service("reviews", { app: "reviews" }));
  await clock.advance(100);
  assert.equal(pushes[0].full, true);
  assert.equal(pushes[0].reasons.get("service"), 1);
  memory.apply(service("reviews", { app: "reviews-v2" }));
  await clock.advance(100);
  assert.equal(pushes[1].full, false);
  memory.apply(service("reviews", { app: "reviews-v2" }, 8080));
  await clock.advance(100);
  assert.equal(pushes[2].full, true);
  // A new load-balancer address may move a network gateway: every proxy's endpoints can change.
  memory.apply({
    ...service("reviews", { app: "reviews-v2" }, 8080),
    status: { loadBalancer: { ingress: [{ ip: "35.1.1.1" }] } },
  });
  await clock.advance(100);
  assert.equal(pushes[3].full, true);
});

test("Gateway API objects push through the Istio config converted from them, never by themselves", async () => {
  const { store, memory, clock, pushes } = setup();
  storeGatewayConversion(store, storeRegistry(store, DEFAULT_MESH_CONFIG, "cluster.local"), "cluster.local");
  const gatewayApi = (kind: string, spec: unknown, status?: unknown): ConfigObject => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind,
    metadata: { name: "web", namespace: "shop" },
    spec,
    ...(status === undefined ? {} : { status }),
  });
  const route = (path: string, status?: unknown) =>
    gatewayApi(
      "HTTPRoute",
      { parentRefs: [{ name: "web" }], rules: [{ matches: [{ path: { value: path } }] }] },
      status,
    );
  memory.apply(
    gatewayApi("Gateway", { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] }),
  );
  memory.apply(route("/a"));
  await clock.advance(100);
  assert.equal(pushes.length, 1);
  assert.deepEqual(keys(pushes[0]), [
    "networking.istio.io/Gateway shop/web~istio-autogenerated-k8s-gateway~http",
    "networking.istio.io/VirtualService shop/shop~web~istio-autogenerated-k8s-gateway~http~*",
  ]);
  // A status write coming back converts to the same config: no push.
  memory.apply(route("/a", { parents: [] }));
  await clock.advance(100);
  assert.equal(pushes.length, 1);
  memory.apply(route("/b", { parents: [] }));
  await clock.advance(100);
  assert.equal(pushes.length, 2);
  assert.deepEqual(keys(pushes[1]), [
    "networking.istio.io/VirtualService shop/shop~web~istio-autogenerated-k8s-gateway~http~*",
  ]);
});

test("changes close together are one push; metrics count triggers, inbound updates, services and timings", async () => {
  const { memory, clock, pushes, metrics } = setup();
  memory.apply(service("reviews", { app: "reviews" }));
  memory.apply(virtualService("reviews"));
  memory.apply(slice("reviews", "10.0.0.2"));
  await clock.advance(50);
  memory.apply(virtualService("ratings"));
  await clock.advance(100);
  assert.equal(pushes.length, 1);
  assert.equal(pushes[0].full, true);
  // The Service and its EndpointSlice name the same hostname.
  assert.equal(pushes[0].configsUpdated.size, 3);
  const text = await metrics.metrics();
  assert.match(text, /pilot_push_triggers\{type="config"\} 2/);
  assert.match(text, /pilot_push_triggers\{type="service"\} 1/);
  assert.match(text, /pilot_push_triggers\{type="endpoint"\} 1/);
  assert.match(text, /pilot_inbound_updates\{type="config"\} 2/);
  assert.match(text, /pilot_inbound_updates\{type="svc"\} 1/);
  assert.match(text, /pilot_inbound_updates\{type="eds"\} 1/);
  assert.match(text, /pilot_services 1/);
  assert.match(text, /pilot_debounce_time_count 1/);
  assert.match(text, /pilot_debounce_time_sum 0.15/);
  assert.match(text, /pilot_pushcontext_init_seconds_count 1/);
  memory.delete({ kind: "/Service", namespace: "shop", name: "reviews" });
  await clock.advance(100);
  assert.match(await metrics.metrics(), /pilot_inbound_updates\{type="svcdelete"\} 1/);
});

test("a failing build keeps the previous push context and pushes nothing", async () => {
  const store = new ConfigStore();
  const clock = new FakeClock();
  const pushes: PushRequest[] = [];
  const server = { pushContext: newPushContext({}), push: (req: PushRequest) => void pushes.push(req) };
  new PushPipeline({
    store,
    server,
    build: () => {
      throw new Error("broken");
    },
    clock,
  }).start();
  new MemorySource(store).apply(virtualService("reviews"));
  await clock.advance(100);
  assert.equal(pushes.length, 0);
});

test("the pipeline refuses to start before the server has a push context, and stops following the store", async () => {
  const store = new ConfigStore();
  const server = { pushContext: undefined, push: () => assert.fail("no push expected") };
  assert.throws(() => new PushPipeline({ store, server, build: (p) => p }).start(), /no push context/);
  const { memory, clock, pushes, pipeline } = setup();
  pipeline.stop();
  memory.apply(virtualService("reviews"));
  await clock.advance(1000);
  assert.equal(pushes.length, 0);
});

test("pushAll is a full push of everything, debounced with the store's changes", async () => {
  const { memory, clock, pushes, built, server, pipeline } = setup();
  pipeline.pushAll("global");
  assert.equal(server.changesComing, 1);
  memory.apply(virtualService("reviews"));
  await clock.advance(100);
  assert.equal(pushes.length, 1, "one push for both");
  assert.equal(pushes[0].full, true);
  // No keys: everything may have changed (it absorbed the VirtualService's).
  assert.deepEqual(keys(pushes[0]), []);
  assert.equal(pushes[0].reasons.get("global"), 1);
  assert.equal(built.length, 1);
});

test("pushPolicies is an incremental ambient push naming each policy as an AuthorizationPolicy; pushAddresses names addresses", async () => {
  const { clock, pushes, server, pipeline } = setup();
  pipeline.pushPolicies(new Set(["shop/allow", "istio-system/istio_converted_static_strict"]));
  pipeline.pushPolicies(new Set());
  assert.equal(server.changesComing, 1, "nothing named, nothing pushed");
  await clock.advance(100);
  assert.equal(pushes.length, 1);
  assert.equal(pushes[0].full, false);
  assert.equal(pushes[0].reasons.get("ambient"), 1);
  assert.equal(pushes[0].addressesUpdated, undefined);
  assert.deepEqual(keys(pushes[0]), [
    "security.istio.io/AuthorizationPolicy istio-system/istio_converted_static_strict",
    "security.istio.io/AuthorizationPolicy shop/allow",
  ]);
  pipeline.pushAddresses(new Set(["Kubernetes//Pod/shop/a"]));
  await clock.advance(100);
  assert.deepEqual([...(pushes[1].addressesUpdated ?? [])], ["Kubernetes//Pod/shop/a"]);
  assert.deepEqual(keys(pushes[1]), ["ambient.istio.io/Address Kubernetes//Pod/shop/a"]);
});
