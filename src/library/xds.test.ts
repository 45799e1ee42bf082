import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { DeltaClient, names, SotwClient } from "../../test/support/ads-client.ts";
import { cluster } from "../api/index.ts";
import type { ConfigObject } from "../config/index.ts";
import { configDumpJson, DiscoveryServer, TypeUrl, translate } from "./xds.ts";

async function started(t: TestContext): Promise<{ server: DiscoveryServer; address: string }> {
  const server = new DiscoveryServer();
  const { grpcPort } = await server.listen({ grpcAddr: "127.0.0.1:0" });
  t.after(() => server.close(0));
  return { server, address: `127.0.0.1:${grpcPort}` };
}

test("any node id is served the shared resources, or its own, and each change is pushed (SotW)", async (t) => {
  const { server, address } = await started(t);
  server.setResources([
    { "@type": TypeUrl.Cluster, name: "shared" },
    { "@type": TypeUrl.Endpoint, clusterName: "shared" },
  ]);
  const envoy1 = SotwClient.connect(address);
  const envoy2 = SotwClient.connect(address);
  t.after(() => {
    envoy1.close();
    envoy2.close();
  });
  const first = await envoy1.requestAndAck({ node: { id: "envoy-1" }, typeUrl: TypeUrl.Cluster });
  assert.deepEqual(names(first), ["shared"]);
  assert.deepEqual(names(await envoy2.requestAndAck({ node: { id: "envoy-2" }, typeUrl: TypeUrl.Cluster })), [
    "shared",
  ]);

  server.setResources([create(cluster.ClusterSchema, { name: "own" })], "envoy-1");
  const pushed = await envoy1.next();
  assert.deepEqual(names(pushed), ["own"]);
  assert.notEqual(pushed.versionInfo, first.versionInfo);
  await server.pushesDone();
  assert.deepEqual(
    server
      .connections()
      .map((c) => c.proxy.nodeId)
      .sort(),
    ["envoy-1", "envoy-2"],
  );
  server.clearResources("envoy-1");
  assert.deepEqual(names(await envoy1.next()), ["shared"]);
});

test("delta streams get only what changed and the names removed", async (t) => {
  const { server, address } = await started(t);
  server.setResources([
    { "@type": TypeUrl.Cluster, name: "a" },
    { "@type": TypeUrl.Cluster, name: "b" },
  ]);
  const envoy = DeltaClient.connect(address);
  t.after(() => envoy.close());
  envoy.request({ node: { id: "envoy-delta" }, typeUrl: TypeUrl.Cluster });
  const initial = await envoy.next();
  assert.deepEqual(names(initial), ["a", "b"]);
  envoy.ack(initial);
  server.setResources([
    { "@type": TypeUrl.Cluster, name: "a" },
    { "@type": TypeUrl.Cluster, name: "c", connectTimeout: "2s" },
  ]);
  const change = await envoy.next();
  assert.deepEqual(names(change), ["c"], "the unchanged cluster a is not sent again");
  assert.deepEqual(change.removedResources, ["b"]);
});

test("your generator serves its type URL, and push() asks it again", async (t) => {
  const { server, address } = await started(t);
  let generation = 1;
  server.register(TypeUrl.Cluster, {
    generate: (proxy) => ({
      resources: [
        {
          name: `${proxy.nodeId}-${generation}`,
          resource: create(cluster.ClusterSchema, { name: `${proxy.nodeId}-${generation}` }),
        },
      ],
    }),
  });
  const envoy = SotwClient.connect(address);
  t.after(() => envoy.close());
  assert.deepEqual(names(await envoy.requestAndAck({ node: { id: "gen" }, typeUrl: TypeUrl.Cluster })), ["gen-1"]);
  generation = 2;
  server.push();
  assert.deepEqual(names(await envoy.next()), ["gen-2"]);
});

test("an unreadable node is refused with Istio's message", async (t) => {
  const { address } = await started(t);
  const envoy = SotwClient.connect(address);
  t.after(() => envoy.close());
  envoy.request({ node: { id: "" }, typeUrl: TypeUrl.Cluster });
  const end = await envoy.ended;
  assert.equal(end.details, "missing node information");
});

const reviews: ConfigObject[] = [
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "reviews", namespace: "bookinfo" },
    spec: { ports: [{ name: "http", port: 9080 }], selector: { app: "reviews" } },
  },
  {
    apiVersion: "networking.istio.io/v1",
    kind: "DestinationRule",
    metadata: { name: "reviews", namespace: "bookinfo" },
    spec: { host: "reviews", subsets: [{ name: "v1", labels: { version: "v1" } }] },
  },
];

test("translate gives a proxy's ConfigDump for objects, and names the object and field of a bad one", () => {
  const result = translate(
    reviews,
    { ip: "10.0.0.9", namespace: "bookinfo", labels: { app: "productpage" } },
    {
      types: ["CDS"],
    },
  );
  assert.ok(result.dump, result.problems?.join("\n"));
  const json = JSON.stringify(configDumpJson(result.dump));
  assert.match(json, /"outbound\|9080\|v1\|reviews\.bookinfo\.svc\.cluster\.local"/);

  const bad = structuredClone(reviews);
  (bad[1].spec as { subsets: { name: string }[] }).subsets[0].name = "";
  const refused = translate(bad, { ip: "10.0.0.9", namespace: "bookinfo" });
  assert.deepEqual(refused.problems?.length, 1);
  assert.match(refused.problems?.[0] ?? "", /^DestinationRule bookinfo\/reviews: .*spec\.subsets\[0\]\.name/);
});
