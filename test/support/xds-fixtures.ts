// Test generators and a server harness for the xDS protocol tests. Generators read resources from
// the push context's snapshot, so a test changes config by pushing a new snapshot.
import assert from "node:assert/strict";
import { create, type DescMessage, type Message, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { AnySchema, anyPack, DurationSchema } from "@bufbuild/protobuf/wkt";
import { cluster, core, endpoint, hcm, listener, type route, router } from "../../src/api/index.ts";
import { checkMessage } from "../../src/api/pgv/index.ts";
import type { ProxyNode } from "../../src/model/proxy.ts";
import { newPushContext, type PushContext, pushRequest } from "../../src/model/push-context.ts";
import { type Generator, GeneratorRegistry, TypeUrl, XdsServer, type XdsServerOptions } from "../../src/xds/index.ts";
import type { DeltaClient, SotwClient } from "./ads-client.ts";

/** Resources per type URL, the same for every proxy or chosen per proxy. */
export type TestSnapshot = Record<string, Message[] | ((proxy: ProxyNode) => Message[])>;

/** Serves `snapshot[typeUrl]`, filtered to the subscribed names unless the watch is wildcard. */
export function snapshotGenerator(typeUrl: string): Generator {
  return {
    generate(proxy, watched, req) {
      const entry = (req.push.snapshot as TestSnapshot)[typeUrl] ?? [];
      const all = typeof entry === "function" ? entry(proxy) : entry;
      const resources = all
        .map((m) => ({ name: resourceName(m), resource: m }))
        .filter((r) => watched.wildcard || watched.resourceNames.has(r.name));
      return { resources };
    },
  };
}

/** The xDS name of a resource: `cluster_name` for a ClusterLoadAssignment, `name` otherwise. */
export function resourceName(m: Message): string {
  if ("clusterName" in m && typeof m.clusterName === "string") return m.clusterName;
  return "name" in m && typeof m.name === "string" ? m.name : "";
}

/** A type whose requests always get an answer: sent after another request, its response proves that request got none. */
export const BARRIER_TYPE = "type.googleapis.com/sluice.test.Barrier";

const barrierGenerator: Generator = {
  generate(_proxy, watched) {
    const names = watched.resourceNames.size > 0 ? [...watched.resourceNames] : ["barrier"];
    return {
      resources: names.map((name) => ({
        name,
        resource: create(AnySchema, { typeUrl: BARRIER_TYPE, value: new TextEncoder().encode(name) }),
      })),
    };
  },
};

export function testGenerators(): GeneratorRegistry {
  const registry = new GeneratorRegistry();
  for (const t of [TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route]) {
    registry.register(t, snapshotGenerator(t));
  }
  registry.register(BARRIER_TYPE, barrierGenerator);
  return registry;
}

let barrierCounter = 0;

/** Asserts that the stream sent nothing since the last read: the next response is the barrier's. */
export async function assertNoResponse(client: SotwClient): Promise<void> {
  client.request({ typeUrl: BARRIER_TYPE, resourceNames: [`b${++barrierCounter}`] });
  const res = await client.next();
  assert.equal(res.typeUrl, BARRIER_TYPE, `expected no response, got one for ${res.typeUrl}`);
}

export async function assertNoDeltaResponse(client: DeltaClient): Promise<void> {
  client.request({ typeUrl: BARRIER_TYPE, resourceNamesSubscribe: [`b${++barrierCounter}`] });
  const res = await client.next();
  assert.equal(res.typeUrl, BARRIER_TYPE, `expected no response, got one for ${res.typeUrl}`);
}

/** Asserts `message` passes Envoy's protoc-gen-validate rules, and returns it. */
export function valid<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): MessageShape<Desc> {
  assert.deepEqual(checkMessage(schema, message), [], `${schema.typeName} violates PGV rules`);
  return message;
}

