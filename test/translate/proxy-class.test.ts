// Within a push, proxies whose clusters or load assignments read the same proxy fields share one
// response (the same resources array): a proxy differing in anything its config reads gets its own,
// and whatever the serving order, each proxy gets what a build for it alone, with every cache empty, gives.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadState, type ProxySpec, translateProxy } from "../../src/cli/translate-state.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { XdsCache } from "../../src/configgen/index.ts";
import { type MeshPush, type ProxyNode, pushRequest } from "../../src/model/index.ts";
import { storePush } from "../../src/model/store-push.ts";
import { MemorySource } from "../../src/sources/index.ts";
import type { GenerateResult, WatchedResource } from "../../src/xds/generator.ts";
import { cdsGenerator } from "../../src/xds/generators/cds.ts";
import { edsGenerator } from "../../src/xds/generators/eds.ts";
import { TypeUrl } from "../../src/xds/index.ts";

const MESH_DIR = fileURLToPath(new URL("../../examples/mesh", import.meta.url));
const mesh = DEFAULT_MESH_CONFIG;
const REVIEWS = "reviews.bookinfo.svc.cluster.local";
const PRODUCTPAGE = "productpage.bookinfo.svc.cluster.local";
const DB = "outbound|5432||db.example.com";
const EDS_NAMES = [
  `outbound|9080||${REVIEWS}`,
  `outbound|9080|v1|${REVIEWS}`,
  `outbound|9080|v2|${REVIEWS}`,
  `outbound|9080||${PRODUCTPAGE}`,
];

const object = (apiVersion: string, kind: string, namespace: string, name: string, spec: object): ConfigObject => ({
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
  const watched = (typeUrl: string, names: string[]): WatchedResource => ({
    typeUrl,
    resourceNames: new Set(names),
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
  object(NET, "DestinationRule", "bookinfo", "reviews-from-productpage", {
    host: REVIEWS,
    workloadSelector: { matchLabels: { app: "productpage" } },
    trafficPolicy: { connectionPool: { tcp: { maxConnections: 3 } } },
    subsets: [{ name: "v1", labels: { version: "v1" } }],
  }),
  object(NET, "DestinationRule", "bookinfo", "productpage", {
    host: PRODUCTPAGE,
    trafficPolicy: {
      outlierDetection: { consecutive5xxErrors: 5 },
      loadBalancer: { simple: "ROUND_ROBIN", localityLbSetting: { failoverPriority: ["version"] } },
    },
  }),
  object(NET, "WorkloadEntry", "bookinfo", "productpage-v2", {
    address: "10.9.0.2",
    labels: { app: "productpage", version: "v2" },
    serviceAccount: "bookinfo-productpage",
    locality: "local/zone-b",
  }),
  object(NET, "ServiceEntry", "bookinfo", "db", {
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
  object(NET, "DestinationRule", "bookinfo", "db", {
    host: "db.example.com",
    trafficPolicy: { outlierDetection: { consecutive5xxErrors: 5 } },
  }),
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } },
  object(NET, "Sidecar", "shop", "default", { egress: [{ hosts: ["bookinfo/reviews.bookinfo.svc.cluster.local"] }] }),
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
