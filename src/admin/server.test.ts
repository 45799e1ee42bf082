// The admin HTTP server over a real discovery service and a small mesh (a ServiceEntry with a
// WorkloadEntry, policies, an invalid object): every endpoint's shape, parameters and errors, and
// Istio's debug auth for callers that are not local.
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, test } from "node:test";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { pino } from "pino";
import { Registry } from "prom-client";
import { SotwClient, sidecarNode } from "../../test/support/ads-client.ts";
import { anyViolations } from "../../test/support/pgv.ts";
import { waitFor } from "../../test/support/xds-fixtures.ts";
import { admin, registry as apiRegistry, unpackAny } from "../api/index.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../config/index.ts";
import { loadMeshNetworks } from "../config/mesh-networks.ts";
import type { XdsCacheStats } from "../configgen/index.ts";
import { DebugRegistry } from "../krt/index.ts";
import { buildPushContext } from "../model/index.ts";
import { storePush, storeRegistry } from "../model/store-push.ts";
import { ConfigStore, MemorySource } from "../sources/index.ts";
import type { MemoStats } from "../util/memo.ts";
import { SLUICE_VERSION } from "../util/version.ts";
import { type Authenticator, DebugEndpoints, type Discovery, startDiscovery, TypeUrl } from "../xds/index.ts";
import { byteCount, type DebugSources } from "./debug.ts";
import { type AdminServer, type AdminServerOptions, parseListenAddress, startAdminServer } from "./server.ts";

const mesh = DEFAULT_MESH_CONFIG;
const silent = pino({ level: "silent" });
const HOST = "reviews.example.com";
/** The clusters app-1 watches over EDS: reviews, and ratings, which has no endpoints. */
const EDS_CLUSTERS = ["outbound|9080||ratings.example.com", `outbound|9080||${HOST}`];

const objects: ConfigObject[] = [
  {
    apiVersion: "networking.istio.io/v1",
    kind: "ServiceEntry",
    metadata: { name: "reviews", namespace: "shop" },
    spec: {
      hosts: [HOST],
      ports: [{ number: 9080, name: "http", protocol: "HTTP" }],
      resolution: "STATIC",
      location: "MESH_INTERNAL",
      workloadSelector: { labels: { app: "reviews" } },
    },
  },
  {
    apiVersion: "networking.istio.io/v1",
    kind: "ServiceEntry",
    metadata: { name: "ratings", namespace: "shop" },
    spec: {
      hosts: ["ratings.example.com"],
      ports: [{ number: 9080, name: "http", protocol: "HTTP" }],
      resolution: "STATIC",
      workloadSelector: { labels: { app: "ratings" } },
    },
  },
  {
    apiVersion: "networking.istio.io/v1",
    kind: "WorkloadEntry",
    metadata: { name: "reviews-1", namespace: "shop" },
    spec: { address: "10.0.0.5", labels: { app: "reviews" }, serviceAccount: "reviews" },
  },
  {
    apiVersion: "networking.istio.io/v1",
    kind: "DestinationRule",
    metadata: { name: "reviews", namespace: "shop" },
    spec: { host: HOST, trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } } },
  },
  {
    apiVersion: "security.istio.io/v1",
    kind: "AuthorizationPolicy",
    metadata: { name: "allow-all", namespace: "shop" },
    spec: { rules: [{}] },
  },
  {
    apiVersion: "telemetry.istio.io/v1",
    kind: "Telemetry",
    metadata: { name: "mesh-default", namespace: "istio-system" },
    spec: { accessLogging: [{ providers: [{ name: "envoy" }] }] },
  },
];

let store: ConfigStore;
let discovery: Discovery;
let metrics: Registry;
let server: AdminServer;
let ready = true;
const krt = new DebugRegistry();
const clients: SotwClient[] = [];

/** Accepts `Bearer system` (istio-system) and `Bearer shop` (namespace shop). */
const fakeAuthenticator: Authenticator = {
  name: "FakeTokenAuthenticator",
  authenticate(ctx) {
    const token = ctx.header("authorization")?.replace(/^Bearer /, "");
    if (token === "system")
      return { identities: ["spiffe://cluster.local/ns/istio-system/sa/istiod"], authenticator: this.name };
    if (token === "shop") return { identities: ["spiffe://cluster.local/ns/shop/sa/app"], authenticator: this.name };
    return new Error("no valid token");
  },
};

function debugSources(): DebugSources {
  return { server: discovery.server, cache: discovery.cache, store, registry: registryOf, mesh, krt };
}
let registryOf: ReturnType<typeof storeRegistry>;

/** An admin server serving `endpoints` (default the discovery's) over `sources`. */
async function startAdmin(
  overrides: Partial<AdminServerOptions>,
  endpoints = discovery.debugEndpoints,
  sources = debugSources(),
): Promise<AdminServer> {
  const started = await startAdminServer(adminOptions(overrides));
  started.attachDebug(endpoints, sources);
  return started;
}

