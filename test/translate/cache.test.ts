// Proxies that read the same inputs share the generated objects (the encoder encodes each object once),
// in one push and in the pushes after it: a push rebuilds only what its change reached, and a proxy
// that sees things differently gets its own. "proxy classes": within a push, proxies whose clusters or
// load assignments read the same proxy fields share one CDS and EDS response (the same resources
// array), and whatever the serving order, each proxy gets what a build for it alone, with every cache
// empty, gives.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadState, type ProxySpec, translateProxy } from "../../src/cli/translate-state.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG, type MeshConfig } from "../../src/config/index.ts";
import { buildClusters, buildLoadAssignment, buildRouteConfiguration, XdsCache } from "../../src/configgen/index.ts";
import { type MeshPush, type ProxyNode, pushRequest } from "../../src/model/index.ts";
import { storePush } from "../../src/model/store-push.ts";
import { MemorySource } from "../../src/sources/index.ts";
import type { GenerateResult, WatchedResource } from "../../src/xds/generator.ts";
import { cdsGenerator } from "../../src/xds/generators/cds.ts";
import { edsGenerator } from "../../src/xds/generators/eds.ts";
import { TypeUrl } from "../../src/xds/index.ts";
import { sharedNameSet } from "../../src/xds/server/name-sets.ts";

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

