// /debug/push_status and the push metrics over a real discovery service: a mesh built to hit each
// case Istio reports while building that a mesh reaches here (duplicate subsets, listener conflicts, a
// DNS cluster without endpoints, an EDS cluster without instances; duplicate clusters and domains are
// in networking/push-status.test.ts), read back in Istio's ProxyStatus JSON and as gauges with Istio's names.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { pino } from "pino";
import { Registry } from "prom-client";
import { SotwClient, sidecarNode } from "../../test/support/ads-client.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../config/index.ts";
import { storePush, storeRegistry } from "../model/store-push.ts";
import { ConfigStore, MemorySource } from "../sources/index.ts";
import { type Discovery, startDiscovery, TypeUrl } from "../xds/index.ts";
import { type AdminServer, startAdminServer } from "./server.ts";

const mesh = DEFAULT_MESH_CONFIG;
const silent = pino({ level: "silent" });

const serviceEntry = (name: string, namespace: string, spec: Record<string, unknown>): ConfigObject => ({
  apiVersion: "networking.istio.io/v1",
  kind: "ServiceEntry",
  metadata: { name, namespace },
  spec,
});
const destinationRule = (name: string, subset: string): ConfigObject => ({
  apiVersion: "networking.istio.io/v1",
  kind: "DestinationRule",
  metadata: { name, namespace: "shop" },
  spec: { host: "reviews.example.com", subsets: [{ name: subset, labels: { version: subset } }] },
});

const objects: ConfigObject[] = [
  // reviews and catalog both select app-1's workload on target port 8080, one as HTTP, one as TCP.
  serviceEntry("reviews", "shop", {
    hosts: ["reviews.example.com"],
    ports: [{ number: 9080, name: "http", protocol: "HTTP", targetPort: 8080 }],
    resolution: "STATIC",
    location: "MESH_INTERNAL",
    workloadSelector: { labels: { app: "reviews" } },
  }),
  serviceEntry("catalog", "shop", {
    hosts: ["catalog.example.com"],
    ports: [{ number: 9090, name: "tcp", protocol: "TCP", targetPort: 8080 }],
    resolution: "STATIC",
    location: "MESH_INTERNAL",
    workloadSelector: { labels: { app: "reviews" } },
  }),
  {
    apiVersion: "networking.istio.io/v1",
    kind: "WorkloadEntry",
    metadata: { name: "reviews-1", namespace: "shop" },
    spec: { address: "10.0.0.5", labels: { app: "reviews" } },
  },
  // Two TCP services on one address and port: the second's chain has the first's match.
  serviceEntry("db-a", "shop", {
    hosts: ["db-a.example.com"],
    addresses: ["240.1.0.1"],
    ports: [{ number: 3306, name: "tcp", protocol: "TCP" }],
    resolution: "STATIC",
    endpoints: [{ address: "10.2.0.1" }],
  }),
  serviceEntry("db-b", "shop", {
    hosts: ["db-b.example.com"],
    addresses: ["240.1.0.1"],
    ports: [{ number: 3306, name: "tcp", protocol: "TCP" }],
    resolution: "STATIC",
    endpoints: [{ address: "10.2.0.2" }],
  }),
  // DNS resolution whose selector matches no workload: no endpoints at all.
  serviceEntry("legacy", "shop", {
    hosts: ["legacy.example.com"],
    ports: [{ number: 7000, name: "tcp", protocol: "TCP" }],
    resolution: "DNS",
    workloadSelector: { labels: { app: "nothing" } },
  }),
  destinationRule("reviews-a", "v1"),
  destinationRule("reviews-b", "v1"),
];

let discovery: Discovery;
let admin: AdminServer;
let metrics: Registry;
let client: SotwClient;
let memory: MemorySource;

before(async () => {
  const store = new ConfigStore();
  memory = new MemorySource(store, "file");
  for (const o of objects) assert.deepEqual(memory.apply(o).errors, [], `${o.kind} ${o.metadata.name}`);
  const registry = storeRegistry(store, mesh, "cluster.local");
  metrics = new Registry();
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
    metrics,
    log: silent,
  });
  admin = await startAdminServer({
    monitoringAddr: "127.0.0.1:0",
    httpAddr: "127.0.0.1:0",
    readiness: {},
    metrics,
    version: "0.1.0-test",
    authenticators: [],
    debugAuth: { systemNamespace: "istio-system" },
    log: silent,
  });
  admin.attachDebug(discovery.debugEndpoints, { server: discovery.server, store, mesh });
  // app-1 (the reviews workload) asks for clusters, listeners and reviews' endpoints.
  client = SotwClient.connect(`127.0.0.1:${discovery.ports.grpcPort}`);
  client.request({
    node: sidecarNode("app-1", "shop", { LABELS: { app: "reviews" }, INSTANCE_IPS: "10.0.0.5" }),
    typeUrl: TypeUrl.Cluster,
  });
  client.ack(await client.next());
  client.request({ typeUrl: TypeUrl.Listener });
  client.ack(await client.next());
  const eds = ["outbound|9080||reviews.example.com", "outbound|9080|v1|reviews.example.com"];
  client.request({ typeUrl: TypeUrl.Endpoint, resourceNames: eds });
  client.ack(await client.next(), eds);
});