function adminOptions(overrides: Partial<AdminServerOptions>): AdminServerOptions {
  return {
    monitoringAddr: "127.0.0.1:0",
    httpAddr: "127.0.0.1:0",
    readiness: { discovery: () => ready },
    metrics,
    version: "0.1.0-test",
    authenticators: [fakeAuthenticator],
    debugAuth: { systemNamespace: "istio-system" },
    log: silent,
    ...overrides,
  };
}

before(async () => {
  store = new ConfigStore({ debug: krt });
  const memory = new MemorySource(store, "file");
  for (const o of objects) assert.deepEqual(memory.apply(o).errors, [], o.kind);
  // An invalid object: the store keeps it out and lists the problem.
  memory.apply({
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "broken", namespace: "shop" },
    spec: { hosts: [] },
  });
  registryOf = storeRegistry(store, mesh, "cluster.local");
  metrics = new Registry();
  discovery = await startDiscovery({
    store,
    initialPush: storePush(store, registryOf, mesh, "cluster.local"),
    endpoints: registryOf,
    build: (previous) => storePush(store, registryOf, mesh, "cluster.local", previous),
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
  server = await startAdmin({});
  // Two sidecars: app-1 in shop, at the WorkloadEntry's address, and app-2 in another namespace.
  const shop = connect(sidecarNode("app-1", "shop", { LABELS: { app: "reviews" }, INSTANCE_IPS: "10.0.0.5" }));
  const other = connect(sidecarNode("app-2", "other"));
  for (const c of [shop, other]) c.ack(await c.next());
  shop.request({ typeUrl: TypeUrl.Endpoint, resourceNames: EDS_CLUSTERS });
  shop.ack(await shop.next(), EDS_CLUSTERS);
});

after(async () => {
  for (const c of clients) c.close();
  await server.stop();
  await discovery.stop(0);
});

function connect(node: ReturnType<typeof sidecarNode>): SotwClient {
  const client = SotwClient.connect(`127.0.0.1:${discovery.ports.grpcPort}`);
  client.request({ node, typeUrl: TypeUrl.Cluster });
  clients.push(client);
  return client;
}

interface Reply {
  status: number;
  type: string;
  body: string;
}

/** One HTTP request, from `localAddress` when given. */
function call(
  port: number,
  path: string,
  options: { host?: string; localAddress?: string; token?: string; firstChunkOnly?: boolean } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: options.host ?? "127.0.0.1",
        port,
        path,
        localAddress: options.localAddress,
        headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        const done = () =>
          resolve({
            status: res.statusCode ?? 0,
            type: res.headers["content-type"] ?? "",
            body: Buffer.concat(chunks).toString(),
          });
        res.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          if (options.firstChunkOnly) {
            res.destroy();
            done();
          }
        });
        res.on("end", done);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const debugCall = (path: string) => call(server.httpPort ?? 0, path);
async function json<T>(path: string): Promise<T> {
  const res = await debugCall(path);
  assert.equal(res.status, 200, `${path}: ${res.body}`);
  assert.match(res.type, /application\/json/);
  return JSON.parse(res.body) as T;
}

test("started before the discovery service, the server answers /ready 503 and no debug endpoint until attached", async () => {
  const early = await startAdminServer(
    adminOptions({ monitoringAddr: "", readiness: { discovery: () => false, "config validation": () => true } }),
  );
  try {
    const port = early.httpPort ?? 0;
    assert.equal((await call(port, "/ready")).status, 503);
    assert.equal((await call(port, "/metrics")).status, 200);
    assert.equal((await call(port, "/debug/configz")).status, 404);
    assert.doesNotMatch((await call(port, "/debug")).body, /href='\/debug\/configz'/);
    early.attachDebug(new DebugEndpoints(), debugSources());
    assert.equal((await call(port, "/debug/configz")).status, 200);
    assert.match((await call(port, "/debug")).body, /href='\/debug\/configz'/);
  } finally {
    await early.stop();
  }
});

test("the version is the package's", () => {
  assert.match(SLUICE_VERSION, /^\d+\.\d+\.\d+/);
});

test("listen addresses are Go's host:port, an empty host meaning every interface", () => {
  assert.deepEqual(parseListenAddress(":15014"), { host: "::", port: 15014 });
  assert.deepEqual(parseListenAddress("127.0.0.2:0"), { host: "127.0.0.2", port: 0 });
  assert.deepEqual(parseListenAddress("[::1]:8080"), { host: "::1", port: 8080 });
  assert.throws(() => parseListenAddress("localhost"), /bad listen address/);
});