describe("proxy classes", () => {
  // Through the CDS and EDS generators, which share an xDS cache each test makes for itself (not the
  // module's). PRODUCTPAGE here is the host, not the cluster name it is above.
  const REVIEWS = "reviews.bookinfo.svc.cluster.local";
  const PRODUCTPAGE = "productpage.bookinfo.svc.cluster.local";
  const DB = "outbound|5432||db.example.com";
  const EDS_NAMES = [
    `outbound|9080||${REVIEWS}`,
    `outbound|9080|v1|${REVIEWS}`,
    `outbound|9080|v2|${REVIEWS}`,
    `outbound|9080||${PRODUCTPAGE}`,
  ];

  const namespaced = (
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
    spec: object,
  ): ConfigObject => ({
    apiVersion,
    kind,
    metadata: { name, namespace },
    spec,
  });
  const NET = "networking.istio.io/v1";

  /** Bookinfo plus `objects`, with generators over its registry and a way to build the next push. */
  function bookinfoWith(objects: ConfigObject[]) {
    const loaded = loadState([MESH_DIR], mesh, "cluster.local");
    assert.ok(loaded.state, loaded.problems?.join("\n"));
    const { store, registry } = loaded.state;
    const source = new MemorySource(store, "file");
    for (const o of objects) assert.deepEqual(source.apply(o).errors, []);
    const next = (previous: MeshPush) => storePush(store, registry, mesh, "cluster.local", previous);
    const push = next(loaded.state.push);
    const cache = new XdsCache();
    const cds = cdsGenerator(registry, cache);
    const eds = edsGenerator(registry, cache);
    // As the server's watches hold them: one set for the same names in the same order.
    const watched = (typeUrl: string, names: string[]): WatchedResource => ({
      typeUrl,
      resourceNames: sharedNameSet(new Set(names)),
      wildcard: names.length === 0,
    });
    const defined = (r: GenerateResult | undefined) => r ?? assert.fail("no response");
    /** The proxy's EDS response to a request for `names`. */
    const assignments = (at: MeshPush, proxy: ProxyNode, names = EDS_NAMES) =>
      defined(eds.generate(proxy, watched(TypeUrl.Endpoint, names), pushRequest({ full: true, push: at }))).resources;
    const generate = (at: MeshPush, proxy: ProxyNode) => ({
      cds: defined(cds.generate(proxy, watched(TypeUrl.Cluster, []), pushRequest({ full: true, push: at }))).resources,
      eds: assignments(at, proxy),
    });
    return { push, next, generate, assignments, cache };
  }

  const proxy = (spec: Partial<ProxySpec> & Pick<ProxySpec, "id" | "ip">, change?: (p: ProxyNode) => ProxyNode) => {
    const node = translateProxy(
      { type: "sidecar", namespace: "bookinfo", labels: { app: "productpage", version: "v1" }, ...spec },
      mesh,
      "cluster.local",
    );
    return change ? change(node) : node;
  };

  // A DestinationRule for productpage's workloads only (connection pool, subsets), failoverPriority on
  // productpage's endpoints, a DNS service with endpoints in two zones, and a namespace with a Sidecar.
  const CONFIG: ConfigObject[] = [
    namespaced(NET, "DestinationRule", "bookinfo", "reviews-from-productpage", {
      host: REVIEWS,
      workloadSelector: { matchLabels: { app: "productpage" } },
      trafficPolicy: { connectionPool: { tcp: { maxConnections: 3 } } },
      subsets: [{ name: "v1", labels: { version: "v1" } }],
    }),
    namespaced(NET, "DestinationRule", "bookinfo", "productpage", {
      host: PRODUCTPAGE,
      trafficPolicy: {
        outlierDetection: { consecutive5xxErrors: 5 },
        loadBalancer: { simple: "ROUND_ROBIN", localityLbSetting: { failoverPriority: ["version"] } },
      },
    }),
    namespaced(NET, "WorkloadEntry", "bookinfo", "productpage-v2", {
      address: "10.9.0.2",
      labels: { app: "productpage", version: "v2" },
      serviceAccount: "bookinfo-productpage",
      locality: "local/zone-b",
    }),
    namespaced(NET, "ServiceEntry", "bookinfo", "db", {
      hosts: ["db.example.com"],
      location: "MESH_EXTERNAL",
      resolution: "DNS",
      ports: [{ number: 5432, name: "tcp", protocol: "TCP" }],
      endpoints: [
        { address: "db-a.example.com", locality: "local/zone-a" },
        { address: "db-b.example.com", locality: "local/zone-b" },
      ],
    }),
    // Outlier detection turns locality failover on: inline endpoints get priorities by the proxy's locality.
    namespaced(NET, "DestinationRule", "bookinfo", "db", {
      host: "db.example.com",
      trafficPolicy: { outlierDetection: { consecutive5xxErrors: 5 } },
    }),
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } },
    namespaced(NET, "Sidecar", "shop", "default", {
      egress: [{ hosts: ["bookinfo/reviews.bookinfo.svc.cluster.local"] }],
    }),
  ];

  test("each proxy class gets what a build for it alone gives, in any serving order", () => {
    const { push, next, generate, cache } = bookinfoWith(CONFIG);
    const zone = (subZone: string) => (p: ProxyNode) => ({
      ...p,
      locality: { region: "local", zone: subZone, subZone: "" },
    });
    const proxies: Record<string, ProxyNode> = {
      base: proxy({ id: "productpage-1.bookinfo", ip: "10.0.0.1" }),
      // The selector DestinationRule applies to productpage's workloads only.
      otherApp: proxy({ id: "ratings-1.bookinfo", ip: "10.0.0.2", labels: { app: "ratings", version: "v1" } }),
      // failoverPriority compares the version label.
      otherVersion: proxy({
        id: "productpage-2.bookinfo",
        ip: "10.0.0.3",
        labels: { app: "productpage", version: "v2" },
      }),
      noLabels: proxy({ id: "bare-1.bookinfo", ip: "10.0.0.4", labels: {} }),
      // Locality orders endpoints by priority, and picks a DNS cluster's inline endpoints.
      zoneB: proxy(
        { id: "ratings-2.bookinfo", ip: "10.0.0.5", labels: { app: "ratings", version: "v1" } },
        zone("zone-b"),
      ),
      network2: proxy({ id: "productpage-4.bookinfo", ip: "10.0.0.6", network: "network2" }),
      ipv6: proxy({ id: "productpage-5.bookinfo", ip: "fd00::6" }),
      // Another namespace, with a Sidecar scoping its egress to reviews.
      shop: proxy({ id: "cart-1.shop", ip: "10.0.0.7", namespace: "shop", labels: { app: "cart" } }),
      router: proxy({ id: "gw-1.bookinfo", ip: "10.0.0.8", type: "router", labels: { istio: "ingressgateway" } }),
    };
    const names = Object.keys(proxies);
    for (const order of [names, [...names].reverse()]) {
      const at = next(push);
      const served = Object.fromEntries(order.map((name) => [name, generate(at, proxies[name])]));
      for (const name of names) {
        cache.clear();
        const alone = generate(next(at), proxies[name]);
        assert.deepEqual(served[name].cds, alone.cds, `${name} CDS`);
        assert.deepEqual(served[name].eds, alone.eds, `${name} EDS`);
      }
      // Each difference reaches the config that reads it.
      const { base, otherApp, otherVersion, noLabels, zoneB, ipv6, shop } = served;
      const cluster = (r: typeof base, n: string) => r.cds.find((c) => c.name === n)?.resource;
      const assignment = (r: typeof base, n: string) => r.eds.find((c) => c.name === n)?.resource;
      assert.notDeepEqual(cluster(base, EDS_NAMES[0]), cluster(otherApp, EDS_NAMES[0]), "selector rule");
      assert.notDeepEqual(assignment(base, EDS_NAMES[3]), assignment(otherVersion, EDS_NAMES[3]), "failoverPriority");
      assert.notDeepEqual(assignment(base, EDS_NAMES[3]), assignment(noLabels, EDS_NAMES[3]), "no labels");
      assert.notDeepEqual(assignment(otherApp, EDS_NAMES[0]), assignment(zoneB, EDS_NAMES[0]), "locality");
      assert.notDeepEqual(cluster(otherApp, DB), cluster(zoneB, DB), "locality of inline endpoints");
      assert.notDeepEqual(cluster(base, DB), cluster(ipv6, DB), "IP family");
      assert.equal(cluster(shop, `outbound|9080||${PRODUCTPAGE}`), undefined, "the Sidecar scopes egress to reviews");
    }
  });

  test("proxies differing only in pod IP and labels nothing reads share one response per type", () => {
    const { push, generate, assignments } = bookinfoWith(CONFIG);
    const a = generate(push, proxy({ id: "productpage-1.bookinfo", ip: "10.0.0.1" }));
    const b = generate(
      push,
      proxy({ id: "productpage-2.bookinfo", ip: "10.0.0.2", labels: { app: "productpage", version: "v1", pod: "b" } }),
    );
    assert.ok(a.cds.length > 0 && a.eds.length === EDS_NAMES.length);
    assert.equal(a.cds, b.cds);
    assert.equal(a.eds, b.eds);
    // A label the selector reads: the other proxy gets its own clusters and assignments.
    const other = generate(
      push,
      proxy({ id: "ratings-1.bookinfo", ip: "10.0.0.3", labels: { app: "ratings", version: "v1" } }),
    );
    assert.notEqual(other.cds, a.cds);
    assert.notEqual(other.eds, a.eds);
    // The same names in another order: the same assignments, in that order.
    const reordered = assignments(
      push,
      proxy({ id: "productpage-3.bookinfo", ip: "10.0.0.4" }),
      [...EDS_NAMES].reverse(),
    );
    assert.deepEqual(
      reordered.map((r) => r.name),
      [...EDS_NAMES].reverse(),
    );
    for (const r of reordered) assert.equal(r.resource, a.eds.find((x) => x.name === r.name)?.resource);
  });
});
