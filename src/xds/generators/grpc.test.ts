// The grpc generator's resources for a proxyless client and an xDS-enabled server: names as Istio's
// grpcgen answers them (short names, ports, subsets, server listeners), the DestinationRule parts
// gRPC reads, and every resource valid Envoy config (PGV).
import assert from "node:assert/strict";
import { test } from "node:test";
import { makeProxy } from "../../../test/support/cluster-fixtures.ts";
import { registry as apiRegistry, cluster, hcm, type listener, type route, tls, unpackAny } from "../../api/index.ts";
import { checkMessage } from "../../api/pgv/index.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../../config/index.ts";
import { XdsCache } from "../../configgen/index.ts";
import { type MeshPush, type ProxyNode, pushRequest } from "../../model/index.ts";
import { storePush, storeRegistry } from "../../model/store-push.ts";
import type { EndpointLookup, ServiceEndpoint } from "../../registry/index.ts";
import { ConfigStore, MemorySource } from "../../sources/index.ts";
import { GeneratorRegistry, type XdsResource } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { registerGrpcGenerators } from "./grpc.ts";

const HOST = "echo.default.svc.cluster.local";
const echo: ConfigObject = {
  apiVersion: "networking.istio.io/v1",
  kind: "ServiceEntry",
  metadata: { name: "echo", namespace: "default" },
  spec: {
    hosts: [HOST],
    addresses: ["240.0.0.10"],
    location: "MESH_INTERNAL",
    resolution: "STATIC",
    ports: [
      { number: 7070, name: "grpc", protocol: "GRPC" },
      { number: 7071, name: "grpc-admin", protocol: "GRPC" },
    ],
    endpoints: [
      { address: "10.0.0.5", ports: { grpc: 17070 }, labels: { version: "v1" } },
      { address: "10.0.0.6", ports: { grpc: 17070 }, labels: { version: "v2" } },
    ],
  },
};
const rule: ConfigObject = {
  apiVersion: "networking.istio.io/v1",
  kind: "DestinationRule",
  metadata: { name: "echo", namespace: "default" },
  spec: {
    host: HOST,
    trafficPolicy: {
      loadBalancer: { consistentHash: { httpHeaderName: "x-user" } },
      connectionPool: { http: { http2MaxRequests: 7, http1MaxPendingRequests: 3 }, tcp: { connectTimeout: "1s" } },
      outlierDetection: { consecutive5xxErrors: 3 },
    },
    subsets: [
      { name: "v1", labels: { version: "v1" } },
      { name: "v2", labels: { version: "v2" }, trafficPolicy: { loadBalancer: { simple: "LEAST_REQUEST" } } },
    ],
  },
};
const split: ConfigObject = {
  apiVersion: "networking.istio.io/v1",
  kind: "VirtualService",
  metadata: { name: "echo", namespace: "default" },
  spec: {
    hosts: [HOST],
    http: [
      {
        route: [
          { destination: { host: HOST, subset: "v1" }, weight: 90 },
          { destination: { host: HOST, subset: "v2" }, weight: 10 },
        ],
        timeout: "2s",
      },
    ],
  },
};

function pushOf(objects: ConfigObject[]): MeshPush {
  const store = new ConfigStore();
  const memory = new MemorySource(store);
  for (const o of objects) assert.deepEqual(memory.apply(o).errors, []);
  const mesh = DEFAULT_MESH_CONFIG;
  return storePush(store, storeRegistry(store, mesh, "cluster.local"), mesh, "cluster.local");
}

function grpcProxy(ip = "10.0.0.99"): ProxyNode {
  return {
    ...makeProxy({ ipAddresses: [ip] }),
    generator: "grpc",
    metadata: { raw: {}, NAMESPACE: "default", GENERATOR: "grpc" },
  };
}

/** The xDS cache the generators build with, as the discovery server's share one. */
const cache = new XdsCache();