test("/metrics has Istio's metric names and the process metrics; /version is text; each on the monitoring port only", async () => {
  const port = server.monitoringPort ?? 0;
  const res = await call(port, "/metrics");
  assert.equal(res.status, 200);
  assert.match(res.type, /text\/plain/);
  assert.match(res.body, /^pilot_xds\{version="1\.24\.0"\} 2$/m);
  assert.match(res.body, /^pilot_info\{version="0\.1\.0-test"\} 1$/m);
  assert.match(res.body, /^istiod_uptime_seconds \d/m);
  assert.match(res.body, /^process_cpu_user_seconds_total /m);
  assert.match(res.body, /^nodejs_heap_size_used_bytes /m);
  assert.match(res.body, /^sluiced_array_buffers_bytes [1-9]\d*$/m);
  assert.deepEqual(await call(port, "/version"), {
    status: 200,
    type: "text/plain; charset=utf-8",
    body: "0.1.0-test",
  });
  assert.equal((await call(server.httpPort ?? 0, "/metrics")).status, 404);
  assert.equal((await call(port, "/ready")).status, 404);
});

test("/ready is 200 only while every readiness probe passes, 503 otherwise", async () => {
  const port = server.httpPort ?? 0;
  assert.deepEqual(await call(port, "/ready"), { status: 200, type: "", body: "" });
  ready = false;
  try {
    assert.equal((await call(port, "/ready")).status, 503);
  } finally {
    ready = true;
  }
});

test("/debug is the HTML index of every endpoint; /debug/list names them in JSON, without itself and pprof", async () => {
  for (const port of [server.httpPort ?? 0, server.monitoringPort ?? 0]) {
    const index = await call(port, "/debug");
    assert.equal(index.status, 200);
    assert.match(index.type, /text\/html/);
    assert.match(index.body, /<title>Pilot Debug Console<\/title>/);
    assert.match(index.body, /<a href='\/debug\/syncz'>\/debug\/syncz<\/a><\/td><td>Synchronization status/);
    assert.match(index.body, /\/debug\/pprof\/profile/);
  }
  const list = await json<string[]>("/debug/list");
  for (const name of [
    "adsz",
    "adsz?push=true",
    "authorizationz",
    "cachez",
    "cachez?clear=true",
    "cachez?sizes=true",
    "clusterz",
    "config_dump",
    "configz",
    "connections",
    "ecdsz",
    "edsz",
    "endpointShardz",
    "endpointz",
    "inject",
    "instancesz",
    "krtz",
    "mcsz",
    "mesh",
    "ndsz",
    "networkz",
    "push_status",
    "pushcontext",
    "registryz",
    "resourcesz",
    "sidecarz",
    "syncz",
    "telemetryz",
  ]) {
    assert.ok(list.includes(name), name);
  }
  assert.deepEqual([...list].sort(), list, "sorted");
  assert.ok(!list.includes("list") && !list.some((n) => n.includes("pprof")) && !list.includes("force_disconnect"));
  assert.deepEqual(await debugCall("/debug/nosuch"), {
    status: 404,
    type: "text/plain; charset=utf-8",
    body: "404 page not found\n",
  });
});

interface AdsClients {
  totalClients: number;
  clients?: {
    connectionId: string;
    connectedAt: string;
    address: string;
    labels?: Record<string, string>;
    metadata: Record<string, unknown>;
    watches?: Record<string, string[]>;
  }[];
}

test("adsz lists the connections with their watches; proxyID selects one; push=true pushes to every proxy", async () => {
  const all = await json<AdsClients>("/debug/adsz");
  assert.equal(all.totalClients, 2);
  const shop = all.clients?.find((c) => c.connectionId.startsWith("app-1.shop-"));
  assert.deepEqual(shop?.labels, { app: "reviews" });
  assert.equal(shop?.metadata.NAMESPACE, "shop");
  assert.match(shop?.address ?? "", /127\.0\.0\.1/);
  assert.ok(!Number.isNaN(Date.parse(shop?.connectedAt ?? "")));
  assert.deepEqual(shop?.watches?.[TypeUrl.Endpoint], EDS_CLUSTERS);

  const one = await json<AdsClients>("/debug/adsz?proxyID=app-2.other");
  assert.deepEqual(
    one.clients?.map((c) => c.connectionId.replace(/-\d+$/, "")),
    ["app-2.other"],
  );
  const missing = await debugCall("/debug/adsz?proxyID=nobody.shop");
  assert.equal(missing.status, 404);
  assert.equal(missing.body, "Proxy not connected to this Pilot instance. It may be connected to another instance.\n");

  const pushed = await debugCall("/debug/adsz?push=true");
  assert.deepEqual([pushed.status, pushed.body], [200, "Pushed to 2 servers\n"]);
  // The forced push reaches the proxies: each gets its watched types again, in push order.
  const [shopClient, otherClient] = clients;
  const shopCds = await shopClient.next();
  assert.equal(shopCds.typeUrl, TypeUrl.Cluster);
  shopClient.ack(shopCds);
  const shopEds = await shopClient.next();
  assert.equal(shopEds.typeUrl, TypeUrl.Endpoint);
  shopClient.ack(shopEds, EDS_CLUSTERS);
  const otherCds = await otherClient.next();
  assert.equal(otherCds.typeUrl, TypeUrl.Cluster);
  otherClient.ack(otherCds);
});

