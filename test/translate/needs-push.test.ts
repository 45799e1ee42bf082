// Full pushes naming only config kinds a type never reads leave that type alone, as Istio's
// cds/lds/rdsNeedsPush: a Gateway change is nothing to a sidecar's clusters and listeners but changes
// a router's listeners; an AuthorizationPolicy change touches listeners, not clusters or routes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadState, type ProxySpec, translateProxy } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG, kindKey } from "../../src/config/index.ts";
import { type ConfigKey, pushRequest } from "../../src/model/index.ts";
import type { Generator, WatchedResource } from "../../src/xds/generator.ts";
import { cdsGenerator } from "../../src/xds/generators/cds.ts";
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

const key = (group: string, kind: string): ConfigKey => ({
  kind: kindKey(group, kind),
  namespace: "bookinfo",
  name: "x",
});
const GATEWAY = key("networking.istio.io", "Gateway");
const AUTHZ = key("security.istio.io", "AuthorizationPolicy");
const VIRTUAL_SERVICE = key("networking.istio.io", "VirtualService");

test("CDS, LDS and RDS answer only pushes that can change them", () => {
  const loaded = loadState([MESH_DIR], mesh, "cluster.local");
  assert.ok(loaded.state, loaded.problems?.join("\n"));
  const { push, registry } = loaded.state;
  const watched = (typeUrl: string, names: string[] = []): WatchedResource => ({
    typeUrl,
    resourceNames: new Set(names),
    wildcard: names.length === 0,
  });
  /** Which of CDS, LDS, RDS answer a push of `changed` for the proxy. */
  const answering = (spec: ProxySpec, changed: ConfigKey[], forced = false) => {
    const proxy = translateProxy(spec, mesh, "cluster.local");
    const req = pushRequest({ full: true, push, configsUpdated: changed, forced });
    const types: [string, Generator, WatchedResource][] = [
      ["CDS", cdsGenerator(registry), watched(TypeUrl.Cluster)],
      ["LDS", ldsGenerator(registry), watched(TypeUrl.Listener)],
      ["RDS", rdsGenerator(), watched(TypeUrl.Route, [spec.type === "router" ? "http.8080" : "9080"])],
    ];
    return types.filter(([, gen, w]) => gen.generate(proxy, w, req) !== undefined).map(([name]) => name);
  };
  assert.deepEqual(answering(SIDECAR, []), ["CDS", "LDS", "RDS"]);
  // Istio's RDS does not skip Gateways, even for sidecars.
  assert.deepEqual(answering(SIDECAR, [GATEWAY]), ["RDS"]);
  assert.deepEqual(answering(ROUTER, [GATEWAY]), ["LDS", "RDS"]);
  assert.deepEqual(answering(SIDECAR, [AUTHZ]), ["LDS"]);
  assert.deepEqual(answering(SIDECAR, [AUTHZ, VIRTUAL_SERVICE]), ["CDS", "LDS", "RDS"]);
  assert.deepEqual(answering(SIDECAR, [GATEWAY], true), ["CDS", "LDS", "RDS"]);
});
