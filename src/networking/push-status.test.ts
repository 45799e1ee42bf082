// The push status cases the builders report through their `report` input: a cluster name built
// twice (pilot_duplicate_envoy_clusters) and a virtual host name or domain taken twice in one
// route configuration (pilot_vservice_dup_domain), with Istio's keys and messages.
import assert from "node:assert/strict";
import { test } from "node:test";
import { makeMesh, makeProxy, makeService } from "../../test/support/cluster-fixtures.ts";
import { assertValid, proxyFixture, serviceFixture } from "../../test/support/route-cases.ts";
import { DEFAULT_MESH_CONFIG } from "../config/index.ts";
import { PushStatus } from "../model/index.ts";
import { assembleClusters, buildOutboundClusters } from "./cluster/index.ts";
import { buildSidecarRouteConfiguration } from "./route/config.ts";

test("a cluster name seen twice keeps the first and is reported as a duplicate cluster", () => {
  const proxy = makeProxy();
  const mesh = makeMesh();
  const service = makeService({});
  const outbound = buildOutboundClusters({ service, port: service.ports[0], proxy, mesh, endpoints: [] });
  const status = new PushStatus();
  const clusters = assembleClusters({
    proxy,
    mesh,
    outbound: [...outbound, ...outbound],
    report: status.reporter("p"),
  });
  assert.equal(clusters.filter((c) => c.name === outbound[0].name).length, 1);
  assert.deepEqual(status.toJSON(), {
    pilot_duplicate_envoy_clusters: {
      [outbound[0].name]: { proxy: "p", message: `Duplicate cluster ${outbound[0].name} found while pushing CDS` },
    },
  });
});

test("a domain a virtual host already has is cut from the next one and reported as a duplicate domain", () => {
  const status = new PushStatus();
  const config = buildSidecarRouteConfiguration({
    routeName: "8000",
    proxy: proxyFixture(),
    mesh: DEFAULT_MESH_CONFIG,
    services: [
      serviceFixture({
        hostname: "a.example.com",
        ports: [{ port: 8000 }],
        addresses: ["240.0.0.1"],
        registry: "External",
      }),
      serviceFixture({
        hostname: "b.example.com",
        ports: [{ port: 8000 }],
        addresses: ["240.0.0.1"],
        registry: "External",
      }),
    ],
    virtualServices: [],
    report: status.reporter("app.default"),
  });
  assert.ok(config);
  assertValid(config);
  // The shared address stays with the first service.
  const domains = (name: string) => config.virtualHosts.find((v) => v.name === name)?.domains ?? [];
  assert.ok(domains("a.example.com:8000").includes("240.0.0.1"));
  assert.ok(!domains("b.example.com:8000").includes("240.0.0.1"));
  assert.deepEqual(status.toJSON(), {
    pilot_vservice_dup_domain: {
      "b.example.com:8000": {
        proxy: "app.default",
        message: "duplicate domain from service: b.example.com:8000",
      },
    },
  });
  assert.equal(status.count("pilot_vservice_dup_domain"), 1);
  assert.equal(status.count("pilot_no_ip"), 0);
});