interface SyncStatus {
  proxy: string;
  proxy_type: string;
  istio_version?: string;
  cluster_sent?: string;
  cluster_acked?: string;
  resources?: Record<string, { sent?: string; acked?: string; sentTime: string; lastError?: string }>;
}

test("syncz has each proxy's nonces sent and acked per type; namespace filters", async () => {
  await waitFor(
    () => discovery.server.syncStatus().every((c) => c.types.every((t) => t.state === "SYNCED")),
    "every response acked",
  );
  const all = await json<SyncStatus[]>("/debug/syncz");
  assert.deepEqual(
    all.map((s) => s.proxy),
    ["app-1.shop", "app-2.other"],
  );
  const other = all[1];
  assert.equal(other.proxy_type, "sidecar");
  assert.equal(other.istio_version, "1.24.0");
  assert.ok(other.cluster_sent);
  assert.equal(other.cluster_acked, other.cluster_sent);
  assert.equal(other.resources?.[TypeUrl.Cluster]?.sent, other.cluster_sent);
  assert.ok(!Number.isNaN(Date.parse(other.resources?.[TypeUrl.Cluster]?.sentTime ?? "")));
  assert.deepEqual(
    (await json<SyncStatus[]>("/debug/syncz?namespace=other")).map((s) => s.proxy),
    ["app-2.other"],
  );
});

test("registryz lists the registry's services; endpointShardz (and endpointz) the endpoints by host, namespace and shard", async () => {
  const services = await json<{ hostname: string; namespace: string; ports: { port: number }[] }[]>("/debug/registryz");
  const reviews = services.find((s) => s.hostname === HOST);
  assert.equal(reviews?.namespace, "shop");
  assert.deepEqual(
    reviews?.ports.map((p) => p.port),
    [9080],
  );
  type Shardz = Record<
    string,
    Record<
      string,
      {
        Shards: Record<
          string,
          {
            Addresses: string[];
            EndpointPort: number;
            ServiceAccount: string;
            SendUnhealthyEndpoints: boolean;
            NodeName: string;
          }[]
        >;
        ServiceAccounts: Record<string, object>;
      }
    >
  >;
  for (const path of ["/debug/endpointShardz", "/debug/endpointz"]) {
    const shardz = await json<Shardz>(path);
    const shop = shardz[HOST]?.shop;
    assert.deepEqual(Object.keys(shop?.Shards ?? {}), ["External/Kubernetes"], path);
    const [endpoint] = shop.Shards["External/Kubernetes"];
    assert.deepEqual(endpoint.Addresses, ["10.0.0.5"]);
    assert.equal(endpoint.EndpointPort, 9080);
    // A ServiceEntry's endpoints, unlike a Kubernetes Service's, are not sent when unhealthy.
    assert.equal(endpoint.SendUnhealthyEndpoints, false);
    assert.equal(endpoint.NodeName, "");
    assert.deepEqual(Object.keys(shop.ServiceAccounts), ["spiffe://cluster.local/ns/shop/sa/reviews"]);
  }
});

test("sidecarz needs a proxyID, answers 404 for an unknown proxy, and shows the proxy's scope", async () => {
  assert.deepEqual(await debugCall("/debug/sidecarz"), {
    status: 400,
    type: "text/plain; charset=utf-8",
    body: "You must provide a proxyID in the query string\n",
  });
  assert.equal((await debugCall("/debug/sidecarz?proxyID=nobody.shop")).status, 404);
  const scope = await json<{
    name: string;
    namespace: string;
    version: string;
    services: { hostname: string }[];
    servicesByHostname: Record<string, unknown>;
    destinationRules: Record<string, { metadata: { name: string }; from: string[] }[]>;
    outboundTrafficPolicy: { mode: string };
  }>("/debug/sidecarz?proxyID=app-1.shop");
  assert.equal(scope.name, "default-sidecar");
  assert.equal(scope.namespace, "shop");
  assert.equal(scope.version, discovery.server.pushContext?.version);
  assert.ok(scope.services.some((s) => s.hostname === HOST));
  assert.ok(HOST in scope.servicesByHostname);
  assert.deepEqual(scope.destinationRules[HOST]?.[0].from, ["shop/reviews"]);
  assert.equal(scope.outboundTrafficPolicy.mode, "ALLOW_ANY");
});

