// EnvoyFilters through the generators: a push's clusters, listeners and routes are shared between
// proxies, and patches apply per proxy on copies: a filter selecting one workload changes its config
// only, whichever proxy is built first, and the config dump (`sluice x translate`) shows it.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { cluster, hcm, listener, packAny, route, unpackAny } from "../../src/api/index.ts";
import { loadState, translateProxy } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { buildClusters, buildListeners, buildRouteConfiguration, XdsCache } from "../../src/configgen/index.ts";
import { pushRequest } from "../../src/model/index.ts";
import { ecdsGenerator } from "../../src/xds/generators/ecds.ts";
import { anyViolations } from "../support/pgv.ts";

/** The xDS cache these tests build with, as the discovery server's generators share one. */
const cache = new XdsCache();

const dir = mkdtempSync(join(tmpdir(), "sluice-envoyfilter-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const CONFIG = `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: shop}
spec: {clusterIP: 10.96.0.40, ports: [{name: http, port: 9080}], selector: {app: reviews}}
---
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: ratings-only, namespace: shop}
spec:
  workloadSelector: {labels: {app: ratings}}
  configPatches:
  - applyTo: CLUSTER
    match: {context: SIDECAR_OUTBOUND, cluster: {service: reviews.shop.svc.cluster.local}}
    patch: {operation: MERGE, value: {perConnectionBufferLimitBytes: 4096}}
  - applyTo: HTTP_ROUTE
    match: {context: SIDECAR_OUTBOUND, routeConfiguration: {portNumber: 9080}}
    patch: {operation: INSERT_FIRST, value: {name: health, match: {prefix: /healthz}, directResponse: {status: 200}}}
  - applyTo: HTTP_FILTER
    match:
      context: SIDECAR_INBOUND
      listener: {filterChain: {filter: {name: envoy.filters.network.http_connection_manager, subFilter: {name: envoy.filters.http.router}}}}
    patch:
      operation: INSERT_BEFORE
      value: {name: envoy.filters.http.grpc_web, typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.grpc_web.v3.GrpcWeb}}
---
apiVersion: v1
kind: Service
metadata: {name: ratings, namespace: shop}
spec: {clusterIP: 10.96.0.41, ports: [{name: http, port: 9080}], selector: {app: ratings}}
`;

test("a workload's EnvoyFilter patches its config only, whatever the build order", () => {
  const file = join(dir, "config.yaml");
  writeFileSync(file, CONFIG);
  const loaded = loadState([file], DEFAULT_MESH_CONFIG, "cluster.local");
  assert.ok(loaded.state, loaded.problems?.join("\n"));
  const { push, registry } = loaded.state;
  const proxy = (app: string, ip: string) =>
    translateProxy(
      { type: "sidecar", ip, namespace: "shop", labels: { app }, id: `${app}.shop` },
      DEFAULT_MESH_CONFIG,
      "cluster.local",
    );
  const reviews = proxy("reviews", "10.0.0.7");
  const ratings = proxy("ratings", "10.0.0.8");
  const reviewsCluster = (p: typeof reviews) =>
    buildClusters(push, p, registry, cache).find((c) => c.name === "outbound|9080||reviews.shop.svc.cluster.local");
  const firstRoute = (p: typeof reviews) =>
    buildRouteConfiguration(push, p, "9080", cache)?.virtualHosts[0]?.routes[0]?.name;
  const inboundFilters = (p: typeof reviews) =>
    buildListeners(push, p, registry, cache)
      .filter((l) => l.name === "virtualInbound")
      .flatMap((l) => l.filterChains)
      .flatMap((fc) => fc.filters)
      .flatMap((f) =>
        f.configType.case === "typedConfig" ? [unpackAny(f.configType.value, hcm.HttpConnectionManagerSchema)] : [],
      )
      .flatMap((m) => m?.httpFilters.map((h) => h.name) ?? []);

  // The patched proxy first, then the other one: shared resources were not mutated.
  assert.equal(reviewsCluster(ratings)?.perConnectionBufferLimitBytes, 4096);
  assert.equal(reviewsCluster(reviews)?.perConnectionBufferLimitBytes, undefined);
  assert.equal(firstRoute(ratings), "health");
  assert.notEqual(firstRoute(reviews), "health");
  assert.ok(inboundFilters(ratings).includes("envoy.filters.http.grpc_web"));
  assert.ok(!inboundFilters(reviews).includes("envoy.filters.http.grpc_web"));
  assert.equal(reviewsCluster(ratings)?.perConnectionBufferLimitBytes, 4096);

  // Everything the patched proxy gets passes Envoy's constraints.
  for (const c of buildClusters(push, ratings, registry, cache))
    assert.deepEqual(anyViolations(packAny(cluster.ClusterSchema, c)), []);
  for (const l of buildListeners(push, ratings, registry, cache))
    assert.deepEqual(anyViolations(packAny(listener.ListenerSchema, l)), []);
  const rc = buildRouteConfiguration(push, ratings, "9080", cache);
  assert.ok(rc);
  assert.deepEqual(anyViolations(packAny(route.RouteConfigurationSchema, rc)), []);
});

test("ECDS serves the extension configs EnvoyFilter EXTENSION_CONFIG patches add, by the names asked for", async () => {
  const file = join(dir, "ecds.yaml");
  writeFileSync(
    file,
    `apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: ecds, namespace: istio-system}
spec:
  configPatches:
  - applyTo: EXTENSION_CONFIG
    patch:
      operation: ADD
      value: {name: shop-grpc-web, typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.grpc_web.v3.GrpcWeb}}
  - applyTo: EXTENSION_CONFIG
    patch:
      operation: ADD
      value: {name: not-asked, typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.grpc_web.v3.GrpcWeb}}
`,
  );
  const loaded = loadState([file], DEFAULT_MESH_CONFIG, "cluster.local");
  assert.ok(loaded.state, loaded.problems?.join("\n"));
  const proxy = translateProxy(
    { type: "sidecar", ip: "10.0.0.7", namespace: "shop", labels: { app: "reviews" }, id: "reviews.shop" },
    DEFAULT_MESH_CONFIG,
    "cluster.local",
  );
  const generated = await ecdsGenerator(cache).generate(
    proxy,
    {
      typeUrl: "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig",
      resourceNames: new Set(["shop-grpc-web"]),
      wildcard: false,
    },
    pushRequest({ full: true, push: loaded.state.push }),
  );
  assert.deepEqual(
    generated?.resources.map((r) => r.name),
    ["shop-grpc-web"],
  );
});
