import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonValue } from "@bufbuild/protobuf";
import { assertGolden, readGoldenInput, testdataDir } from "../../../test/support/golden.ts";
import {
  checkedListenersJson,
  meshFrom,
  policiesByAction,
  proxyFrom,
  service,
} from "../../../test/support/listeners.ts";
import type { listener } from "../../api/index.ts";
import type { AuthorizationPolicySpec, GatewayServers } from "../../config/types/index.ts";
import type { Service } from "../../registry/index.ts";
import {
  buildGatewayListeners,
  buildSidecarListeners,
  type InboundPort,
  type SidecarInput,
  type VirtualService,
} from "./index.ts";
import type { ProtocolFilters } from "./protocol-filters.ts";

const testdata = testdataDir(import.meta.url);

interface GoldenInput {
  protocolFilters?: ProtocolFilters;
  prometheusStats?: boolean;
  services: (Partial<Service> & Pick<Service, "hostname" | "ports">)[];
  sidecarVirtualServices?: VirtualService[];
  inboundPorts?: InboundPort[];
  authorizationPolicies?: { name: string; spec: AuthorizationPolicySpec }[];
  gateways?: { namespace: string; name: string; servers: GatewayServers[] }[];
  virtualServices?: Record<string, VirtualService[]>;
}

function sidecarInput(golden: Pick<GoldenInput, "services"> & Partial<GoldenInput>): SidecarInput {
  return {
    proxy: proxyFrom(),
    mesh: meshFrom(),
    protocolFilters: golden.protocolFilters,
    prometheusStats: golden.prometheusStats,
    services: golden.services.map(service),
    virtualServices: golden.sidecarVirtualServices,
    ports: golden.inboundPorts ?? [],
    mtls: { mode: "STRICT", perPort: new Map() },
    trustDomains: ["cluster.local"],
    policies: {
      authz: golden.authorizationPolicies && policiesByAction(golden.authorizationPolicies),
      authzOptions: { trustDomains: ["cluster.local"] },
      prometheusStats: golden.prometheusStats,
    },
  };
}

/** Each server on a port of its own (the goldens have one server per port). */
function gatewayListeners(golden: GoldenInput): listener.Listener[] {
  return buildGatewayListeners({
    proxy: proxyFrom({ type: "router" }),
    mesh: meshFrom(),
    protocolFilters: golden.protocolFilters,
    ports: (golden.gateways ?? []).flatMap((g) =>
      g.servers.map((server) => ({
        port: { number: server.port.number, protocol: server.port.protocol, bind: "" },
        servers: [{ server, gatewayName: `${g.namespace}/${g.name}` }],
      })),
    ),
    virtualServicesFor: (gw) => golden.virtualServices?.[gw] ?? [],
    services: golden.services.map(service),
    policies: {
      authz: golden.authorizationPolicies && policiesByAction(golden.authorizationPolicies),
      authzOptions: { trustDomains: ["cluster.local"] },
      prometheusStats: golden.prometheusStats,
    },
  });
}

/** The network filter names of a listener's chains, default chain last. */
function filterNames(l: listener.Listener | undefined): string[][] {
  assert.ok(l);
  return [...l.filterChains, ...(l.defaultFilterChain ? [l.defaultFilterChain] : [])].map((c) =>
    c.filters.map((f) => f.name),
  );
}

const mongo = { hostname: "mongo.default.svc.cluster.local", addresses: ["10.96.0.30"] };
const ports = {
  mongo: { name: "mongo", port: 27017, protocol: "Mongo", targetPort: 27017 },
  redis: { name: "redis", port: 6379, protocol: "Redis", targetPort: 6379 },
  mysql: { name: "mysql", port: 3306, protocol: "MySQL", targetPort: 3306 },
} as const;

describe("protocol network filters (networkfilter.go buildNetworkFiltersStack)", () => {
  for (const name of ["protocol-mongo", "protocol-redis", "protocol-mysql"]) {
    it(`golden: ${name}`, () => {
      const golden = readGoldenInput(testdata, name) as GoldenInput;
      const out: Record<string, JsonValue> = {
        sidecar: checkedListenersJson(buildSidecarListeners(sidecarInput(golden))),
      };
      if (golden.gateways) out.gateway = checkedListenersJson(gatewayListeners(golden));
      assertGolden(testdata, name, out);
    });
  }

  it("by default only mongo ports get their filter; redis and mysql ports keep plain tcp_proxy", () => {
    const listeners = buildSidecarListeners(
      sidecarInput({
        services: [
          { ...mongo, ports: [ports.mongo] },
          { hostname: "redis.default.svc.cluster.local", addresses: ["10.96.0.40"], ports: [ports.redis] },
          { hostname: "mysql.default.svc.cluster.local", addresses: ["10.96.0.20"], ports: [ports.mysql] },
        ],
      }),
    );
    const named = (n: string) => listeners.find((l) => l.name === n);
    assert.deepEqual(filterNames(named("10.96.0.30_27017")), [
      ["envoy.filters.network.mongo_proxy", "envoy.filters.network.tcp_proxy"],
    ]);
    assert.deepEqual(filterNames(named("10.96.0.40_6379")), [["envoy.filters.network.tcp_proxy"]]);
    assert.deepEqual(filterNames(named("10.96.0.20_3306")), [["envoy.filters.network.tcp_proxy"]]);
  });

  it("PILOT_ENABLE_MONGO_FILTER=false leaves mongo ports with tcp_proxy alone", () => {
    const listeners = buildSidecarListeners(
      sidecarInput({
        protocolFilters: { mongo: false, redis: false, mysql: false },
        services: [{ ...mongo, ports: [ports.mongo] }],
        inboundPorts: [{ targetPort: 27017, servicePort: 27017, protocol: "Mongo", hostname: mongo.hostname }],
      }),
    );
    const names = listeners.flatMap((l) => filterNames(l).flat());
    assert.ok(names.includes("envoy.filters.network.tcp_proxy"));
    assert.ok(!names.includes("envoy.filters.network.mongo_proxy"));
  });

  it("a sniffed (undeclared protocol) or plain TCP port gets no protocol filter even with every flag on", () => {
    const listeners = buildSidecarListeners(
      sidecarInput({
        protocolFilters: { mongo: true, redis: true, mysql: true },
        services: [
          { ...mongo, ports: [{ name: "tcp", port: 27017, protocol: "TCP", targetPort: 27017 }] },
          {
            hostname: "db.default.svc.cluster.local",
            addresses: ["10.96.0.50"],
            ports: [{ name: "db", port: 6379, protocol: "UnsupportedProtocol", targetPort: 6379 }],
          },
        ],
      }),
    );
    const names = listeners.flatMap((l) => filterNames(l).flat());
    for (const filter of ["mongo_proxy", "redis_proxy", "mysql_proxy"]) {
      assert.ok(!names.includes(`envoy.filters.network.${filter}`), filter);
    }
  });
});
