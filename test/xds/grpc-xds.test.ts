// End to end with a real, independent xDS client: @grpc/grpc-js-xds resolves `xds:///echo.test`
// through Sluice's ADS server (SotW), and RPCs reach the test servers the generated config names.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { Client, credentials } from "@grpc/grpc-js";
import * as grpcXds from "@grpc/grpc-js-xds";
import { cluster, fault, route } from "../../src/api/index.ts";
import { type TypeSyncStatus, TypeUrl } from "../../src/xds/index.ts";
import { type Backend, call, startBackend } from "../proxyless/echo.ts";
import {
  apiListener,
  edsCluster,
  type Harness,
  loadAssignment,
  ROUTER_HTTP_FILTER,
  routeAllTo,
  startServer,
  type TestSnapshot,
  valid,
  waitFor,
} from "../support/xds-fixtures.ts";

const TARGET = "echo.test";
const ROUTE = "echo-route";
const CLUSTER = "outbound|50051||echo.default.svc.cluster.local";

/** Listener (api_listener + RDS), route, EDS cluster and endpoints for `echo.test`, all PGV-checked. */
function meshSnapshot(backendPort: number, lastFilter: "router" | "fault" = "router"): TestSnapshot {
  const lis = apiListener(TARGET, {
    routeSpecifier: {
      case: "rds",
      value: { routeConfigName: ROUTE, configSource: { configSourceSpecifier: { case: "ads", value: {} } } },
    },
    httpFilters: [
      lastFilter === "router"
        ? ROUTER_HTTP_FILTER
        : {
            name: "envoy.filters.http.fault",
            configType: { case: "typedConfig", value: anyPack(fault.HTTPFaultSchema, create(fault.HTTPFaultSchema)) },
          },
    ],
  });
  const routes = valid(
    route.RouteConfigurationSchema,
    create(route.RouteConfigurationSchema, routeAllTo(ROUTE, TARGET, CLUSTER)),
  );
  return {
    [TypeUrl.Listener]: [lis],
    [TypeUrl.Route]: [routes],
    [TypeUrl.Cluster]: [edsCluster(CLUSTER)],
    [TypeUrl.Endpoint]: [loadAssignment(CLUSTER, [["127.0.0.1", backendPort]])],
  };
}

let h: Harness;
let backends: Backend[];
let client: Client;

before(async () => {
  backends = [await startBackend("one"), await startBackend("two")];
  h = await startServer(meshSnapshot(backends[0].port));
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify({
    xds_servers: [{ server_uri: h.address, channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] }],
    node: {
      id: "sidecar~127.0.0.1~echo-client.default~default.svc.cluster.local",
      metadata: { NAMESPACE: "default", GENERATOR: "grpc" },
      locality: { zone: "z1" },
    },
  });
  grpcXds.register();
  client = new Client(`xds:///${TARGET}`, credentials.createInsecure());
});

after(async () => {
  client?.close();
  await h?.close();
  for (const b of backends ?? []) b.stop();
});

function echo(): Promise<string> {
  return call(client);
}

test("grpc-js-xds resolves LDS → RDS → CDS → EDS from Sluice and the RPC reaches the backend", async () => {
  assert.equal(await echo(), "one");
  const conn = h.server.syncStatus().find((s) => s.proxy.id === "echo-client.default");
  assert.ok(conn, "the xDS client is connected");
  assert.equal(conn.proxy.generator, "grpc");
  assert.deepEqual(conn.proxy.locality, { region: "", zone: "z1", subZone: "" });
  for (const t of [TypeUrl.Listener, TypeUrl.Route, TypeUrl.Cluster, TypeUrl.Endpoint]) {
    const watch: TypeSyncStatus | undefined = conn.types.find((x) => x.typeUrl === t);
    assert.ok(watch?.sent, `${t} was sent`);
    assert.equal(watch.lastNack, undefined, `${t} was not rejected`);
  }
  // The client names its listener and cluster: not wildcard subscriptions.
  assert.deepEqual(conn.types.find((x) => x.typeUrl === TypeUrl.Listener)?.resourceNames, [TARGET]);
});

test("an endpoint change pushed by Sluice moves the traffic", async () => {
  await h.push(meshSnapshot(backends[1].port));
  // The client switches once it has applied the new ClusterLoadAssignment.
  await waitFor(async () => (await echo()) === "two", "traffic on backend two");
  assert.equal(clientType(TypeUrl.Endpoint)?.lastNack, undefined);
});

function clientType(typeUrl: string): TypeSyncStatus | undefined {
  return h.server
    .syncStatus()
    .find((s) => s.proxy.id === "echo-client.default")
    ?.types.find((x) => x.typeUrl === typeUrl);
}

test("a listener whose last HTTP filter is not the router is NACKed by grpc-js-xds; a fixed one is ACKed", async () => {
  await h.push(meshSnapshot(backends[1].port, "fault"));
  await waitFor(() => clientType(TypeUrl.Listener)?.state === "NACKED", "the LDS NACK");
  assert.match(clientType(TypeUrl.Listener)?.lastNack?.message ?? "", /final filter is .*HTTPFault/);
  // The client keeps its last good listener.
  assert.equal(await echo(), "two");

  await h.push(meshSnapshot(backends[0].port));
  await waitFor(() => clientType(TypeUrl.Listener)?.state === "SYNCED", "the LDS ACK");
  await waitFor(() => clientType(TypeUrl.Endpoint)?.state === "SYNCED", "the EDS ACK");
  assert.equal(await echo(), "one");
});

test("a cluster missing from a later CDS response is deleted by the client; restoring it restores traffic", async () => {
  const { [TypeUrl.Cluster]: _cluster, ...withoutCluster } = meshSnapshot(backends[0].port);
  await h.push(withoutCluster);
  await waitFor(
    () =>
      echo().then(
        () => false,
        () => true,
      ),
    "RPCs to fail once the cluster is gone",
  );
  // grpc-js-xds keeps a deleted resource's last value and ignores an equal one coming back, so
  // the restored cluster differs in something it reads (a circuit breaker).
  const restored = edsCluster(CLUSTER);
  restored.circuitBreakers = create(cluster.CircuitBreakersSchema, { thresholds: [{ maxRequests: 1000 }] });
  valid(cluster.ClusterSchema, restored);
  await h.push({ ...meshSnapshot(backends[0].port), [TypeUrl.Cluster]: [restored] });
  await waitFor(
    () =>
      echo().then(
        (answer) => answer === "one",
        () => false,
      ),
    "traffic on backend one again",
  );
});
