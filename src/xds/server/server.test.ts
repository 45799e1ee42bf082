import assert from "node:assert/strict";
import { connect, constants } from "node:http2";
import { type TestContext, test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { Server, ServerCredentials, type ServiceDefinition, status } from "@grpc/grpc-js";
import { Registry } from "prom-client";
import { DeltaClient, names, SotwClient, sidecarNode } from "../../../test/support/ads-client.ts";
import {
  assertNoDeltaResponse,
  assertNoResponse,
  edsCluster,
  startServer,
  testGenerators,
} from "../../../test/support/xds-fixtures.ts";
import { methodPath } from "../../api/grpc-service.ts";
import { cluster, discovery, route, unpackAny } from "../../api/index.ts";
import { newPushContext } from "../../model/push-context.ts";
import { TypeUrl } from "../types.ts";
import type { Authenticator, Caller } from "./auth.ts";
import type { AdsStream } from "./connection.ts";
import { XdsMetrics } from "./metrics.ts";
import { adsServiceDefinition, maxReceiveMessageBytesFromEnv, pushThrottleFromEnv, XdsServer } from "./server.ts";

/** One gRPC frame (flag, length, bytes) holding a first SotW request from a sidecar. */
function firstRequestFrame(): Buffer {
  const request = toBinary(
    discovery.DiscoveryRequestSchema,
    create(discovery.DiscoveryRequestSchema, { node: sidecarNode("gone"), typeUrl: "t" }),
  );
  const frame = Buffer.alloc(5 + request.length);
  frame.writeUInt32BE(request.length, 1);
  frame.set(request, 5);
  return frame;
}

test("a stream cancelled while its first request is being authenticated leaves no connection behind", async (t) => {
  // An authenticator that answers only when the test says (a TokenReview round trip, say).
  let asked!: () => void;
  const authenticating = new Promise<void>((resolve) => {
    asked = resolve;
  });
  let answer!: (caller: Caller) => void;
  const answered = new Promise<Caller>((resolve) => {
    answer = resolve;
  });
  const slow: Authenticator = {
    name: "slow",
    authenticate: () => {
      asked();
      return answered;
    },
  };
  const xds = new XdsServer({
    generators: testGenerators(),
    initialPush: newPushContext({}),
    authenticators: [slow],
    identityCheck: false,
  });
  // The secure handlers on a plaintext server: authentication runs, the transport stays simple.
  const handlers = xds.service(true);
  const serve = handlers.streamAggregatedResources as (call: AdsStream) => void;
  let cancelled!: () => void;
  const sawCancel = new Promise<void>((resolve) => {
    cancelled = resolve;
  });
  const server = new Server();
  server.addService(adsServiceDefinition as ServiceDefinition, {
    ...handlers,
    streamAggregatedResources: (call: AdsStream) => {
      call.on("cancelled", () => cancelled());
      serve(call);
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const session = connect(`http://127.0.0.1:${port}`);
  t.after(() => {
    session.destroy();
    server.forceShutdown();
  });

  const stream = session.request({
    ":method": "POST",
    ":path": methodPath(discovery.AggregatedDiscoveryService.method.streamAggregatedResources),
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.write(firstRequestFrame());
  await authenticating;
  stream.close(constants.NGHTTP2_CANCEL);
  await sawCancel;
  answer({ identities: ["spiffe://cluster.local/ns/default/sa/app"], authenticator: "slow" });
  // What follows the authenticator's answer runs in promise callbacks, all done before the next turn.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    xds.syncStatus().map((s) => s.connectionId),
    [],
  );
});

test("ISTIO_GPRC_MAXRECVMSGSIZE: a positive number of bytes, else Istio's 4 MiB", () => {
  assert.equal(maxReceiveMessageBytesFromEnv({}), 4 * 1024 * 1024);
  assert.equal(maxReceiveMessageBytesFromEnv({ ISTIO_GPRC_MAXRECVMSGSIZE: "2048" }), 2048);
  assert.equal(maxReceiveMessageBytesFromEnv({ ISTIO_GPRC_MAXRECVMSGSIZE: "+2048" }), 2048);
  for (const value of ["", "4MiB", "1.5", "0", "-1", "99999999999999999999"]) {
    assert.equal(maxReceiveMessageBytesFromEnv({ ISTIO_GPRC_MAXRECVMSGSIZE: value }), 4 * 1024 * 1024, value);
  }
});

test("PILOT_PUSH_THROTTLE: a whole number of pushes, 100 when unset or 0; anything else refused by name", () => {
  assert.equal(pushThrottleFromEnv({}), 100);
  assert.equal(pushThrottleFromEnv({ PILOT_PUSH_THROTTLE: "" }), 100);
  assert.equal(pushThrottleFromEnv({ PILOT_PUSH_THROTTLE: "0" }), 100);
  assert.equal(pushThrottleFromEnv({ PILOT_PUSH_THROTTLE: "25" }), 25);
  for (const value of ["-1", "1.5", "ten", "99999999999999999999"]) {
    assert.throws(
      () => pushThrottleFromEnv({ PILOT_PUSH_THROTTLE: value }),
      new RegExp(`PILOT_PUSH_THROTTLE: .*"${value}"`),
    );
  }
});

test("a request larger than ISTIO_GPRC_MAXRECVMSGSIZE ends its stream with RESOURCE_EXHAUSTED; other streams go on", async (t) => {
  const limit = maxReceiveMessageBytesFromEnv({ ISTIO_GPRC_MAXRECVMSGSIZE: "2048" });
  const server = new XdsServer({
    generators: testGenerators(),
    initialPush: newPushContext({ [TypeUrl.Cluster]: [edsCluster("a")] }),
  });
  const { grpcPort } = await server.listen({ grpcAddr: "127.0.0.1:0", maxReceiveMessageBytes: limit });
  const address = `127.0.0.1:${grpcPort}`;
  const good = SotwClient.connect(address);
  const large = SotwClient.connect(address);
  t.after(async () => {
    good.close();
    large.close();
    await server.close(0);
  });
  // EDS names taking 40 bytes each in a request: 35 make one under the limit, 60 one over it.
  const names = (n: number) =>
    Array.from({ length: n }, (_, i) => `outbound|80||service-${String(i).padStart(5, "0")}.example.com`);
  good.request({ node: sidecarNode("good"), typeUrl: TypeUrl.Cluster });
  good.ack(await good.next());

  large.request({ node: sidecarNode("large"), typeUrl: TypeUrl.Endpoint, resourceNames: names(60) });
  await assert.rejects(large.next(), /stream ended/, "refused, not answered");
  assert.equal((await large.ended).code, status.RESOURCE_EXHAUSTED);

  good.request({ typeUrl: TypeUrl.Endpoint, resourceNames: names(35) });
  const res = await good.next();
  assert.equal(res.typeUrl, TypeUrl.Endpoint);
  assert.deepEqual(
    server.syncStatus().map((s) => s.proxy.id),
    ["good.default"],
  );
});

/** Route configuration `name` sending everything to cluster `x` with `weight`, a uint32 field. */
function weightedRoutes(name: string, weight: number): route.RouteConfiguration {
  return create(route.RouteConfigurationSchema, {
    name,
    virtualHosts: [
      {
        name: "all",
        domains: ["*"],
        routes: [
          {
            match: { pathSpecifier: { case: "prefix", value: "/" } },
            action: {
              case: "route",
              value: { clusterSpecifier: { case: "weightedClusters", value: { clusters: [{ name: "x", weight }] } } },
            },
          },
        ],
      },
    ],
  });
}

/** The weight route configuration `name` of a response gives cluster `x`. */
function weightIn(
  res: discovery.DiscoveryResponse | discovery.DeltaDiscoveryResponse,
  name: string,
): number | undefined {
  const anys =
    res.$typeName === "envoy.service.discovery.v3.DeltaDiscoveryResponse"
      ? res.resources.map((r) => r.resource)
      : res.resources;
  for (const any of anys) {
    const config = any && unpackAny(any, route.RouteConfigurationSchema);
    if (config?.name !== name) continue;
    const action = config.virtualHosts[0].routes[0].action;
    if (action.case === "route" && action.value.clusterSpecifier.case === "weightedClusters")
      return action.value.clusterSpecifier.value.clusters[0].weight;
  }
  return undefined;
}

async function internalErrors(metrics: XdsMetrics): Promise<number> {
  return (await metrics.internalErrors.get()).values[0]?.value ?? 0;
}

const UINT32_OVERFLOW = 2 ** 32;

/** A SotW and a delta client of the server, closed with it after the test. */
function clientsOf(h: { address: string; close(): Promise<void> }, t: TestContext) {
  const sotw = SotwClient.connect(h.address);
  const delta = DeltaClient.connect(h.address);
  t.after(async () => {
    sotw.close();
    delta.close();
    await h.close();
  });
  return { sotw, delta };
}

test("a route configuration that cannot be encoded is left out, logged and counted; the others go, now and in later pushes", async (t) => {
  const metrics = new XdsMetrics(new Registry());
  const routes = (weightOfA: number) => ({
    [TypeUrl.Route]: [weightedRoutes("a", weightOfA), weightedRoutes("b", UINT32_OVERFLOW), weightedRoutes("c", 1)],
  });
  const h = await startServer(routes(1), { metrics });
  const { sotw, delta } = clientsOf(h, t);
  const first = await sotw.requestAndAck({
    node: sidecarNode("sotw"),
    typeUrl: TypeUrl.Route,
    resourceNames: ["a", "b", "c"],
  });
  assert.deepEqual(names(first), ["a", "c"]);
  delta.request({ node: sidecarNode("delta"), typeUrl: TypeUrl.Route, resourceNamesSubscribe: ["a", "b", "c"] });
  const deltaFirst = await delta.next();
  assert.deepEqual(names(deltaFirst), ["a", "c"]);
  assert.deepEqual(deltaFirst.removedResources, [], "b is not said to be gone");
  delta.ack(deltaFirst);
  assert.equal(await internalErrors(metrics), 2, "one per response that left b out");

  await h.push(routes(2));
  const second = await sotw.next();
  assert.deepEqual(names(second), ["a", "c"]);
  assert.equal(weightIn(second, "a"), 2);
  const deltaSecond = await delta.next();
  assert.deepEqual(names(deltaSecond), ["a"], "only what changed");
  assert.equal(weightIn(deltaSecond, "a"), 2);
  assert.deepEqual(deltaSecond.removedResources, []);
});

test("a cluster the proxy holds that stops encoding holds back the SotW response (it would delete it) and is kept over delta; it goes once it encodes", async (t) => {
  const unencodable = (name: string) => {
    const c = edsCluster(name);
    c.perConnectionBufferLimitBytes = UINT32_OVERFLOW;
    return c;
  };
  const h = await startServer({ [TypeUrl.Cluster]: [edsCluster("x", 1), edsCluster("y", 1)] });
  const { sotw, delta } = clientsOf(h, t);
  await sotw.requestAndAck({ node: sidecarNode("sotw"), typeUrl: TypeUrl.Cluster });
  delta.request({ node: sidecarNode("delta"), typeUrl: TypeUrl.Cluster });
  delta.ack(await delta.next());

  await h.push({ [TypeUrl.Cluster]: [unencodable("x"), edsCluster("y", 2)] });
  const anyOf = (res: discovery.DiscoveryResponse, name: string) =>
    res.resources.find((any) => unpackAny(any, cluster.ClusterSchema)?.name === name);
  const deltaSecond = await delta.next();
  delta.ack(deltaSecond);
  assert.deepEqual(names(deltaSecond), ["y"]);
  assert.deepEqual(deltaSecond.removedResources, [], "x is not removed");
  await assertNoResponse(sotw);

  // Nothing else changed: nothing to send.
  await h.push({ [TypeUrl.Cluster]: [unencodable("x"), edsCluster("y", 2)] });
  await assertNoResponse(sotw);
  await assertNoDeltaResponse(delta);

  // x encodes again: the SotW proxy gets both changes.
  await h.push({ [TypeUrl.Cluster]: [edsCluster("x", 3), edsCluster("y", 2)] });
  const third = await sotw.next();
  assert.deepEqual(names(third), ["x", "y"]);
  assert.equal(unpackAny(anyOf(third, "x") as Any, cluster.ClusterSchema)?.connectTimeout?.seconds, 3n);
  assert.equal(unpackAny(anyOf(third, "y") as Any, cluster.ClusterSchema)?.connectTimeout?.seconds, 2n);
  assert.deepEqual(names(await delta.next()), ["x"]);
});
