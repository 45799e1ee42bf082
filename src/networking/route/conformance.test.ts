// Istio's sample configs (../shared/conformance/istio/inputs): every VirtualService routes for a
// sidecar on every service port, and for every gateway server, with no Envoy constraint broken.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readInputs, staticInputs } from "../../../test/support/registry-inputs.ts";
import { proxyFixture } from "../../../test/support/route-cases.ts";
import { route } from "../../api/index.ts";
import { checkMessage } from "../../api/pgv/index.ts";
import type { Gateway } from "../../config/index.ts";
import { DEFAULT_MESH_CONFIG } from "../../config/index.ts";
import { gatewayRouteName } from "../../model/index.ts";
import { VirtualServiceIndex } from "../../model/virtual-service-index.ts";
import { ServiceRegistry } from "../../registry/index.ts";
import { buildSidecarRouteConfiguration } from "./config.ts";
import { buildGatewayRouteConfiguration } from "./gateway.ts";
import type { VirtualService } from "./types.ts";

function load() {
  const objects = readInputs();
  const services = new ServiceRegistry(staticInputs(objects)).services.list();
  const index = new VirtualServiceIndex(
    objects.filter((o): o is VirtualService => o.kind === "VirtualService"),
    DEFAULT_MESH_CONFIG.defaultVirtualServiceExportTo,
    "cluster.local",
  );
  const gateways = objects.filter((o): o is Gateway => o.kind === "Gateway");
  const namespaces = [...new Set(objects.map((o) => o.metadata.namespace ?? "default"))].sort();
  return { services, index, gateways, namespaces };
}

function violations(config: route.RouteConfiguration): string[] {
  return checkMessage(route.RouteConfigurationSchema, config).map((v) => `${config.name}: ${v.path} ${v.rule}`);
}

test("every sample VirtualService routes for sidecars on every service port within Envoy's constraints", () => {
  const { services, index, namespaces } = load();
  const ports = new Set([80, ...services.flatMap((s) => s.ports.map((p) => p.port))]);
  const problems: string[] = [];
  let vsRoutes = 0;
  for (const namespace of namespaces) {
    for (const port of ports) {
      const config = buildSidecarRouteConfiguration({
        routeName: String(port),
        proxy: proxyFixture({ namespace }),
        mesh: DEFAULT_MESH_CONFIG,
        services,
        virtualServices: index.forGateway(namespace, "mesh"),
      });
      assert.ok(config);
      problems.push(...violations(config));
      vsRoutes += config.virtualHosts.flatMap((v) => v.routes).filter((r) => r.metadata !== undefined).length;
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(vsRoutes > 80, `VirtualService routes built: ${vsRoutes}`);
});

test("every sample Gateway server with HTTP routes gets a route configuration within Envoy's constraints", () => {
  const { services, index, gateways } = load();
  const byHost = new Map(services.map((s) => [s.hostname, s]));
  const problems: string[] = [];
  let vhosts = 0;
  for (const gw of gateways) {
    const name = `${gw.metadata.namespace}/${gw.metadata.name}`;
    for (const server of gw.spec?.servers ?? []) {
      const routeName = gatewayRouteName(server, server.port.number, gw);
      if (routeName === "") continue;
      const config = buildGatewayRouteConfiguration({
        routeName,
        proxy: proxyFixture({ type: "router", namespace: gw.metadata.namespace }),
        mesh: DEFAULT_MESH_CONFIG,
        servers: [{ gatewayName: name, server }],
        virtualServicesForGateway: (g) => index.forGateway(gw.metadata.namespace ?? "", g),
        lookupService: (h) => byHost.get(h),
      });
      problems.push(...violations(config));
      vhosts += config.virtualHosts.filter((v) => !v.name.startsWith("blackhole:")).length;
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(vhosts > 8, `gateway virtual hosts built: ${vhosts}`);
});
