// Proxies that read the same inputs share the generated objects (the encoder encodes each object once),
// in one push and in the pushes after it: a push rebuilds only what its change reached, and a proxy
// that sees things differently gets its own.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadState, translateProxy } from "../../src/cli/translate-state.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG, type MeshConfig } from "../../src/config/index.ts";
import { buildClusters, buildLoadAssignment, buildRouteConfiguration, XdsCache } from "../../src/configgen/index.ts";
import type { MeshPush } from "../../src/model/index.ts";
import { storePush } from "../../src/model/store-push.ts";
import { MemorySource } from "../../src/sources/index.ts";

/** The xDS cache these tests build with, as the discovery server's generators share one. */
const cache = new XdsCache();

const MESH_DIR = fileURLToPath(new URL("../../examples/mesh", import.meta.url));
const REVIEWS_V1 = "outbound|9080|v1|reviews.bookinfo.svc.cluster.local";
const PRODUCTPAGE = "outbound|9080||productpage.bookinfo.svc.cluster.local";
const mesh = DEFAULT_MESH_CONFIG;

function bookinfo() {
  const loaded = loadState([MESH_DIR], mesh, "cluster.local");
  assert.ok(loaded.state, loaded.problems?.join("\n"));
  const { store, registry, push } = loaded.state;
  const source = new MemorySource(store, "file");
  const proxy = (id: string, ip: string, labels: Record<string, string>) =>
    translateProxy({ type: "sidecar", ip, namespace: "bookinfo", labels, id }, mesh, "cluster.local");
  const cluster = (at: MeshPush, p: ReturnType<typeof proxy>, name: string) =>
    buildClusters(at, p, registry, cache).find((c) => c.name === name);
  const assignment = (at: MeshPush, p: ReturnType<typeof proxy>, name: string) =>
    buildLoadAssignment(at, p, registry, name, cache);
  /** Applies `objects` and builds the next push over the store, as the push pipeline does. */
  const next = (previous: MeshPush, objects: ConfigObject[] = [], meshConfig: MeshConfig = mesh) => {
    for (const object of objects) assert.deepEqual(source.apply(object).errors, []);
    return storePush(store, registry, meshConfig, "cluster.local", previous);
  };
  return { push, proxy, cluster, assignment, next };
}

const object = (apiVersion: string, kind: string, name: string, spec: object): ConfigObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace: "bookinfo" },
  spec,
});

const reviewsRoute = (timeout: string, sourceLabels?: Record<string, string>) =>
  object("networking.istio.io/v1", "VirtualService", "reviews", {
    hosts: ["reviews.bookinfo.svc.cluster.local"],
    http: [
      ...(sourceLabels
        ? [{ match: [{ sourceLabels }], route: [{ destination: { host: "reviews.bookinfo.svc.cluster.local" } }] }]
        : []),
      { route: [{ destination: { host: "reviews.bookinfo.svc.cluster.local", subset: "v1" } }], timeout },
    ],
  });

test("clusters, load assignments and routes are shared by proxies that see them alike", () => {
  const { push, proxy, cluster, assignment, next } = bookinfo();
  const a = proxy("productpage-1.bookinfo", "10.0.0.1", { app: "productpage" });
  const b = proxy("productpage-2.bookinfo", "10.0.0.2", { app: "productpage" });
  const other = proxy("ratings-1.bookinfo", "10.0.0.3", { app: "ratings" });

  assert.ok(cluster(push, a, REVIEWS_V1));
  assert.equal(cluster(push, a, REVIEWS_V1), cluster(push, b, REVIEWS_V1));
  assert.equal(assignment(push, a, REVIEWS_V1), assignment(push, b, REVIEWS_V1));
  assert.equal(buildRouteConfiguration(push, a, "9080", cache), buildRouteConfiguration(push, b, "9080", cache));
  // No route reads the app label: other workloads of the namespace share the routes and clusters.
  assert.equal(buildRouteConfiguration(push, a, "9080", cache), buildRouteConfiguration(push, other, "9080", cache));
  assert.equal(cluster(push, a, REVIEWS_V1), cluster(push, other, REVIEWS_V1));
  // Another zone orders endpoints by other priorities: its own assignments.
  const zoneB = { ...b, locality: { region: "local", zone: "zone-b", subZone: "" } };
  assert.notEqual(assignment(push, zoneB, REVIEWS_V1), assignment(push, a, REVIEWS_V1));

  // Once a VirtualService matches sourceLabels on app, workloads with other apps get their own routes.
  const labelled = next(push, [reviewsRoute("5s", { app: "ratings" })]);
  assert.notEqual(
    buildRouteConfiguration(labelled, a, "9080", cache),
    buildRouteConfiguration(labelled, other, "9080", cache),
  );
  assert.equal(
    buildRouteConfiguration(labelled, a, "9080", cache),
    buildRouteConfiguration(labelled, b, "9080", cache),
  );
});