test("resourcesz, instancesz, krtz, mesh, inject", async () => {
  const kinds = await json<{ group: string; version: string; kind: string }[]>("/debug/resourcesz");
  assert.ok(kinds.some((k) => k.group === "networking.istio.io" && k.kind === "ServiceEntry" && k.version === "v1"));
  assert.ok(kinds.some((k) => k.group === "gateway.networking.k8s.io" && k.kind === "HTTPRoute"));
  assert.ok(!kinds.some((k) => k.kind === "Pod"), "Kubernetes' own kinds are not config store schemas");

  const instances =
    await json<Record<string, { service: { hostname: string }; port: { port: number } }[]>>("/debug/instancesz");
  assert.deepEqual(Object.keys(instances).sort(), ["app-1.shop", "app-2.other"]);
  assert.deepEqual(
    instances["app-1.shop"].map((t) => `${t.service.hostname}:${t.port.port}`),
    [`${HOST}:9080`],
  );
  assert.deepEqual(instances["app-2.other"], []);

  const collections = await json<{ name: string; size: number; items?: unknown[] }[]>("/debug/krtz");
  const serviceEntries = collections.find((c) => c.name.includes("ServiceEntry"));
  assert.equal(serviceEntries?.size, 2);
  assert.equal(serviceEntries?.items?.length, 2);

  const meshConfig = await json<{ rootNamespace: string }>("/debug/mesh");
  assert.equal(meshConfig.rootNamespace, "istio-system");
  // No injection templates: 404 with no body, as Istio without a webhook.
  assert.deepEqual(await debugCall("/debug/inject"), { status: 404, type: "text/plain; charset=utf-8", body: "" });
});

test("authorizationz and pushcontext show the policies by namespace; telemetryz all of them, or a proxy's", async () => {
  // Istio's json tags: namespace_to_policies, root_namespace; each policy's annotations null when none.
  type Policies = {
    namespace_to_policies: Record<string, { name: string; namespace: string; annotations: null }[]>;
    root_namespace: string;
  };
  const authz = await json<{ authorization_policies: Policies }>("/debug/authorizationz");
  assert.deepEqual(authz.authorization_policies, {
    namespace_to_policies: {
      shop: [{ name: "allow-all", namespace: "shop", annotations: null, spec: { rules: [{}] } }],
    },
    root_namespace: "istio-system",
  });
  const push = await json<{ AuthorizationPolicies: Policies; NetworkGateways: null }>("/debug/pushcontext");
  assert.deepEqual(push.AuthorizationPolicies, authz.authorization_policies);
  assert.equal(push.NetworkGateways, null);

  const all = await json<{
    telemetries: { namespace_to_telemetries: Record<string, { name: string }[]>; root_namespace: string };
  }>("/debug/telemetryz");
  assert.deepEqual(
    all.telemetries.namespace_to_telemetries["istio-system"].map((t) => t.name),
    ["mesh-default"],
  );
  assert.equal(all.telemetries.root_namespace, "istio-system");
  const forProxy = await json<{ telemetries: { name: string }[] }>("/debug/telemetryz?proxyID=app-2.other");
  assert.deepEqual(
    forProxy.telemetries.map((t) => t.name),
    ["mesh-default"],
  );
  assert.equal((await debugCall("/debug/telemetryz?proxyID=nobody.shop")).status, 404);
  // ratings has no instances in this push.
  assert.deepEqual(await json("/debug/push_status"), {
    pilot_eds_no_instances: { "outbound|9080||ratings.example.com": {} },
  });
});

test("config_dump needs a connected proxy; types gives bare, valid resources; edsz, ndsz and ecdsz are typed dumps", async () => {
  assert.equal((await debugCall("/debug/config_dump")).status, 400);
  assert.equal((await debugCall("/debug/config_dump?proxyID=nobody.shop")).status, 404);
  // Istio's sections, each present whether or not the proxy watches its type; endpoints with include_eds.
  const sections = async (path: string) =>
    (await json<{ configs: { "@type": string }[] }>(path)).configs.map((c) => c["@type"].split(".").at(-1));
  const istioSections = [
    "BootstrapConfigDump",
    "ClustersConfigDump",
    "ListenersConfigDump",
    "ScopedRoutesConfigDump",
    "RoutesConfigDump",
    "SecretsConfigDump",
    "EcdsConfigDump",
  ];
  assert.deepEqual(await sections("/debug/config_dump?proxyID=app-1.shop"), istioSections);
  assert.deepEqual(await sections("/debug/config_dump?proxyID=app-1.shop&include_eds"), [
    ...istioSections.slice(0, 2),
    "EndpointsConfigDump",
    ...istioSections.slice(2),
  ]);
  const full = fromJson(
    admin.ConfigDumpSchema,
    await json<JsonValue>("/debug/config_dump?proxyID=app-1.shop&include_eds"),
    {
      registry: apiRegistry,
    },
  );
  const clusters = unpackAny(full.configs[1], admin.ClustersConfigDumpSchema);
  assert.ok((clusters?.dynamicActiveClusters.length ?? 0) > 0);
  for (const c of clusters?.dynamicActiveClusters ?? []) {
    assert.deepEqual(c.cluster ? anyViolations(c.cluster) : ["no cluster"], []);
  }
  const endpoints = unpackAny(full.configs[2], admin.EndpointsConfigDumpSchema);
  assert.equal(endpoints?.dynamicEndpointConfigs.length, 2);
  for (const [path, typeUrl] of [
    ["/debug/config_dump?proxyID=app-1.shop&types=cds", TypeUrl.Cluster],
    ["/debug/edsz?proxyID=app-1.shop", TypeUrl.Endpoint],
  ]) {
    const raw = fromJson(admin.ConfigDumpSchema, await json<JsonValue>(path), { registry: apiRegistry });
    assert.ok(raw.configs.length > 0, path);
    for (const any of raw.configs) {
      assert.equal(any.typeUrl, typeUrl);
      assert.deepEqual(anyViolations(any), [], path);
    }
  }
  // Neither NDS nor ECDS is watched by this proxy: empty dumps.
  assert.deepEqual(await json("/debug/ndsz?proxyID=app-1.shop"), {});
  assert.deepEqual(await json("/debug/ecdsz?proxyID=app-1.shop"), {});
  assert.equal((await debugCall("/debug/edsz")).status, 400);
});

