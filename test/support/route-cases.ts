// Test support for the route builders: fixtures (proxy, service) with Istio's defaults, and the
// golden-case runner. A case file `src/networking/route/testdata/<name>.in.yaml` holds:
//   proxy: {namespace, labels, dnsDomain, generator}      (a sidecar in `default` when omitted)
//   mesh: MeshConfig overrides
//   services: [{hostname, namespace, ports: [{port, protocol, name}], addresses, resolution, registry, externalName}]
//   virtualServices: [VirtualService objects; indexed as the push context does (names resolved, delegates merged, oldest first)]
//   delegates: [delegate VirtualServices (no hosts)]
//   sidecar: {routeNames: ["8080", ...], outboundTrafficPolicy}
//   gateway: {routeName, servers: [{gatewayName: ns/name, server: {...}}]}
// and `testdata/<name>.out.yaml` the RouteConfigurations built, as proto3 JSON.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { toJson } from "@bufbuild/protobuf";
import { registry, route } from "../../src/api/index.ts";
import { checkMessage } from "../../src/api/pgv/index.ts";
import type { Destination, GatewayServers, MeshConfig } from "../../src/config/index.ts";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import type { ProxyNode } from "../../src/model/proxy.ts";
import { VirtualServiceIndex } from "../../src/model/virtual-service-index.ts";
import { buildSidecarRouteConfiguration } from "../../src/networking/route/config.ts";
import { buildGatewayRouteConfiguration } from "../../src/networking/route/gateway.ts";
import { MESH_GATEWAY, type VirtualService } from "../../src/networking/route/types.ts";
import type { OutboundTrafficMode } from "../../src/networking/route/vhost.ts";
import type { Service, ServicePort } from "../../src/registry/index.ts";
import { assertGolden, readGoldenInput } from "./golden.ts";
import { testService } from "./registry-inputs.ts";

export interface ProxyFixture {
  namespace?: string;
  labels?: Record<string, string>;
  dnsDomain?: string;
  generator?: string;
  type?: "sidecar" | "router";
}

export function proxyFixture(p: ProxyFixture = {}): ProxyNode {
  const namespace = p.namespace ?? "default";
  const type = p.type ?? "sidecar";
  return {
    type,
    id: `app.${namespace}`,
    nodeId: `${type}~10.1.0.5~app.${namespace}~${namespace}.svc.cluster.local`,
    dnsDomain: p.dnsDomain ?? `${namespace}.svc.cluster.local`,
    ipAddresses: ["10.1.0.5"],
    configNamespace: namespace,
    labels: p.labels ?? {},
    clusterId: "Kubernetes",
    locality: { region: "", zone: "", subZone: "" },
    generator: p.generator,
    metadata: { NAMESPACE: namespace, raw: {} },
    serviceCluster: "",
    userAgent: "",
  };
}

export interface ServiceFixture {
  hostname: string;
  namespace?: string;
  ports: Partial<ServicePort>[];
  addresses?: string[];
  resolution?: Service["resolution"];
  registry?: Service["registry"];
  externalName?: string;
}

export function serviceFixture(s: ServiceFixture): Service {
  const name = s.hostname.split(".")[0];
  return testService({
    hostname: s.hostname,
    namespace: s.namespace ?? "default",
    name,
    objectName: name,
    registry: s.registry ?? "Kubernetes",
    ports: s.ports.map((p) => ({
      name: p.name ?? `http-${p.port}`,
      port: p.port ?? 80,
      protocol: p.protocol ?? "HTTP",
      targetPort: p.targetPort ?? 0,
    })),
    addresses: s.addresses ?? [],
    resolution: s.resolution ?? (s.externalName ? "Alias" : "ClientSideLB"),
    kubernetesType: s.externalName ? "ExternalName" : "ClusterIP",
    clusterId: "Kubernetes",
    externalName: s.externalName ?? "",
  });
}

export interface GoldenCase {
  proxy?: ProxyFixture;
  mesh?: MeshConfig;
  services?: ServiceFixture[];
  virtualServices?: VirtualService[];
  delegates?: VirtualService[];
  sidecar?: {
    routeNames: string[];
    outboundTrafficPolicy?: { mode?: OutboundTrafficMode; egressProxy?: Destination };
  };
  gateway?: { routeName: string; servers: { gatewayName: string; server: GatewayServers }[] };
}

// The route builders' goldens, beside their unit tests.
const dir = fileURLToPath(new URL("../../src/networking/route/testdata", import.meta.url));

/** Every Envoy constraint the route configuration breaks (none expected). */
export function assertValid(config: route.RouteConfiguration): void {
  assert.deepEqual(checkMessage(route.RouteConfigurationSchema, config), []);
}

/**
 * Builds the route configurations of `testdata/<name>.in.yaml`, checks each against Envoy's
 * constraints and the whole against `testdata/<name>.out.yaml`, and returns them by name.
 */
export function runGoldenCase(name: string): Map<string, route.RouteConfiguration> {
  const c = readGoldenInput(dir, name) as GoldenCase;
  const mesh: MeshConfig = { ...DEFAULT_MESH_CONFIG, ...c.mesh };
  const proxy = proxyFixture(c.proxy);
  const services = (c.services ?? []).map(serviceFixture);
  // As the push context gives them: short names resolved, delegates merged, oldest first.
  const index = new VirtualServiceIndex(
    [...(c.virtualServices ?? []), ...(c.delegates ?? [])],
    mesh.defaultVirtualServiceExportTo,
    "cluster.local",
  );
  const virtualServices = index.forGateway(proxy.configNamespace, MESH_GATEWAY);
  const out = new Map<string, route.RouteConfiguration>();
  for (const routeName of c.sidecar?.routeNames ?? []) {
    const config = buildSidecarRouteConfiguration({
      routeName,
      proxy,
      mesh,
      services,
      virtualServices,
      outboundTrafficPolicy: c.sidecar?.outboundTrafficPolicy,
    });
    assert.ok(config, `route ${routeName} built`);
    out.set(routeName, config);
  }
  if (c.gateway) {
    const byHost = new Map(services.map((s) => [s.hostname, s]));
    const config = buildGatewayRouteConfiguration({
      routeName: c.gateway.routeName,
      proxy,
      mesh,
      servers: c.gateway.servers,
      virtualServicesForGateway: (gw) => index.forGateway(proxy.configNamespace, gw),
      lookupService: (h) => byHost.get(h),
    });
    out.set(c.gateway.routeName, config);
  }
  for (const config of out.values()) assertValid(config);
  assertGolden(
    dir,
    name,
    [...out.values()].map((config) => toJson(route.RouteConfigurationSchema, config, { registry })),
  );
  return out;
}

/** The virtual host named `name` in a route configuration. */
export function vhostNamed(config: route.RouteConfiguration | undefined, name: string): route.VirtualHost {
  const vh = config?.virtualHosts.find((v) => v.name === name);
  assert.ok(vh, `virtual host ${name} in ${config?.name}: ${config?.virtualHosts.map((v) => v.name).join(", ")}`);
  return vh;
}

/** The route action of a route (fails for redirects and direct responses). */
export function routeAction(r: route.Route | undefined): route.RouteAction {
  assert.ok(r, "route exists");
  assert.equal(r.action.case, "route", `route ${r.name} forwards`);
  return r.action.value as route.RouteAction;
}
