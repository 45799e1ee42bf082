// Golden tests per feature: testdata/<feature>.in.yaml (cases: service, endpoints, DestinationRule,
// proxy, mesh) → testdata/<feature>.out.yaml (the clusters as proto3 JSON). UPDATE_GOLDEN=1 rewrites
// the expected files. Every generated cluster must also pass Envoy's constraint checker.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonValue } from "@bufbuild/protobuf";
import {
  makeEndpoint,
  makeMesh,
  makeProxy,
  makeService,
  type ProxyInput,
  type ServiceInput,
} from "../../../test/support/cluster-fixtures.ts";
import { assertGolden, protoJson, readGoldenInput, testdataDir } from "../../../test/support/golden.ts";
import { cluster } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { ConnectionPool } from "../../config/types/index.ts";
import type { ServiceEndpoint } from "../../registry/index.ts";
import { NO_MEMOS } from "../../util/memo.ts";
import { envoyViolations } from "../httpfilter/index.ts";
import {
  type AppliedDestinationRule,
  assembleClusters,
  buildAllowAnyDynamicDnsCluster,
  buildBlackHoleCluster,
  buildInboundCluster,
  buildInboundPassthroughCluster,
  buildOutboundClusters,
  buildPassthroughCluster,
  buildSniDnatClusters,
  type InboundEndpoint,
  type ServiceMtlsMode,
} from "./index.ts";

interface GoldenCase {
  name: string;
  build?:
    | "outbound"
    | "sniDnat"
    | "blackhole"
    | "passthrough"
    | "allowAnyDynamicDns"
    | "inboundPassthrough"
    | "inbound"
    | "sidecar";
  proxy?: ProxyInput;
  mesh?: Partial<MeshConfig>;
  service?: ServiceInput;
  /** The service port to build for (the first port by default). */
  port?: number;
  endpoints?: Partial<ServiceEndpoint>[];
  destinationRule?: AppliedDestinationRule;
  serviceMtlsMode?: ServiceMtlsMode;
  /** PILOT_ENABLE_REDIS_FILTER. */
  redisFilter?: boolean;
  /** Inbound only. */
  targetPort?: number;
  endpoint?: InboundEndpoint;
  sidecarConnectionPool?: ConnectionPool;
}

function buildCase(c: GoldenCase): cluster.Cluster[] {
  const proxy = makeProxy(c.proxy);
  const mesh = makeMesh(c.mesh);
  const service = makeService(c.service ?? {});
  const port = service.ports.find((p) => p.port === (c.port ?? service.ports[0].port)) ?? service.ports[0];
  const endpoints = (c.endpoints ?? []).map((e) => makeEndpoint(service, e));
  const outboundInput = {
    service,
    port,
    destinationRule: c.destinationRule,
    proxy,
    mesh,
    endpoints,
    serviceMtlsMode: c.serviceMtlsMode,
    redisFilter: c.redisFilter,
  };
  switch (c.build ?? "outbound") {
    case "outbound":
      return buildOutboundClusters(outboundInput);
    case "sniDnat":
      return buildSniDnatClusters(outboundInput);
    case "blackhole":
      return [buildBlackHoleCluster(NO_MEMOS, mesh)];
    case "passthrough":
      return [buildPassthroughCluster(NO_MEMOS, mesh)];
    case "allowAnyDynamicDns":
      return [buildAllowAnyDynamicDnsCluster(NO_MEMOS, mesh, proxy)];
    case "inboundPassthrough":
      return [buildInboundPassthroughCluster(NO_MEMOS, mesh, proxy)];
    case "inbound":
      return [
        buildInboundCluster({
          targetPort: c.targetPort ?? Number(port.targetPort),
          port,
          services: [service],
          proxy,
          mesh,
          endpoint: c.endpoint,
          destinationRule: c.destinationRule,
          sidecarConnectionPool: c.sidecarConnectionPool,
        }),
      ];
    case "sidecar":
      return assembleClusters({
        proxy,
        mesh,
        outbound: buildOutboundClusters(outboundInput),
        inbound: [buildInboundCluster({ targetPort: 9080, port, services: [service], proxy, mesh })],
      });
  }
}

const FEATURES = ["outbound", "connectionpool", "loadbalancer", "outlier", "tls", "special", "dynamicdns", "redis"];
const TESTDATA = testdataDir(import.meta.url);

for (const feature of FEATURES) {
  describe(`cluster golden: ${feature}`, () => {
    const cases = readGoldenInput(TESTDATA, feature) as GoldenCase[];
    const built = cases.map((c) => ({ name: c.name, clusters: buildCase(c) }));

    it("matches testdata", () => {
      const out: Record<string, JsonValue> = {};
      for (const { name, clusters } of built) out[name] = clusters.map((c) => protoJson(cluster.ClusterSchema, c));
      assertGolden(TESTDATA, feature, out);
    });

    for (const { name, clusters } of built) {
      it(`${name}: every cluster passes Envoy's constraints`, () => {
        for (const c of clusters) {
          const violations = envoyViolations(cluster.ClusterSchema, c);
          assert.deepEqual(violations, [], c.name);
        }
      });
    }
  });
}