function generate(
  push: MeshPush,
  typeUrl: string,
  names: string[],
  proxy = grpcProxy(),
  endpoints: EndpointLookup = { endpointsFor: () => [] },
): XdsResource[] {
  const registry = new GeneratorRegistry();
  registerGrpcGenerators(registry, endpoints, cache);
  const generator = registry.find(proxy, typeUrl);
  assert.ok(generator, typeUrl);
  const result = generator.generate(
    proxy,
    { typeUrl, resourceNames: new Set(names), wildcard: names.length === 0 },
    pushRequest({ full: true, push }),
  );
  assert.ok(result);
  for (const r of result.resources) {
    const schema = apiRegistry.getMessage(r.resource.$typeName);
    assert.ok(schema);
    assert.deepEqual(checkMessage(schema, r.resource), [], `${r.name} is valid Envoy config`);
  }
  return result.resources;
}

const names = (rs: XdsResource[]) => rs.map((r) => r.name);

test("client listeners echo each requested host form, per port, and name the FQDN's route", () => {
  const push = pushOf([echo]);
  const lds = generate(push, TypeUrl.Listener, [`${HOST}:7070`, "echo:7070", "unknown:80"]);
  assert.deepEqual(names(lds), ["echo:7070", `${HOST}:7070`]);
  const first = lds[0].resource as listener.Listener;
  const address = first.address?.address;
  assert.equal(address?.case === "socketAddress" ? address.value.address : "", "240.0.0.10");
  const manager =
    first.apiListener?.apiListener && unpackAny(first.apiListener.apiListener, hcm.HttpConnectionManagerSchema);
  assert.deepEqual(
    manager?.httpFilters.map((f) => f.name),
    ["envoy.filters.http.fault", "envoy.filters.http.router"],
  );
  assert.equal(
    manager?.routeSpecifier.case === "rds" ? manager.routeSpecifier.value.routeConfigName : "",
    `outbound|7070||${HOST}`,
  );
  // Forms of one host share their ports, as in Istio: a name without a port asks for every port.
  assert.deepEqual(names(generate(push, TypeUrl.Listener, ["echo:7070", "echo.default"])), [
    "echo:7070",
    "echo:7071",
    "echo.default:7070",
    "echo.default:7071",
  ]);
  // Forms of one host share their ports, as in Istio: a name without a port asks for every port.
  assert.deepEqual(names(generate(push, TypeUrl.Listener, ["echo:7070", "echo.default"])), [
    "echo:7070",
    "echo:7071",
    "echo.default:7070",
    "echo.default:7071",
  ]);
  // No names at all: every service port, under its FQDN.
  assert.deepEqual(names(generate(push, TypeUrl.Listener, [])), [`${HOST}:7070`, `${HOST}:7071`]);
});

test("a server listener only for a port the workload's services target, with one plaintext chain", () => {
  const push = pushOf([echo]);
  const served = "xds.istio.io/grpc/lds/inbound/10.0.0.5:17070";
  const lds = generate(
    push,
    TypeUrl.Listener,
    [served, "xds.istio.io/grpc/lds/inbound/10.0.0.5:9999"],
    grpcProxy("10.0.0.5"),
  );
  assert.deepEqual(names(lds), [served]);
  const server = lds[0].resource as listener.Listener;
  assert.equal(server.listenerFilters.length, 0);
  assert.deepEqual(
    server.filterChains.map((c) => [c.name, c.filters[0]?.name]),
    [["inbound-plaintext", "inbound-hcmplaintext"]],
  );
  const config = server.filterChains[0].filters[0].configType;
  const manager = config.case === "typedConfig" ? unpackAny(config.value, hcm.HttpConnectionManagerSchema) : undefined;
  const inline = manager?.routeSpecifier.case === "routeConfig" ? manager.routeSpecifier.value : undefined;
  assert.equal(inline?.virtualHosts[0]?.routes[0]?.action.case, "nonForwardingAction");
  assert.deepEqual(
    manager?.httpFilters.map((f) => f.name),
    ["envoy.filters.http.router"],
  );
});

