// VHDS (SLUICE_ENABLE_VHDS) end to end over sluiced's discovery on a store, with raw ADS clients: a
// delta sidecar's port route carries `vhds` and only the catch-all, each service's virtual host is a
// VirtualHost resource named `<route>/<virtual host>`, a VirtualService change sends only its virtual
// host, a deleted service's virtual host is removed; SotW streams and the flag off are unchanged.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type discovery, route, unpackAny } from "../../src/api/index.ts";
import { type ConfigObject, objectKeyOf } from "../../src/config/index.ts";
import { ConfigStore, MemorySource } from "../../src/sources/index.ts";
import { type Discovery, TypeUrl } from "../../src/xds/index.ts";
import { DeltaClient, names, SotwClient, sidecarNode } from "../support/ads-client.ts";
import { assertValidResources } from "../support/pgv.ts";
import { startStoreDiscovery } from "../support/store-discovery.ts";

const REVIEWS = "reviews.shop.svc.cluster.local";
const RATINGS = "ratings.shop.svc.cluster.local";
const REVIEWS_VHOST = `80/${REVIEWS}:80`;
const RATINGS_VHOST = `80/${RATINGS}:80`;

function service(name: string, clusterIP: string): ConfigObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "shop" },
    spec: { clusterIP, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
  };
}

function reviewsVirtualService(prefix: string): ConfigObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "reviews", namespace: "shop" },
    spec: {
      hosts: ["reviews"],
      http: [{ match: [{ uri: { prefix } }], route: [{ destination: { host: "reviews" } }] }],
    },
  };
}

interface Mesh {
  discovery: Discovery;
  source: MemorySource;
  address: string;
}

async function startMesh(vhds: boolean): Promise<Mesh> {
  const store = new ConfigStore();
  const source = new MemorySource(store);
  source.apply(service("reviews", "10.96.0.10"));
  source.apply(service("ratings", "10.96.0.11"));
  source.apply(reviewsVirtualService("/v1"));
  const discovery = await startStoreDiscovery(store, { features: { vhds } });
  return { discovery, source, address: `127.0.0.1:${discovery.ports.grpcPort}` };
}

let on: Mesh;
let off: Mesh;
let sidecars = 0;

before(async () => {
  on = await startMesh(true);
  off = await startMesh(false);
});

after(async () => {
  await on.discovery.stop(0);
  await off.discovery.stop(0);
});

const node = () => sidecarNode(`app-${++sidecars}`, "shop");

/** Asserts every resource of a delta response is within Envoy's constraints. */
function assertValidDelta(res: discovery.DeltaDiscoveryResponse): void {
  assertValidResources({ resources: res.resources.map((r) => r.resource).filter((any) => any !== undefined) });
}

function routeConfiguration(res: discovery.DeltaDiscoveryResponse): route.RouteConfiguration {
  const any = res.resources[0]?.resource;
  assert.ok(any, "a resource");
  const config = unpackAny(any, route.RouteConfigurationSchema);
  assert.ok(config, "a RouteConfiguration");
  return config;
}

function virtualHosts(res: discovery.DeltaDiscoveryResponse): { resourceName: string; vhost: route.VirtualHost }[] {
  return res.resources.map((r) => {
    assert.ok(r.resource, r.name);
    const vhost = unpackAny(r.resource, route.VirtualHostSchema);
    assert.ok(vhost, r.name);
    return { resourceName: r.name, vhost };
  });
}

/** The route prefixes of a virtual host, in order. */
const prefixes = (vhost: route.VirtualHost) =>
  vhost.routes.map((r) => (r.match?.pathSpecifier.case === "prefix" ? r.match.pathSpecifier.value : ""));

/** A delta sidecar holding RDS `80` and its virtual hosts, every response ACKed. */
async function syncedDeltaSidecar(address: string) {
  const client = DeltaClient.connect(address);
  client.request({ node: node(), typeUrl: TypeUrl.Route, resourceNamesSubscribe: ["80"] });
  const rds = await client.next();
  client.ack(rds);
  client.request({ typeUrl: TypeUrl.VirtualHost, resourceNamesSubscribe: ["80"] });
  const vhds = await client.next();
  client.ack(vhds);
  return { client, rds, vhds };
}

test("flag on, delta sidecar: RDS carries vhds over ADS and only the catch-all; each service's virtual host is a VirtualHost named <route>/<virtual host>", async () => {
  const { client, rds, vhds } = await syncedDeltaSidecar(on.address);
  try {
    assert.equal(rds.typeUrl, TypeUrl.Route);
    assertValidDelta(rds);
    const config = routeConfiguration(rds);
    assert.equal(config.name, "80");
    assert.equal(config.vhds?.configSource?.configSourceSpecifier.case, "ads");
    assert.deepEqual(
      config.virtualHosts.map((v) => [v.name, v.domains]),
      [["allow_any", ["*"]]],
    );

    assert.equal(vhds.typeUrl, TypeUrl.VirtualHost);
    assertValidDelta(vhds);
    const hosts = virtualHosts(vhds);
    assert.deepEqual(names(vhds), [RATINGS_VHOST, REVIEWS_VHOST]);
    // Envoy keys VHDS virtual hosts by VirtualHost.name and removes them by resource name.
    for (const { resourceName, vhost } of hosts) assert.equal(vhost.name, resourceName);
    const reviews = hosts.find((h) => h.resourceName === REVIEWS_VHOST)?.vhost;
    assert.ok(reviews);
    assert.ok(reviews.domains.includes(REVIEWS), "the reviews virtual host answers its host name");
    assert.deepEqual(prefixes(reviews), ["/v1"]);
    // The namespace itself is no resource: its removal completes Envoy's initial fetch when it is empty.
    assert.deepEqual(vhds.removedResources, ["80"]);
  } finally {
    client.close();
  }
});