/** An EDS cluster fed over ADS, checked against Envoy's rules. */
/** The router, last in a connection manager's HTTP filters. */
export const ROUTER_HTTP_FILTER: MessageInitShape<typeof hcm.HttpFilterSchema> = {
  name: "envoy.filters.http.router",
  configType: { case: "typedConfig", value: anyPack(router.RouterSchema, create(router.RouterSchema)) },
};

/** A gRPC client's api_listener `name` over the given connection manager (stat prefix `name`); both PGV-checked. */
export function apiListener(
  name: string,
  manager: MessageInitShape<typeof hcm.HttpConnectionManagerSchema>,
): listener.Listener {
  const checked = valid(
    hcm.HttpConnectionManagerSchema,
    create(hcm.HttpConnectionManagerSchema, { statPrefix: name, ...manager }),
  );
  return valid(
    listener.ListenerSchema,
    create(listener.ListenerSchema, {
      name,
      apiListener: { apiListener: anyPack(hcm.HttpConnectionManagerSchema, checked) },
    }),
  );
}

/** Route configuration `name`: one virtual host (every domain) sending every call to `clusterName`. */
export function routeAllTo(
  name: string,
  virtualHost: string,
  clusterName: string,
): MessageInitShape<typeof route.RouteConfigurationSchema> {
  return {
    name,
    virtualHosts: [
      {
        name: virtualHost,
        domains: ["*"],
        routes: [
          {
            match: { pathSpecifier: { case: "prefix", value: "" } },
            action: { case: "route", value: { clusterSpecifier: { case: "cluster", value: clusterName } } },
          },
        ],
      },
    ],
  };
}

export function edsCluster(name: string, connectTimeoutSeconds = 1): cluster.Cluster {
  return valid(
    cluster.ClusterSchema,
    create(cluster.ClusterSchema, {
      name,
      clusterDiscoveryType: { case: "type", value: cluster.Cluster_DiscoveryType.EDS },
      edsClusterConfig: { edsConfig: { configSourceSpecifier: { case: "ads", value: {} } } },
      connectTimeout: create(DurationSchema, { seconds: BigInt(connectTimeoutSeconds) }),
    }),
  );
}

/** A ClusterLoadAssignment with one endpoint per address. */
export function loadAssignment(clusterName: string, addresses: [string, number][]): endpoint.ClusterLoadAssignment {
  return valid(
    endpoint.ClusterLoadAssignmentSchema,
    create(endpoint.ClusterLoadAssignmentSchema, {
      clusterName,
      endpoints: [
        {
          locality: create(core.LocalitySchema, { region: "r1" }),
          loadBalancingWeight: 1,
          lbEndpoints: addresses.map(
            ([address, port]): MessageInitShape<typeof endpoint.LbEndpointSchema> => ({
              hostIdentifier: {
                case: "endpoint",
                value: {
                  address: {
                    address: {
                      case: "socketAddress",
                      value: { address, portSpecifier: { case: "portValue", value: port } },
                    },
                  },
                },
              },
              loadBalancingWeight: 1,
            }),
          ),
        },
      ],
    }),
  );
}

/** Polls `condition` every 20 ms until it holds, failing after 10 s (a bounded wait, not a timing assert). */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
}

export interface Harness {
  server: XdsServer;
  address: string;
  /** Pushes a new snapshot to every connection (full push) and waits until the queue is drained. */
  push(snapshot: TestSnapshot, full?: boolean): Promise<PushContext>;
  close(): Promise<void>;
}

export async function startServer(snapshot: TestSnapshot, options: Partial<XdsServerOptions> = {}): Promise<Harness> {
  const server = new XdsServer({
    generators: testGenerators(),
    initialPush: newPushContext(snapshot),
    ...options,
  });
  const { grpcPort } = await server.listen({ grpcAddr: "127.0.0.1:0" });
  return {
    server,
    address: `127.0.0.1:${grpcPort}`,
    async push(next, full = true) {
      const push = newPushContext(next);
      server.push(pushRequest({ full, push, reasons: ["config"] }));
      await server.pushesDone();
      return push;
    },
    close: () => server.close(0),
  };
}