test("clusters: only those asked for; ring hash and max_requests from the rule, subset policy merged; no outlier detection", () => {
  const push = pushOf([echo, rule]);
  const cds = generate(push, TypeUrl.Cluster, [
    `outbound|7070||${HOST}`,
    `outbound|7070|v2|${HOST}`,
    "outbound|80||nowhere.example",
  ]);
  assert.deepEqual(names(cds), [`outbound|7070||${HOST}`, `outbound|7070|v2|${HOST}`, "outbound|80||nowhere.example"]);
  const [byDefault, v2, unknown] = cds.map((r) => r.resource as cluster.Cluster);
  assert.equal(byDefault.lbPolicy, cluster.Cluster_LbPolicy.RING_HASH);
  assert.deepEqual(
    byDefault.circuitBreakers?.thresholds.map((t) => [t.maxRequests, t.maxPendingRequests]),
    [[7, undefined]],
  );
  assert.equal(byDefault.outlierDetection, undefined);
  assert.equal(byDefault.connectTimeout, undefined);
  assert.equal(byDefault.edsClusterConfig?.serviceName, `outbound|7070||${HOST}`);
  assert.equal(byDefault.altStatName, `outbound|7070||${HOST};`);
  // The subset's loadBalancer replaces the rule's: LEAST_REQUEST, no ring hash.
  assert.equal(v2.lbPolicy, cluster.Cluster_LbPolicy.LEAST_REQUEST);
  // A host no service has: a bare EDS cluster, as Istio sends it.
  assert.equal(unknown.lbPolicy, cluster.Cluster_LbPolicy.ROUND_ROBIN);
  assert.equal(unknown.circuitBreakers, undefined);
});

test("ISTIO_MUTUAL clusters check the identities of the service's endpoints, on every port (push.ServiceAccounts)", () => {
  const mtls = { ...rule, spec: { host: HOST, trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } } };
  const identity = (port: number) => `spiffe://cluster.local/ns/default/sa/echo-${port}`;
  const endpoints: EndpointLookup = {
    endpointsFor: (_host, port) => [{ identity: identity(port) } as ServiceEndpoint],
  };
  const [built] = generate(pushOf([echo, mtls]), TypeUrl.Cluster, [`outbound|7070||${HOST}`], grpcProxy(), endpoints);
  const socket = (built.resource as cluster.Cluster).transportSocket?.configType;
  const context = socket?.case === "typedConfig" ? unpackAny(socket.value, tls.UpstreamTlsContextSchema) : undefined;
  const validation = context?.commonTlsContext?.validationContextType;
  assert.deepEqual(
    validation?.case === "validationContext"
      ? validation.value.matchSubjectAltNames.map((m) => m.matchPattern.value)
      : [],
    [identity(7070), identity(7071)],
  );
});

test("routes: the service port's virtual host with port-carrying domains, the split and max_stream_duration", () => {
  const push = pushOf([echo, rule, split]);
  const [rds] = generate(push, TypeUrl.Route, [`outbound|7070||${HOST}`, "not-a-route"]);
  const config = rds.resource as route.RouteConfiguration;
  assert.equal(config.name, `outbound|7070||${HOST}`);
  assert.equal(config.virtualHosts.length, 1);
  const vhost = config.virtualHosts[0];
  assert.ok(vhost.domains.includes(`${HOST}:7070`) && vhost.domains.includes("echo:7070"), vhost.domains.join(" "));
  const action = vhost.routes[0].action;
  assert.equal(action.case, "route");
  const routeAction = action.value as route.RouteAction;
  assert.deepEqual(
    routeAction.clusterSpecifier.case === "weightedClusters"
      ? routeAction.clusterSpecifier.value.clusters.map((c) => [c.name, c.weight])
      : [],
    [
      [`outbound|7070|v1|${HOST}`, 90],
      [`outbound|7070|v2|${HOST}`, 10],
    ],
  );
  assert.equal(routeAction.maxStreamDuration?.maxStreamDuration?.seconds, 2n);
  assert.deepEqual(new Set(routeAction.hashPolicy.map((h) => h.policySpecifier.case)), new Set(["header"]));
});

test("clients alike share one route and cluster object per push (encoded once)", () => {
  const push = pushOf([echo, rule, split]);
  const a = grpcProxy("10.0.0.98");
  const b = grpcProxy("10.0.0.97");
  const route = (p: ProxyNode) => generate(push, TypeUrl.Route, [`outbound|7070||${HOST}`], p)[0].resource;
  const clusters = (p: ProxyNode) => generate(push, TypeUrl.Cluster, [`outbound|7070|v1|${HOST}`], p)[0].resource;
  assert.equal(route(a), route(b));
  assert.equal(clusters(a), clusters(b));
  // Other labels may select other VirtualServices (sourceLabels) and DestinationRules: their own objects.
  const labelled = { ...grpcProxy(), labels: { app: "other" } };
  assert.notEqual(route(labelled), route(a));
});