/** The next response: a VHDS one (so no RDS came first: one stream pushes RDS before VHDS), ACKed. */
async function nextVirtualHosts(client: DeltaClient): Promise<discovery.DeltaDiscoveryResponse> {
  const res = await client.next();
  assert.equal(res.typeUrl, TypeUrl.VirtualHost);
  assertValidDelta(res);
  client.ack(res);
  return res;
}

// The tests below change the mesh and change it back before closing, so each starts from the same mesh.

test("flag on: a VirtualService change sends only the changed VirtualHost, and no RDS", async () => {
  const { client } = await syncedDeltaSidecar(on.address);
  try {
    on.source.apply(reviewsVirtualService("/v2"));
    const update = await nextVirtualHosts(client);
    assert.deepEqual(names(update), [REVIEWS_VHOST]);
    assert.deepEqual(update.removedResources, []);
    const [changed] = virtualHosts(update);
    assert.ok(changed);
    assert.equal(changed.vhost.name, REVIEWS_VHOST);
    assert.deepEqual(prefixes(changed.vhost), ["/v2"]);

    on.source.apply(reviewsVirtualService("/v1"));
    const back = await nextVirtualHosts(client);
    assert.deepEqual(names(back), [REVIEWS_VHOST]);
    const [restored] = virtualHosts(back);
    assert.ok(restored);
    assert.deepEqual(prefixes(restored.vhost), ["/v1"]);
  } finally {
    client.close();
  }
});

test("flag on: a deleted service's VirtualHost is removed, a new one added, and RDS is not re-sent", async () => {
  const { client } = await syncedDeltaSidecar(on.address);
  try {
    on.source.delete(objectKeyOf(service("ratings", "10.96.0.11")));
    const removal = await nextVirtualHosts(client);
    assert.deepEqual(names(removal), []);
    assert.deepEqual(removal.removedResources, [RATINGS_VHOST]);

    on.source.apply(service("ratings", "10.96.0.11"));
    const addition = await nextVirtualHosts(client);
    assert.deepEqual(names(addition), [RATINGS_VHOST]);
    assert.deepEqual(addition.removedResources, []);
  } finally {
    client.close();
  }
});

test("flag on: a reconnect keeps what the proxy holds; unsubscribing the route forgets its virtual hosts", async () => {
  const first = await syncedDeltaSidecar(on.address);
  first.client.close();
  const held = Object.fromEntries(first.vhds.resources.map((r) => [r.name, r.version]));
  const client = DeltaClient.connect(on.address);
  try {
    client.request({
      node: node(),
      typeUrl: TypeUrl.VirtualHost,
      resourceNamesSubscribe: ["80"],
      initialResourceVersions: { ...held, [RATINGS_VHOST]: "stale", "80/gone.shop.svc.cluster.local:80": "1" },
    });
    const reconnect = await client.next();
    assert.deepEqual(names(reconnect), [RATINGS_VHOST]);
    assert.deepEqual(reconnect.removedResources, ["80", "80/gone.shop.svc.cluster.local:80"]);
    client.ack(reconnect);

    client.request({ typeUrl: TypeUrl.VirtualHost, resourceNamesUnsubscribe: ["80"] });
    client.request({ typeUrl: TypeUrl.VirtualHost, resourceNamesSubscribe: ["80"] });
    const again = await client.next();
    assert.deepEqual(names(again), [RATINGS_VHOST, REVIEWS_VHOST]);
  } finally {
    client.close();
  }
});

test("flag on, SotW sidecar: RDS keeps every virtual host inline, byte for byte as with the flag off", async () => {
  const sotw = SotwClient.connect(on.address);
  const delta = DeltaClient.connect(off.address);
  try {
    const inline = await sotw.requestAndAck({ node: node(), typeUrl: TypeUrl.Route, resourceNames: ["80"] });
    delta.request({ node: node(), typeUrl: TypeUrl.Route, resourceNamesSubscribe: ["80"] });
    const flagOff = await delta.next();
    const config = routeConfiguration(flagOff);
    assert.equal(config.vhds, undefined);
    assert.deepEqual(
      config.virtualHosts.map((v) => v.name),
      [`${RATINGS}:80`, `${REVIEWS}:80`, "allow_any"],
    );
    assert.deepEqual(inline.resources[0]?.value, flagOff.resources[0]?.resource?.value);
  } finally {
    sotw.close();
    delta.close();
  }
});

test("flag off: a VirtualHost subscription gets nothing but the removal of what it asked for", async () => {
  const client = DeltaClient.connect(off.address);
  try {
    client.request({ node: node(), typeUrl: TypeUrl.VirtualHost, resourceNamesSubscribe: ["80"] });
    const res = await client.next();
    assert.deepEqual(names(res), []);
    assert.deepEqual(res.removedResources, ["80"]);
  } finally {
    client.close();
  }
});