test("connections lists the clients; cachez lists cached resources, their sizes, and clears", async () => {
  const conns = await json<AdsClients>("/debug/connections");
  assert.equal(conns.totalClients, 2);
  assert.deepEqual(Object.keys(conns.clients?.[0] ?? {}), ["connectionId", "connectedAt", "address"]);

  const cached = await json<Record<string, string[]>>("/debug/cachez");
  assert.ok(cached[TypeUrl.Cluster]?.includes(`outbound|9080||${HOST}`), JSON.stringify(cached));
  assert.ok(cached[TypeUrl.Endpoint]?.includes(`outbound|9080||${HOST}`));
  const sizes = await json<Record<string, string>>("/debug/cachez?sizes=true");
  assert.match(sizes[TypeUrl.Cluster], /^\d+(\.\d)?[kM]?B$/);
  assert.match(sizes.total, /^\d+(\.\d)?[kM]?B$/);
  // Sluice's own: every resource cache's and memo table's entries, hits and misses.
  const stats = await json<XdsCacheStats & { pushMemos: MemoStats[] }>("/debug/cachez?stats=true");
  const clusters = stats.resources.find((r) => r.name === "cds/serviceClusters");
  assert.ok(clusters && clusters.typeUrl === TypeUrl.Cluster && clusters.entries > 0, JSON.stringify(stats));
  assert.ok(clusters.misses > 0 && clusters.hits + clusters.misses >= clusters.entries);
  assert.ok(stats.resources.some((r) => r.name === "eds/assignments" && r.entries > 0));
  const memo = stats.memos.find((m) => m.name === "cds/scopeTraits");
  assert.ok(memo && memo.kind === "weak" && memo.entries > 0 && memo.misses > 0, JSON.stringify(stats.memos));
  assert.ok(Array.isArray(stats.pushMemos));
  assert.deepEqual(await debugCall("/debug/cachez?clear=true"), {
    status: 200,
    type: "text/plain; charset=utf-8",
    body: "Cache cleared\n",
  });
  assert.deepEqual(await json("/debug/cachez"), {});
});

