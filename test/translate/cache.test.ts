// Proxies that read the same inputs share the generated objects of a push (the encoder encodes each
// object once); a new push, or a proxy that sees things differently, gets its own.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadState, translateProxy } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { buildClusters } from "../../src/xds/generators/cds.ts";
import { buildLoadAssignment } from "../../src/xds/generators/eds.ts";
import { buildRouteConfiguration } from "../../src/xds/generators/rds.ts";
import { storePush } from "../../src/xds/index.ts";

const MESH_DIR = fileURLToPath(new URL("../../examples/mesh", import.meta.url));
const REVIEWS_V1 = "outbound|9080|v1|reviews.bookinfo.svc.cluster.local";

test("clusters, load assignments and routes are shared per push by proxies that see them alike", () => {
  const mesh = DEFAULT_MESH_CONFIG;
  const loaded = loadState([MESH_DIR], mesh, "cluster.local");
  assert.ok(loaded.state, loaded.problems?.join("\n"));
  const { store, registry, push } = loaded.state;
  const proxy = (id: string, ip: string, labels: Record<string, string>) =>
    translateProxy({ type: "sidecar", ip, namespace: "bookinfo", labels, id }, mesh, "cluster.local");
  const a = proxy("productpage-1.bookinfo", "10.0.0.1", { app: "productpage" });
  const b = proxy("productpage-2.bookinfo", "10.0.0.2", { app: "productpage" });
  const other = proxy("ratings-1.bookinfo", "10.0.0.3", { app: "ratings" });

  const cluster = (p: typeof a, at = push) => buildClusters(at, p, registry).find((c) => c.name === REVIEWS_V1);
  assert.ok(cluster(a));
  assert.equal(cluster(a), cluster(b));
  assert.equal(buildLoadAssignment(push, a, registry, REVIEWS_V1), buildLoadAssignment(push, b, registry, REVIEWS_V1));
  assert.equal(buildRouteConfiguration(push, a, "9080"), buildRouteConfiguration(push, b, "9080"));
  // Another zone orders (inline DNS) endpoints by other priorities: its own clusters and assignments.
  const zoneB = { ...b, locality: { region: "local", zone: "zone-b", subZone: "" } };
  assert.notEqual(cluster(zoneB), cluster(a));
  assert.notEqual(
    buildLoadAssignment(push, zoneB, registry, REVIEWS_V1),
    buildLoadAssignment(push, a, registry, REVIEWS_V1),
  );
  // Other labels may match other VirtualService sourceLabels: their own routes.
  assert.notEqual(buildRouteConfiguration(push, a, "9080"), buildRouteConfiguration(push, other, "9080"));

  const next = storePush(store, registry, mesh, "cluster.local", push);
  assert.notEqual(cluster(a, next), cluster(a));
  assert.deepEqual(cluster(a, next), cluster(a));
});
