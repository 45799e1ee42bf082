// sluiced's discovery service over examples/mesh, driven by a raw ADS client as a bookinfo sidecar:
// CDS, EDS, LDS and RDS from the push context, every resource within Envoy's constraints, and an
// endpoint change pushed as EDS of the changed service alone.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { endpoint, route, unpackAny } from "../../src/api/index.ts";
import { loadState, type TranslateState } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { MemorySource } from "../../src/sources/index.ts";
import { type Discovery, TypeUrl } from "../../src/xds/index.ts";
import { DeltaClient, names, SotwClient, sidecarNode } from "../support/ads-client.ts";
import { assertValidResources } from "../support/pgv.ts";
import { startStoreDiscovery } from "../support/store-discovery.ts";

const MESH_DIR = fileURLToPath(new URL("../../examples/mesh", import.meta.url));
const REVIEWS = "reviews.bookinfo.svc.cluster.local";
const mesh = DEFAULT_MESH_CONFIG;

let state: TranslateState;
let discovery: Discovery;

before(async () => {
  const loaded = loadState([MESH_DIR], mesh, "cluster.local");
  assert.ok(loaded.state, loaded.problems?.join("\n"));
  state = loaded.state;
  discovery = await startStoreDiscovery(state.store, { registry: state.registry, initialPush: state.push });
});

after(async () => {
  await discovery.stop(0);
});

/** Adds an endpoint of reviews `version` (a WorkloadEntry), which the push pipeline sends as EDS. */
function addReviewsEndpoint(name: string, address: string, version: string, port: number): void {
  new MemorySource(state.store, "file").apply({
    apiVersion: "networking.istio.io/v1",
    kind: "WorkloadEntry",
    metadata: { name, namespace: "bookinfo" },
    spec: { address, labels: { app: "reviews", version }, ports: { grpc: port } },
  });
}

/** The ports of a load assignment's endpoints, sorted. */
function endpointPorts(cla: endpoint.ClusterLoadAssignment | undefined): number[] {
  return (cla?.endpoints ?? [])
    .flatMap((l) => l.lbEndpoints)
    .map((e) => {
      const address = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value.address?.address : undefined;
      return address?.case === "socketAddress" && address.value.portSpecifier.case === "portValue"
        ? address.value.portSpecifier.value
        : 0;
    })
    .sort((a, b) => a - b);
}

test("a bookinfo sidecar gets the reviews clusters, their endpoints, listeners and the 90/10 route", async () => {
  const client = SotwClient.connect(`127.0.0.1:${discovery.ports.grpcPort}`);
  try {
    // At the workload entry's address: a ServiceEntry's instances are found by IP, as Istio finds them.
    const node = {
      ...sidecarNode("productpage-v1", "bookinfo", { LABELS: { app: "productpage", version: "v1" } }),
      id: "sidecar~127.0.0.1~productpage-v1.bookinfo~bookinfo.svc.cluster.local",
    };
    const cds = await client.requestAndAck({ node, typeUrl: TypeUrl.Cluster });
    assertValidResources(cds);
    const clusters = names(cds);
    for (const subset of ["", "v1", "v2"]) assert.ok(clusters.includes(`outbound|9080|${subset}|${REVIEWS}`), subset);
    assert.ok(clusters.includes("BlackHoleCluster") && clusters.includes("inbound|19080||"), clusters.join(" "));

    const subsetClusters = [`outbound|9080|v1|${REVIEWS}`, `outbound|9080|v2|${REVIEWS}`];
    const eds = await client.requestAndAck({ typeUrl: TypeUrl.Endpoint, resourceNames: subsetClusters });
    assertValidResources(eds);
    assert.deepEqual(
      eds.resources.map((any) => endpointPorts(unpackAny(any, endpoint.ClusterLoadAssignmentSchema))),
      [[19081], [19082]],
    );

    const lds = await client.requestAndAck({ typeUrl: TypeUrl.Listener });
    assertValidResources(lds);
    assert.ok(names(lds).includes("0.0.0.0_9080"), names(lds).join(" "));
    assert.ok(names(lds).includes("virtualInbound"));

    const rds = await client.requestAndAck({ typeUrl: TypeUrl.Route, resourceNames: ["9080"] });
    assertValidResources(rds);
    const config = unpackAny(rds.resources[0], route.RouteConfigurationSchema);
    const vhost = config?.virtualHosts.find((v) => v.domains.includes(REVIEWS));
    const split = vhost?.routes.at(-1)?.action;
    assert.equal(split?.case, "route");
    const weighted =
      split?.value.clusterSpecifier.case === "weightedClusters" ? split.value.clusterSpecifier.value.clusters : [];
    assert.deepEqual(
      weighted.map((c) => [c.name, c.weight]),
      [
        [`outbound|9080|v1|${REVIEWS}`, 90],
        [`outbound|9080|v2|${REVIEWS}`, 10],
      ],
    );

    // A new reviews v2 endpoint is an incremental push: EDS again, for the reviews clusters only.
    addReviewsEndpoint("reviews-v2b", "127.0.0.2", "v2", 19083);
    const update = await client.next();
    assert.equal(update.typeUrl, TypeUrl.Endpoint);
    const v2 = update.resources
      .map((any) => unpackAny(any, endpoint.ClusterLoadAssignmentSchema))
      .find((cla) => cla?.clusterName === subsetClusters[1]);
    assert.deepEqual(endpointPorts(v2), [19082, 19083]);
  } finally {
    client.close();
  }
});