test("a push reuses every object its change did not reach, and rebuilds the ones it did", () => {
  const { push, proxy, cluster, assignment, next } = bookinfo();
  const a = proxy("productpage-1.bookinfo", "10.0.0.1", { app: "productpage" });
  const built = (at: MeshPush) => ({
    reviewsCluster: cluster(at, a, REVIEWS_V1),
    productpageCluster: cluster(at, a, PRODUCTPAGE),
    reviewsAssignment: assignment(at, a, REVIEWS_V1),
    productpageAssignment: assignment(at, a, PRODUCTPAGE),
    route: buildRouteConfiguration(at, a, "9080", cache),
  });
  const first = built(push);
  assert.ok(first.reviewsCluster && first.productpageCluster && first.route);

  const unchanged = next(push);
  assert.notEqual(unchanged, push);
  const same = built(unchanged);
  for (const [name, value] of Object.entries(first)) assert.equal(same[name as keyof typeof same], value, name);

  // A VirtualService change: new routes, the same clusters and assignments.
  const routed = next(unchanged, [reviewsRoute("7s")]);
  const afterRoute = built(routed);
  assert.notEqual(afterRoute.route, first.route);
  assert.equal(afterRoute.reviewsCluster, first.reviewsCluster);
  assert.equal(afterRoute.productpageCluster, first.productpageCluster);
  assert.equal(afterRoute.reviewsAssignment, first.reviewsAssignment);
  assert.equal(afterRoute.productpageAssignment, first.productpageAssignment);

  // A DestinationRule change: the reviews clusters and assignments, not productpage's.
  const rule = object("networking.istio.io/v1", "DestinationRule", "reviews", {
    host: "reviews.bookinfo.svc.cluster.local",
    trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" }, connectionPool: { tcp: { maxConnections: 7 } } },
    subsets: [
      { name: "v1", labels: { version: "v1" } },
      { name: "v2", labels: { version: "v2" } },
    ],
  });
  const ruled = next(routed, [rule]);
  const afterRule = built(ruled);
  assert.notEqual(afterRule.reviewsCluster, first.reviewsCluster);
  assert.equal(afterRule.reviewsCluster?.circuitBreakers?.thresholds[0]?.maxConnections, 7);
  assert.notEqual(afterRule.reviewsAssignment, first.reviewsAssignment);
  assert.equal(afterRule.productpageCluster, first.productpageCluster);
  assert.equal(afterRule.productpageAssignment, first.productpageAssignment);

  // An endpoint change: productpage's assignment, not reviews'.
  const workload = object("networking.istio.io/v1", "WorkloadEntry", "productpage-v2", {
    address: "10.9.0.2",
    labels: { app: "productpage", version: "v2" },
    serviceAccount: "bookinfo-productpage",
  });
  const moved = next(ruled, [workload]);
  const afterEndpoint = built(moved);
  assert.notEqual(afterEndpoint.productpageAssignment, afterRule.productpageAssignment);
  assert.ok(
    afterEndpoint.productpageAssignment.endpoints
      .flatMap((l) => l.lbEndpoints)
      .some((e) => JSON.stringify(e).includes("10.9.0.2")),
  );
  assert.equal(afterEndpoint.reviewsAssignment, afterRule.reviewsAssignment);
  assert.equal(afterEndpoint.reviewsCluster, afterRule.reviewsCluster);
});

test("a new mesh config rebuilds everything; clearing the caches rebuilds too", () => {
  const { push, proxy, cluster, assignment, next } = bookinfo();
  const a = proxy("productpage-1.bookinfo", "10.0.0.1", { app: "productpage" });
  const meshChanged = next(push, [], { ...mesh });
  assert.notEqual(cluster(meshChanged, a, PRODUCTPAGE), cluster(push, a, PRODUCTPAGE));
  assert.notEqual(assignment(meshChanged, a, PRODUCTPAGE), assignment(push, a, PRODUCTPAGE));
  assert.notEqual(
    buildRouteConfiguration(meshChanged, a, "9080", cache),
    buildRouteConfiguration(push, a, "9080", cache),
  );

  const before = cluster(meshChanged, a, PRODUCTPAGE);
  cache.clear();
  const after = next(meshChanged);
  assert.notEqual(cluster(after, a, PRODUCTPAGE), before);
  assert.deepEqual(cluster(after, a, PRODUCTPAGE), before);
});

