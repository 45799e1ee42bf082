// Full pushes naming only config kinds a type never reads leave that type alone, as Istio's
// cds/lds/rds/edsNeedsPush: a Gateway change is nothing to a sidecar's clusters and listeners but changes
// a router's listeners; an AuthorizationPolicy change touches listeners, not clusters, routes or
// endpoints; a VirtualService change is nothing to load assignments.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadState, type ProxySpec, translateProxy } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG, kindKey, type ObjectKey } from "../../src/config/index.ts";
import { XdsCache } from "../../src/configgen/index.ts";
import { pushRequest } from "../../src/model/index.ts";
import type { Generator, WatchedResource } from "../../src/xds/generator.ts";
import { cdsGenerator } from "../../src/xds/generators/cds.ts";
import { edsGenerator } from "../../src/xds/generators/eds.ts";
import { ldsGenerator } from "../../src/xds/generators/lds.ts";
import { rdsGenerator } from "../../src/xds/generators/rds.ts";
import { TypeUrl } from "../../src/xds/index.ts";

const MESH_DIR = fileURLToPath(new URL("../../examples/mesh", import.meta.url));
const mesh = DEFAULT_MESH_CONFIG;
const SIDECAR: ProxySpec = { type: "sidecar", ip: "10.0.0.1", namespace: "bookinfo", labels: {}, id: "a.bookinfo" };
const ROUTER: ProxySpec = {
  type: "router",
  ip: "10.0.0.2",
  namespace: "istio-system",
  labels: { istio: "ingressgateway" },
  id: "gw.istio-system",
};

const key = (group: string, kind: string): ObjectKey => ({
  kind: kindKey(group, kind),
  namespace: "bookinfo",
  name: "x",
});
const GATEWAY = key("networking.istio.io", "Gateway");
const AUTHZ = key("security.istio.io", "AuthorizationPolicy");
const VIRTUAL_SERVICE = key("networking.istio.io", "VirtualService");
const DESTINATION_RULE = key("networking.istio.io", "DestinationRule");
const TELEMETRY = key("telemetry.istio.io", "Telemetry");
const PRODUCTPAGE = "outbound|9080||productpage.bookinfo.svc.cluster.local";
/** The key an endpoint push names a service by. */
const PRODUCTPAGE_ENDPOINTS: ObjectKey = {
  kind: kindKey("networking.istio.io", "ServiceEntry"),
  namespace: "bookinfo",
  name: "productpage.bookinfo.svc.cluster.local",
};

test("CDS, LDS, RDS and EDS answer only pushes that can change them", () => {
  const loaded = loadState([MESH_DIR], mesh, "cluster.local");
  assert.ok(loaded.state, loaded.problems?.join("\n"));
  const { push, registry } = loaded.state;
  const watched = (typeUrl: string, names: string[] = []): WatchedResource => ({
    typeUrl,
    resourceNames: new Set(names),
    wildcard: names.length === 0,
  });
  /** Which of CDS, LDS, RDS answer a push of `changed` for the proxy. */
  const answering = (spec: ProxySpec, changed: ObjectKey[], forced = false, full = true) => {
    const proxy = translateProxy(spec, mesh, "cluster.local");
    const req = pushRequest({ full, push, configsUpdated: changed, forced });
    const cache = new XdsCache();
    const types: [string, Generator, WatchedResource][] = [
      ["CDS", cdsGenerator(registry, cache), watched(TypeUrl.Cluster)],
      ["LDS", ldsGenerator(registry, cache), watched(TypeUrl.Listener)],
      ["RDS", rdsGenerator(cache), watched(TypeUrl.Route, [spec.type === "router" ? "http.8080" : "9080"])],
      ["EDS", edsGenerator(registry, cache), watched(TypeUrl.Endpoint, [PRODUCTPAGE])],
    ];
    return types.filter(([, gen, w]) => gen.generate(proxy, w, req) !== undefined).map(([name]) => name);
  };
  assert.deepEqual(answering(SIDECAR, []), ["CDS", "LDS", "RDS", "EDS"]);
  // Istio's RDS does not skip Gateways, even for sidecars.
  assert.deepEqual(answering(SIDECAR, [GATEWAY]), ["RDS"]);
  assert.deepEqual(answering(ROUTER, [GATEWAY]), ["LDS", "RDS"]);
  assert.deepEqual(answering(SIDECAR, [AUTHZ]), ["LDS"]);
  assert.deepEqual(answering(SIDECAR, [VIRTUAL_SERVICE]), ["CDS", "LDS", "RDS"]);
  assert.deepEqual(answering(SIDECAR, [AUTHZ, VIRTUAL_SERVICE]), ["CDS", "LDS", "RDS"]);
  assert.deepEqual(answering(SIDECAR, [TELEMETRY, VIRTUAL_SERVICE, GATEWAY]), ["CDS", "LDS", "RDS"]);
  // A DestinationRule changes subsets and load balancing: EDS too.
  assert.deepEqual(answering(SIDECAR, [DESTINATION_RULE, VIRTUAL_SERVICE]), ["CDS", "LDS", "RDS", "EDS"]);
  assert.deepEqual(answering(SIDECAR, [GATEWAY], true), ["CDS", "LDS", "RDS", "EDS"]);
  assert.deepEqual(answering(SIDECAR, [VIRTUAL_SERVICE], true), ["CDS", "LDS", "RDS", "EDS"]);
  // An endpoint push concerns EDS alone.
  assert.deepEqual(answering(SIDECAR, [PRODUCTPAGE_ENDPOINTS], false, false), ["EDS"]);
});