test("profiling: cmdline, a CPU profile, a heap snapshot", async () => {
  const cmdline = await debugCall("/debug/pprof/cmdline");
  assert.equal(cmdline.body, process.argv.join("\0"));
  const profile = await json<{ nodes: unknown[]; startTime: number; endTime: number }>(
    "/debug/pprof/profile?seconds=1",
  );
  assert.ok(profile.nodes.length > 0);
  assert.ok(profile.endTime > profile.startTime);
  const heap = await call(server.httpPort ?? 0, "/debug/pprof/heap", { firstChunkOnly: true });
  assert.equal(heap.status, 200);
  assert.match(heap.body, /^\{"snapshot":/);
});

test("auth: local callers pass; others need a token (401, empty body), and other namespaces get only their proxies' dumps (403)", async () => {
  // Only 127.0.0.1 counts as local here, so a call from 127.0.0.2 stands for a remote caller.
  const guarded = await startAdmin({
    monitoringAddr: "",
    httpAddr: "127.0.0.2:0",
    isLocal: (ip) => ip === "127.0.0.1",
    metricsLocalhostOnly: true,
  });
  try {
    const port = guarded.httpPort ?? 0;
    const from = (localAddress: string, path: string, token?: string) =>
      call(port, path, { host: "127.0.0.2", localAddress, token });
    assert.equal((await from("127.0.0.1", "/debug/configz")).status, 200);
    assert.equal((await from("127.0.0.1", "/metrics")).status, 200);

    assert.deepEqual(await from("127.0.0.2", "/debug/configz"), { status: 401, type: "", body: "" });
    assert.equal((await from("127.0.0.2", "/debug/configz", "forged")).status, 401);
    assert.equal((await from("127.0.0.2", "/debug/configz", "system")).status, 200);
    assert.equal((await from("127.0.0.2", "/metrics", "system")).status, 403, "METRICS_LOCALHOST_ACCESS_ONLY");
    // The index needs no auth; unknown paths are 404 before any.
    assert.equal((await from("127.0.0.2", "/debug")).status, 200);
    assert.equal((await from("127.0.0.2", "/debug/nosuch")).status, 404);

    assert.deepEqual(await from("127.0.0.2", "/debug/configz", "shop"), { status: 403, type: "", body: "" });
    assert.equal((await from("127.0.0.2", "/debug/syncz", "shop")).status, 403);
    assert.equal((await from("127.0.0.2", "/debug/config_dump?proxyID=app-1.shop", "shop")).status, 200);
    assert.equal((await from("127.0.0.2", "/debug/edsz?proxyID=app-1.shop", "shop")).status, 200);
    assert.equal((await from("127.0.0.2", "/debug/ndsz?proxyID=app-1.shop", "shop")).status, 200);
    assert.equal((await from("127.0.0.2", "/debug/config_dump?proxyID=app-2.other", "shop")).status, 404);
    assert.equal((await from("127.0.0.2", "/debug/config_dump?proxyID=app-2.other", "system")).status, 200);
  } finally {
    await guarded.stop();
  }
});

test("the xDS debug generator serves the same functions (one implementation for both transports)", () => {
  const body = new TextDecoder().decode(discovery.debugEndpoints.serve("sidecarz", undefined));
  assert.equal(body, "You must provide a proxyID in the query string\n");
  const syncz = JSON.parse(new TextDecoder().decode(discovery.debugEndpoints.serve("syncz?namespace=shop", undefined)));
  assert.deepEqual(
    (syncz as { proxy: string }[]).map((s) => s.proxy),
    ["app-1.shop"],
  );
});

test("one server without --monitoringAddr; --profile off; injection templates; ENABLE_DEBUG_ON_HTTP off", async () => {
  const single = await startAdmin({ monitoringAddr: "", profiling: false }, new DebugEndpoints(), {
    ...debugSources(),
    injectTemplates: () => ({ sidecar: "containers: []" }),
  });
  const noDebug = await startAdmin({ monitoringAddr: "", debugOnHttp: false });
  try {
    const port = single.httpPort ?? 0;
    assert.equal(single.monitoringPort, undefined);
    for (const path of ["/metrics", "/version", "/ready"]) assert.equal((await call(port, path)).status, 200, path);
    assert.equal((await call(port, "/debug/pprof/cmdline")).status, 404);
    assert.doesNotMatch((await call(port, "/debug")).body, /pprof/);
    const inject = await call(port, "/debug/inject?pretty");
    assert.deepEqual(JSON.parse(inject.body), { sidecar: "containers: []" });
    assert.equal((await call(noDebug.httpPort ?? 0, "/debug/configz")).status, 404);
    assert.equal((await call(noDebug.httpPort ?? 0, "/debug")).status, 404);
  } finally {
    await single.stop();
    await noDebug.stop();
  }
});

test("clusterz lists the config clusters (400 without any, as istiod without Kubernetes); networkz (no gateways) and mcsz are null", async () => {
  assert.deepEqual(await debugCall("/debug/clusterz"), { status: 400, type: "text/plain; charset=utf-8", body: "" });
  const withCluster = await startAdmin({}, new DebugEndpoints(), {
    ...debugSources(),
    clusters: () => [{ id: "Kubernetes", secretName: "", syncStatus: "synced" }],
  });
  try {
    const res = await call(withCluster.httpPort ?? 0, "/debug/clusterz");
    assert.equal(res.type, "application/json");
    assert.deepEqual(JSON.parse(res.body), [{ id: "Kubernetes", secretName: "", syncStatus: "synced" }]);
  } finally {
    await withCluster.stop();
  }
  assert.equal(await json("/debug/networkz"), null);
  assert.equal(await json("/debug/mcsz"), null);
});

test("networkz and pushcontext list the push's network gateways as Istio's NetworkGateway; host names only as unresolved", async () => {
  const meshNetworks = loadMeshNetworks(`
networks:
  network2:
    gateways: [{address: gw.example.com, port: 15443}, {address: 35.2.2.2, port: 15443}]
`);
  const real = discovery.server;
  const withGateways = await startAdmin({ monitoringAddr: "" }, new DebugEndpoints(), {
    ...debugSources(),
    server: {
      syncStatus: () => real.syncStatus(),
      push: (req) => real.push(req),
      disconnect: (id) => real.disconnect(id),
      pushContext: buildPushContext({ configs: [], services: [], mesh, meshNetworks }),
    },
  });
  try {
    const port = withGateways.httpPort ?? 0;
    const gateway = (Addr: string) => ({
      Network: "network2",
      Cluster: "",
      Addr,
      Port: 15443,
      HBONEPort: 0,
      ServiceAccount: { Namespace: "", Name: "" },
    });
    assert.deepEqual(JSON.parse((await call(port, "/debug/networkz")).body), [gateway("35.2.2.2")]);
    const push = JSON.parse((await call(port, "/debug/pushcontext")).body) as Record<string, unknown>;
    assert.deepEqual(push.NetworkGateways, [gateway("35.2.2.2")]);
    assert.deepEqual(push.UnresolvedGateways, [gateway("35.2.2.2"), gateway("gw.example.com")]);
  } finally {
    await withGateways.stop();
  }
});

test("cachez sizes use Istio's ByteCount units", () => {
  assert.deepEqual([0, 999, 1000, 1234, 999_949, 1_500_000, 2_000_000_000].map(byteCount), [
    "0B",
    "999B",
    "1.0kB",
    "1.2kB",
    "999.9kB",
    "1.5MB",
    "2.0GB",
  ]);
});

test("force_disconnect exists only with UNSAFE_ENABLE_ADMIN_ENDPOINTS and ends the proxy's stream", async () => {
  assert.equal((await debugCall("/debug/force_disconnect?proxyID=app-2.other")).status, 404);
  const unsafe = await startAdmin({ monitoringAddr: "" }, new DebugEndpoints(), {
    ...debugSources(),
    unsafeAdminEndpoints: true,
  });
  try {
    const port = unsafe.httpPort ?? 0;
    assert.equal((await call(port, "/debug/force_disconnect")).status, 400);
    assert.equal((await call(port, "/debug/force_disconnect?proxyID=nobody.shop")).status, 404);
    const res = await call(port, "/debug/force_disconnect?proxyID=app-2.other");
    assert.deepEqual([res.status, res.body], [200, "OK"]);
    await waitFor(() => discovery.server.syncStatus().every((c) => c.proxy.id !== "app-2.other"), "app-2 disconnected");
    const end = await clients[1].ended;
    assert.equal(end.code, 0);
  } finally {
    await unsafe.stop();
  }
});

// Last: the objects it adds and removes are full pushes, which start a new push status (the tests
// above read the one of the fixture's pushes).
test("configz lists every stored Istio and Gateway API object (no Kubernetes ones) and the store's problems; pretty indents", async (t) => {
  // A Kubernetes object the registry or SDS reads: not config, and its data stays out of configz.
  const secrets = new MemorySource(store, "kubernetes");
  secrets.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "tls", namespace: "shop" },
    data: { k: "c2VjcmV0" },
  });
  t.after(() => secrets.delete({ kind: "/Secret", namespace: "shop", name: "tls" }));
  // Config read from a cluster carries managedFields, which istiod's configz does not show.
  const managedFields = [{ manager: "kubectl", operation: "Update", apiVersion: "networking.istio.io/v1" }];
  secrets.apply({
    apiVersion: "networking.istio.io/v1",
    kind: "Gateway",
    metadata: { name: "from-cluster", namespace: "shop", managedFields },
    spec: {
      selector: { istio: "ingressgateway" },
      servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
    },
  });
  t.after(() => secrets.delete({ kind: "networking.istio.io/Gateway", namespace: "shop", name: "from-cluster" }));
  const configs =
    await json<{ kind: string; metadata?: { name: string }; where?: string; message?: string }[]>("/debug/configz");
  assert.ok(store.list().some((s) => s.object.kind === "Secret"));
  assert.deepEqual(
    configs.filter((c) => c.kind !== "ConfigProblem").map((c) => `${c.kind}/${c.metadata?.name}`),
    store
      .list()
      .filter((s) => s.object.apiVersion.includes("istio.io/"))
      .map((s) => `${s.object.kind}/${s.object.metadata.name}`),
  );
  const gateway = configs.find((c) => c.metadata?.name === "from-cluster") as { metadata: object } | undefined;
  assert.deepEqual(gateway?.metadata, { name: "from-cluster", namespace: "shop" });
  const problems = configs.filter((c) => c.kind === "ConfigProblem");
  assert.equal(problems.length, 1);
  assert.match(problems[0].where ?? "", /VirtualService/);
  assert.match(problems[0].message ?? "", /http, tcp or tls must be provided/);
  const pretty = await debugCall("/debug/configz?pretty");
  assert.match(pretty.body, /^\[\n {4}\{\n {8}"apiVersion"/);
});