test("a push reusing an object reports what building it reported", () => {
  const { push, proxy, assignment, next } = bookinfo();
  const a = proxy("productpage-1.bookinfo", "10.0.0.1", { app: "productpage" });
  const details = object("networking.istio.io/v1", "ServiceEntry", "details", {
    hosts: ["details.bookinfo.svc.cluster.local"],
    location: "MESH_INTERNAL",
    resolution: "STATIC",
    ports: [{ number: 9080, name: "http", protocol: "HTTP" }],
    workloadSelector: { labels: { app: "details" } },
  });
  const withDetails = next(push, [details]);
  const name = "outbound|9080||details.bookinfo.svc.cluster.local";
  const empty = assignment(withDetails, a, name);
  assert.equal(withDetails.status.count("pilot_eds_no_instances"), 1);
  const later = next(withDetails);
  assert.equal(assignment(later, a, name), empty);
  assert.equal(later.status.count("pilot_eds_no_instances"), 1);
});

test("failoverPriority labels split load assignments by the proxy labels they name, and only by those", () => {
  const { push, proxy, assignment, cluster, next } = bookinfo();
  const failover = next(push, [
    object("networking.istio.io/v1", "DestinationRule", "reviews", {
      host: "reviews.bookinfo.svc.cluster.local",
      trafficPolicy: {
        outlierDetection: { consecutive5xxErrors: 5 },
        loadBalancer: { simple: "ROUND_ROBIN", localityLbSetting: { failoverPriority: ["version"] } },
      },
      subsets: [{ name: "v1", labels: { version: "v1" } }],
    }),
  ]);
  const v1 = proxy("productpage-1.bookinfo", "10.0.0.1", { app: "productpage", version: "v1" });
  const v2 = proxy("productpage-2.bookinfo", "10.0.0.2", { app: "productpage", version: "v2" });
  const otherApp = proxy("ratings-1.bookinfo", "10.0.0.3", { app: "ratings", version: "v1" });
  const name = "outbound|9080||reviews.bookinfo.svc.cluster.local";
  assert.notEqual(assignment(failover, v1, name), assignment(failover, v2, name));
  assert.equal(assignment(failover, v1, name), assignment(failover, otherApp, name));
  // Special clusters are the same for every sidecar.
  assert.equal(cluster(failover, v1, "BlackHoleCluster"), cluster(failover, otherApp, "BlackHoleCluster"));
  assert.equal(cluster(failover, v1, "InboundPassthroughCluster"), cluster(failover, v2, "InboundPassthroughCluster"));
});

test("PILOT_ENABLE_XDS_CACHE=false: each push builds its own resources, the same as the cached ones, and caches none", () => {
  const loaded = loadState([MESH_DIR], mesh, "cluster.local");
  assert.ok(loaded.state, loaded.problems?.join("\n"));
  const { store, registry } = loaded.state;
  const proxy = translateProxy(
    { type: "sidecar", ip: "10.0.0.1", namespace: "bookinfo", labels: { app: "productpage" }, id: "pp.bookinfo" },
    mesh,
    "cluster.local",
  );
  const clusterIn = (push: MeshPush) => buildClusters(push, proxy, registry, cache).find((c) => c.name === PRODUCTPAGE);
  cache.clear();
  const uncached = (previous?: MeshPush) =>
    storePush(store, registry, mesh, "cluster.local", previous, { xdsCache: false });
  const first = uncached();
  const second = uncached(first);
  const a = clusterIn(first);
  assert.ok(a);
  assert.notEqual(clusterIn(second), a);
  assert.deepEqual(clusterIn(second), a);
  assert.equal(cache.entries().length, 0);
  const cached = storePush(store, registry, mesh, "cluster.local", second);
  assert.deepEqual(clusterIn(cached), a);
  assert.ok(cache.entries().length > 0);
  assert.equal(clusterIn(storePush(store, registry, mesh, "cluster.local", cached)), clusterIn(cached));
});
