// The load benchmark's delta sidecar stream against a discovery server with VHDS on
// (SLUICE_ENABLE_VHDS): it subscribes VHDS to the route configurations carrying `vhds` and counts the
// virtual hosts as part of being synced, and a VirtualService change reaches it as the changed
// VirtualHost alone.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  changedRoutePrefix,
  hostnameOf,
  type MeshShape,
  proxyIdentity,
  writeMesh,
  writeVirtualServiceChange,
} from "../bench/load/mesh.ts";
import { SidecarStream } from "../bench/load/sidecar-stream.ts";
import { routeUsesVhds } from "../bench/load/wire.ts";
import { core, discovery, route, unpackAny } from "../src/api/index.ts";
import { ConfigStore, FileSource } from "../src/sources/index.ts";
import { type Discovery, TypeUrl } from "../src/xds/index.ts";
import { anyViolations } from "./support/pgv.ts";
import { startStoreDiscovery } from "./support/store-discovery.ts";
import { waitFor } from "./support/xds-fixtures.ts";

const SHAPE: MeshShape = { kind: "unscoped", services: 20, endpoints: 1 };

let dir: string;
let files: FileSource;
let server: Discovery;
const store = new ConfigStore();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "bench-load-vhds-test-"));
  writeMesh(dir, SHAPE);
  files = new FileSource({ dir, store, debounceMs: 10 });
  await files.start();
  server = await startStoreDiscovery(store, {
    debounce: { afterMs: 10, maxMs: 1000, edsDebounce: true },
    features: { vhds: true },
  });
});

after(async () => {
  await server.stop(0);
  await files.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("a delta sidecar syncs RDS with vhds and its VirtualHosts, then gets a VirtualService change as one VirtualHost", async () => {
  const responses: discovery.DeltaDiscoveryResponse[] = [];
  let synced = false;
  const stream = new SidecarStream(proxyIdentity(SHAPE, 1), "delta", {
    onResponse: (_stream, _type, bytes) => responses.push(fromBinary(discovery.DeltaDiscoveryResponseSchema, bytes)),
    onSynced: () => {
      synced = true;
    },
    onRetry: () => {},
  });
  stream.open(`127.0.0.1:${server.ports.grpcPort}`);
  try {
    await waitFor(() => synced, "the stream synced");
    const types = responses.map((r) => r.typeUrl);
    // Synced only once the virtual hosts came, after the route configuration that asked for them.
    assert.equal(types.at(-1), TypeUrl.VirtualHost);
    assert.ok(types.indexOf(TypeUrl.Route) < types.indexOf(TypeUrl.VirtualHost), types.join(" "));
    const rds = responses.find((r) => r.typeUrl === TypeUrl.Route);
    const config = rds?.resources[0]?.resource && unpackAny(rds.resources[0].resource, route.RouteConfigurationSchema);
    assert.equal(config?.name, "80");
    assert.ok(config?.vhds, "RDS 80 carries vhds");
    const vhds = responses.filter((r) => r.typeUrl === TypeUrl.VirtualHost);
    const hosts = vhds.flatMap((r) => r.resources.map((x) => x.name));
    // Unscoped: every service's virtual host.
    assert.equal(hosts.length, SHAPE.services);
    assert.ok(hosts.includes(`80/${hostnameOf(0)}:80`));
    for (const r of vhds.flatMap((x) => x.resources)) {
      assert.ok(r.resource, r.name);
      assert.deepEqual(anyViolations(r.resource), [], r.name);
    }

    const synchronized = responses.length;
    const marker = changedRoutePrefix(1);
    writeVirtualServiceChange(dir, 1);
    const hasMarker = (r: discovery.DeltaDiscoveryResponse) =>
      Buffer.from(toBinary(discovery.DeltaDiscoveryResponseSchema, r)).includes(marker);
    await waitFor(() => responses.slice(synchronized).some(hasMarker), "the changed route");
    const change = responses.slice(synchronized);
    assert.deepEqual(
      change.map((r) => r.typeUrl),
      [TypeUrl.VirtualHost],
    );
    assert.deepEqual(
      change[0]?.resources.map((r) => r.name),
      [`80/${hostnameOf(0)}:80`],
    );
  } finally {
    stream.close();
  }
});

test("the wire reader sees whether a route configuration carries vhds", () => {
  const virtualHosts = [{ name: "allow_any", domains: ["*"] }];
  const inline = create(route.RouteConfigurationSchema, { name: "80", virtualHosts });
  const withVhds = create(route.RouteConfigurationSchema, {
    name: "80",
    virtualHosts,
    vhds: {
      configSource: { configSourceSpecifier: { case: "ads", value: create(core.AggregatedConfigSourceSchema) } },
    },
  });
  assert.equal(routeUsesVhds(toBinary(route.RouteConfigurationSchema, inline)), false);
  assert.equal(routeUsesVhds(toBinary(route.RouteConfigurationSchema, withVhds)), true);
});