test("config_dump shows a connected proxy's watched types in Envoy's sections, routes as subscribed", async () => {
  const client = SotwClient.connect(`127.0.0.1:${discovery.ports.grpcPort}`);
  try {
    const node = sidecarNode("reviews-v1", "bookinfo", { LABELS: { app: "reviews", version: "v1" } });
    await client.requestAndAck({ node, typeUrl: TypeUrl.Cluster });
    await client.requestAndAck({ typeUrl: TypeUrl.Listener });
    await client.requestAndAck({ typeUrl: TypeUrl.Route, resourceNames: ["9080"] });

    const serve = (path: string) => new TextDecoder().decode(discovery.debugEndpoints.serve(path, undefined));
    assert.match(serve("config_dump"), /provide a proxyID/);
    assert.match(serve("config_dump?proxyID=nobody.bookinfo"), /not connected/);
    // A caller limited to another namespace does not see the proxy.
    assert.match(
      new TextDecoder().decode(discovery.debugEndpoints.serve("config_dump?proxyID=reviews-v1.bookinfo", "other")),
      /not connected/,
    );

    const dump = JSON.parse(serve("config_dump?proxyID=reviews-v1.bookinfo")) as {
      configs: { "@type": string; dynamicRouteConfigs?: { routeConfig: { name: string } }[] }[];
    };
    // Istio's sections, each present whether or not the proxy watches its type.
    assert.deepEqual(
      dump.configs.map((c) => c["@type"].replace("type.googleapis.com/envoy.admin.v3.", "")),
      [
        "BootstrapConfigDump",
        "ClustersConfigDump",
        "ListenersConfigDump",
        "ScopedRoutesConfigDump",
        "RoutesConfigDump",
        "SecretsConfigDump",
        "EcdsConfigDump",
      ],
    );
    assert.deepEqual(
      dump.configs[4].dynamicRouteConfigs?.map((r) => r.routeConfig.name),
      ["9080"],
    );

    const raw = JSON.parse(serve("config_dump?proxyID=reviews-v1.bookinfo&types=rds,eds")) as {
      configs: { "@type": string; name: string }[];
    };
    // EDS is not watched: only the subscribed route, bare.
    assert.deepEqual(
      raw.configs.map((c) => [c["@type"], c.name]),
      [["type.googleapis.com/envoy.config.route.v3.RouteConfiguration", "9080"]],
    );
  } finally {
    client.close();
  }
});

test("delta EDS after an endpoint change sends the changed load assignment and removes nothing, also of a name subscribed later", async () => {
  const client = DeltaClient.connect(`127.0.0.1:${discovery.ports.grpcPort}`);
  try {
    const node = sidecarNode("details-v1", "bookinfo", { LABELS: { app: "details" } });
    const watched = [`outbound|9080|v1|${REVIEWS}`, `outbound|9080||productpage.bookinfo.svc.cluster.local`];
    client.request({ node, typeUrl: TypeUrl.Endpoint, resourceNamesSubscribe: watched });
    const first = await client.next();
    assert.deepEqual(names(first), [...watched].sort());
    client.ack(first);

    addReviewsEndpoint("reviews-v1b", "127.0.0.3", "v1", 19084);
    const update = await client.next();
    assert.deepEqual(names(update), [`outbound|9080|v1|${REVIEWS}`]);
    assert.deepEqual(update.removedResources, []);
    const any = update.resources[0].resource;
    assert.ok(any, "the resource");
    assert.deepEqual(endpointPorts(unpackAny(any, endpoint.ClusterLoadAssignmentSchema)), [19081, 19084]);
    client.ack(update);

    // A name subscribed after the first push is found by the next endpoint change of its host.
    const v2 = `outbound|9080|v2|${REVIEWS}`;
    client.request({ typeUrl: TypeUrl.Endpoint, resourceNamesSubscribe: [v2] });
    const subscribed = await client.next();
    assert.deepEqual(names(subscribed), [v2]);
    client.ack(subscribed);
    addReviewsEndpoint("reviews-v2c", "127.0.0.4", "v2", 19085);
    const later = await client.next();
    assert.deepEqual(names(later), [v2], "v1's assignment is unchanged, so only v2's goes");
    const v2Any = later.resources[0].resource;
    assert.ok(v2Any, "the resource");
    assert.ok(endpointPorts(unpackAny(v2Any, endpoint.ClusterLoadAssignmentSchema)).includes(19085));
  } finally {
    client.close();
  }
});
