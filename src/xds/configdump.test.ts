// config_dump answers from the push context the connection last worked from (Istio's LastPushContext),
// not from the server's newest push, which the connection may not have been sent yet.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { testService } from "../../test/support/registry-inputs.ts";
import { core } from "../api/index.ts";
import { DEFAULT_MESH_CONFIG } from "../config/index.ts";
import { XdsCache } from "../configgen/index.ts";
import { buildPushContext } from "../model/mesh-push.ts";
import { parseProxy } from "../model/proxy.ts";
import type { PushSnapshot } from "../model/push-snapshot.ts";
import type { Service } from "../registry/index.ts";
import { configDumpEndpoint } from "./configdump.ts";
import type { ConnectionStatus } from "./server/index.ts";
import { TypeUrl } from "./types.ts";

const parsed = parseProxy(
  create(core.NodeSchema, {
    id: "sidecar~10.0.0.7~app-1.shop~shop.svc.cluster.local",
    metadata: { NAMESPACE: "shop" },
  }),
);
assert.ok(parsed.proxy, parsed.error);
const proxy = parsed.proxy;

const service = (name: string, address: string): Service =>
  testService({
    hostname: `${name}.shop.svc.cluster.local`,
    namespace: "shop",
    name,
    addresses: [address],
    ports: [{ name: "http", port: 80, protocol: "HTTP", targetPort: 8080 }],
  });

const sent = buildPushContext({ configs: [], services: [service("api", "10.96.0.1")], mesh: DEFAULT_MESH_CONFIG });
const newer = buildPushContext(
  { configs: [], services: [service("api", "10.96.0.1"), service("web", "10.96.0.2")], mesh: DEFAULT_MESH_CONFIG },
  sent,
);

function connection(pushContext: typeof sent): ConnectionStatus<PushSnapshot> {
  return {
    connectionId: "app-1.shop-1",
    proxy,
    protocol: "sotw",
    peerAddress: "127.0.0.1:1",
    connectedAt: new Date(),
    identities: [],
    pushVersion: pushContext.version,
    pushContext,
    types: [{ typeUrl: TypeUrl.Cluster, wildcard: true, resourceNames: [], state: "SYNCED" }],
  };
}

/** The cluster names in a config_dump of CDS, and the version they were dumped at. */
function dumpedClusters(conn: ConnectionStatus<PushSnapshot>): { names: string[]; version: string } {
  const handler = configDumpEndpoint(
    { syncStatus: () => [conn] },
    { endpoints: { endpointsFor: () => [] }, secrets: { secret: () => undefined }, cache: new XdsCache() },
  );
  const dump = handler({ query: new URLSearchParams("proxyID=app-1.shop") }) as {
    configs: { "@type": string; versionInfo?: string; dynamicActiveClusters?: { cluster: { name: string } }[] }[];
  };
  const clusters = dump.configs.find((c) => c["@type"].endsWith("ClustersConfigDump"));
  assert.ok(clusters);
  return {
    names: (clusters.dynamicActiveClusters ?? []).map((c) => c.cluster.name),
    version: clusters.versionInfo ?? "",
  };
}

test("config_dump shows what the connection was last sent, though a newer push exists", () => {
  assert.notEqual(sent.version, newer.version);
  const before = dumpedClusters(connection(sent));
  assert.equal(before.version, sent.version);
  assert.ok(before.names.includes("outbound|80||api.shop.svc.cluster.local"));
  assert.ok(!before.names.includes("outbound|80||web.shop.svc.cluster.local"));
  // Once the connection has worked from the newer push, the dump follows it.
  const after = dumpedClusters(connection(newer));
  assert.equal(after.version, newer.version);
  assert.ok(after.names.includes("outbound|80||web.shop.svc.cluster.local"));
});