after(async () => {
  client.close();
  await admin.stop();
  await discovery.stop(0);
});

async function get(port: number | undefined, path: string): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port ?? 0}${path}`);
  return { status: res.status, type: res.headers.get("content-type") ?? "", body: await res.text() };
}

test("push_status is Istio's ProxyStatus of the current push: metric → key → {proxy, message}", async () => {
  const res = await get(admin.httpPort, "/debug/push_status");
  assert.equal(res.status, 200);
  assert.equal(res.type, "application/json");
  assert.deepEqual(JSON.parse(res.body), {
    pilot_conflict_inbound_listener: {
      "app-1.shop": {
        proxy: "app-1.shop",
        message: "Conflicting inbound listener:8080. existing: catalog.example.com, incoming: reviews.example.com",
      },
    },
    pilot_conflict_outbound_listener_tcp_over_current_tcp: {
      "240.1.0.1_3306": {
        proxy: "app-1.shop",
        message: "Listener=240.1.0.1_3306 Accepted=TCP Rejected=TCP (db-b.example.com)",
      },
    },
    pilot_destrule_subsets: {
      "reviews.example.com": {
        message: "Duplicate subset v1 found while merging destination rules for reviews.example.com",
      },
    },
    pilot_dns_cluster_without_endpoints: {
      "outbound|7000||legacy.example.com": {
        proxy: "app-1.shop",
        message: "STRICT_DNS cluster without endpoints outbound|7000||legacy.example.com found while pushing CDS",
      },
    },
    // The v1 subset selects no workload (reviews-1 has no version label).
    pilot_eds_no_instances: { "outbound|9080|v1|reviews.example.com": {} },
  });
  // ?pretty indents as the other debug endpoints.
  assert.match((await get(admin.httpPort, "/debug/push_status?pretty")).body, /^\{\n {4}"pilot_conflict_inbound/);
});

test("the push metrics are gauges with Istio's names counting each metric's keys", async () => {
  const { body } = await get(admin.monitoringPort, "/metrics");
  for (const [name, value] of [
    ["pilot_conflict_inbound_listener", 1],
    ["pilot_conflict_outbound_listener_tcp_over_current_tcp", 1],
    ["pilot_destrule_subsets", 1],
    ["pilot_dns_cluster_without_endpoints", 1],
    ["pilot_duplicate_envoy_clusters", 0],
    ["pilot_eds_no_instances", 1],
    ["pilot_vservice_dup_domain", 0],
    ["pilot_no_ip", 0],
    ["pilot_endpoint_not_ready", 0],
    ["endpoint_no_pod", 0],
    ["pilot_virt_services", 0],
  ] as const) {
    assert.match(body, new RegExp(`^# HELP ${name} `, "m"), name);
    assert.match(body, new RegExp(`^${name} ${value}$`, "m"), name);
  }
});

test("an endpoint-only push keeps what the push it follows reported, as Istio serves it from the same push context", async () => {
  const before = discovery.server.pushContext;
  // A second reviews workload: only endpoints change, so reviews' assignment is pushed alone.
  memory.apply({
    apiVersion: "networking.istio.io/v1",
    kind: "WorkloadEntry",
    metadata: { name: "reviews-2", namespace: "shop" },
    spec: { address: "10.0.0.6", labels: { app: "reviews" } },
  });
  const response = await client.next();
  assert.equal(response.typeUrl, TypeUrl.Endpoint);
  client.ack(response, ["outbound|9080||reviews.example.com", "outbound|9080|v1|reviews.example.com"]);
  assert.notEqual(discovery.server.pushContext, before, "a new push context");
  const status = JSON.parse((await get(admin.httpPort, "/debug/push_status")).body);
  assert.ok(status.pilot_conflict_inbound_listener?.["app-1.shop"]);
  assert.ok(status.pilot_destrule_subsets?.["reviews.example.com"]);
});
