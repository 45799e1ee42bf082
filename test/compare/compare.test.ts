// The comparison can fail: two embedded discovery servers serve the same resources but for one
// deliberately changed field of one cluster; collection over delta (Envoy) and SotW (proxyless) and
// the resource-by-resource comparison must report exactly that cluster, at that field, and the
// ratchet must count it as a regression when the baseline had it identical.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DiscoveryServer, type ResourceInput, TypeUrl } from "../../src/library/xds.ts";
import { compareBaseline, SURFACES } from "./baseline.ts";
import { collect, type Snapshot } from "./collect.ts";
import { compareSnapshots, diffPaths } from "./diff.ts";
import { type ProxySpec, proxyNode } from "./proxies.ts";

const HCM = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const ROUTER = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router";

/** A listener with RDS, its route, an EDS cluster and its endpoints: what collection follows. */
function resources(connectTimeout: string): ResourceInput[] {
  return [
    {
      "@type": TypeUrl.Listener,
      name: "echo.default.svc.cluster.local:7070",
      apiListener: {
        apiListener: {
          "@type": HCM,
          rds: { routeConfigName: "echo-route", configSource: { ads: {} } },
          httpFilters: [{ name: "router", typedConfig: { "@type": ROUTER } }],
        },
      },
    },
    {
      "@type": TypeUrl.Route,
      name: "echo-route",
      virtualHosts: [{ name: "echo", domains: ["*"], routes: [{ match: { prefix: "" }, route: { cluster: "echo" } }] }],
    },
    {
      "@type": TypeUrl.Cluster,
      name: "echo",
      type: "EDS",
      connectTimeout,
      edsClusterConfig: { edsConfig: { ads: {} } },
    },
    {
      "@type": TypeUrl.Endpoint,
      clusterName: "echo",
      endpoints: [
        { lbEndpoints: [{ endpoint: { address: { socketAddress: { address: "10.0.0.7", portValue: 7070 } } } }] },
      ],
    },
  ];
}

const sidecar: ProxySpec = {
  name: "sleep",
  kind: "sidecar",
  namespace: "default",
  ip: "10.1.0.1",
  labels: { app: "sleep" },
  serviceAccount: "sleep",
};
const proxyless: ProxySpec = {
  ...sidecar,
  name: "client",
  kind: "proxyless",
  targets: ["echo.default.svc.cluster.local:7070"],
};

describe("compare", () => {
  const reference = new DiscoveryServer();
  const changed = new DiscoveryServer();
  const addresses: string[] = [];
  before(async () => {
    reference.setResources(resources("10s"));
    changed.setResources(resources("5s"));
    for (const server of [reference, changed]) {
      const { grpcPort } = await server.listen({ grpcAddr: "127.0.0.1:0" });
      addresses.push(`127.0.0.1:${grpcPort}`);
    }
  });
  after(async () => {
    await Promise.all([reference.close(0), changed.close(0)]);
  });

  const collectBoth = (p: ProxySpec) =>
    Promise.all(
      addresses.map((a) => collect(a, { kind: p.kind, node: proxyNode(p), targets: p.targets, quietMs: 300 })),
    ) as Promise<[Snapshot, Snapshot]>;

  for (const proxy of [sidecar, proxyless]) {
    test(`${proxy.kind}: the changed cluster differs at its field, everything else is identical`, async () => {
      const [istiod, sluice] = await collectBoth(proxy);
      const results = compareSnapshots(proxy.name, istiod, sluice);
      const byId = new Map(results.map((r) => [`${r.type} ${r.name}`, r]));
      assert.deepEqual([...byId.keys()].sort(), [
        "CDS echo",
        "EDS echo",
        "LDS echo.default.svc.cluster.local:7070",
        "RDS echo-route",
      ]);
      const cluster = byId.get("CDS echo");
      assert.equal(cluster?.outcome, "differs");
      assert.deepEqual(cluster?.paths, ['.connectTimeout: istiod "10s" | sluice "5s"']);
      for (const r of results.filter((r) => r.type !== "CDS")) assert.equal(r.outcome, "identical", r.id);

      const verdict = compareBaseline(new Map([["s", results]]), { s: [`${proxy.name} CDS echo`] }, true);
      assert.equal(verdict.failed, 1);
      assert.ok(verdict.lines.some((l) => l.startsWith(`  REGRESSED ${proxy.name} CDS echo: .connectTimeout`)));
      assert.equal(verdict.lines.at(-1), "compare: 3/4 resources identical (1 regressed)");

      // A resource istiod serves differently from run to run is never held against Sluice.
      const unstable = { s: { [`${proxy.name} CDS echo`]: "istiod varies" } };
      const lenient = compareBaseline(
        new Map([["s", results]]),
        { s: [`${proxy.name} CDS echo`] },
        true,
        undefined,
        unstable,
      );
      assert.equal(lenient.failed, 0);

      // The surfaces are ratcheted with the resources but not counted among them.
      const withSurfaces = compareBaseline(
        new Map([
          ["s", results],
          [SURFACES, [{ id: "version", proxy: "", type: "version", name: "", outcome: "differs", paths: [] }]],
        ]),
        {},
        false,
      );
      assert.equal(withSurfaces.lines.at(-1), "compare: 3/4 resources identical");
    });
  }

  test("a resource only one control plane serves is reported as such", () => {
    const one: Snapshot = new Map([["CDS", new Map([["a", { name: "a" }]])]]);
    const other: Snapshot = new Map([["CDS", new Map([["b", { name: "b" }]])]]);
    assert.deepEqual(
      compareSnapshots("p", one, other).map((r) => `${r.name} ${r.outcome}`),
      ["a only-istiod", "b only-sluice"],
    );
  });

  test("diffPaths names every differing leaf, in arrays by index", () => {
    assert.deepEqual(diffPaths({ a: [1, { b: 2 }], c: "x" }, { a: [1, { b: 3 }, 4], c: "x" }), [
      ".a[1].b: istiod 2 | sluice 3",
      ".a[2]: istiod (absent) | sluice 4",
    ]);
  });
});
