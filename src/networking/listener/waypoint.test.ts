import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { makeMesh, makeProxy } from "../../../test/support/cluster-fixtures.ts";
import {
  type hcm,
  listener,
  type setFilterStateHttp,
  type setFilterStateNetwork,
  type tcpProxy,
  type tls,
  unpackAny,
} from "../../api/index.ts";
import { envoyViolations } from "../httpfilter/index.ts";
import { buildWaypointListeners } from "./index.ts";

const unpack = <T>(filter: listener.Filter | undefined): T => {
  assert.equal(filter?.configType.case, "typedConfig");
  return unpackAny(filter.configType.value) as T;
};

describe("a waypoint's listeners (buildWaypointInbound)", () => {
  const proxy = {
    ...makeProxy({ type: "waypoint", network: "west" }),
    istioVersion: { major: 1, minor: 29, patch: 1 },
  };
  const listeners = buildWaypointListeners({ proxy, mesh: makeMesh() });
  const byName = new Map(listeners.map((l) => [l.name, l]));

  it("connect_terminate, then the internal listeners that send traffic on; each valid for Envoy", () => {
    assert.deepEqual(
      listeners.map((l) => l.name),
      ["connect_terminate", "connect_originate", "inner_connect_originate", "outer_connect_originate"],
    );
    for (const l of listeners) assert.deepEqual(envoyViolations(listener.ListenerSchema, l), [], l.name);
    for (const name of ["connect_originate", "inner_connect_originate", "outer_connect_originate"]) {
      assert.equal(byName.get(name)?.listenerSpecifier.case, "internalListener", name);
    }
  });

  it("connect_terminate takes HBONE on 15008 from mesh peers with certificates, and sends each CONNECT to main_internal", () => {
    const l = byName.get("connect_terminate");
    assert.ok(l);
    assert.equal(l.address?.address.case, "socketAddress");
    assert.equal(l.address.address.value.portSpecifier.value, 15008);
    const chain = l.filterChains[0];
    const context = unpackAny(chain.transportSocket?.configType.value as never) as tls.DownstreamTlsContext;
    assert.equal(context.requireClientCertificate, true);
    assert.deepEqual(context.commonTlsContext?.alpnProtocols, ["h2"]);
    const manager = unpack<hcm.HttpConnectionManager>(chain.filters[0]);
    assert.equal(manager.routeSpecifier.case, "routeConfig");
    const routeAction = manager.routeSpecifier.value.virtualHosts[0]?.routes[0]?.action;
    assert.equal(routeAction?.case, "route");
    assert.deepEqual(routeAction.value.clusterSpecifier, { case: "cluster", value: "main_internal" });
    assert.deepEqual(
      manager.httpFilters.map((f) => f.name),
      ["waypoint_downstream_peer_metadata", "connect_authority", "envoy.filters.http.router"],
    );
    // A proxy before 1.29.2 has no istio.hashable_string factory.
    const authority = unpackAny(manager.httpFilters[1]?.configType.value as never) as setFilterStateHttp.Config;
    assert.deepEqual(
      authority.onRequestHeaders.map((v) => v.factoryKey),
      ["", "envoy.string", "", "envoy.string", "envoy.string"],
    );
  });

  it("the double-HBONE listeners tunnel to the target the endpoint names, saying where the request comes from", () => {
    const inner = byName.get("inner_connect_originate")?.filterChains[0]?.filters ?? [];
    const state = unpack<setFilterStateNetwork.Config>(inner[0]);
    assert.deepEqual(
      state.onNewConnection.map((v) => v.key.value),
      ["envoy.filters.listener.original_dst.local_ip", "istio.double_hbone.hbone_target_address"],
    );
    const innerProxy = unpack<tcpProxy.TcpProxy>(inner[1]);
    assert.deepEqual(innerProxy.clusterSpecifier, { case: "cluster", value: "inner_connect_originate" });
    assert.deepEqual(
      innerProxy.tunnelingConfig?.headersToAdd.map((h) => [h.header?.key, h.header?.value]),
      [["x-forwarded-network", "west"]],
    );
    const outerProxy = unpack<tcpProxy.TcpProxy>(byName.get("outer_connect_originate")?.filterChains[0]?.filters[0]);
    assert.deepEqual(
      outerProxy.tunnelingConfig?.headersToAdd.map((h) => [h.header?.key, h.header?.value]),
      [["x-istio-source", "waypoint"]],
    );
    const originate = unpack<tcpProxy.TcpProxy>(byName.get("connect_originate")?.filterChains[0]?.filters[0]);
    assert.equal(originate.tunnelingConfig?.hostname, "%DOWNSTREAM_LOCAL_ADDRESS%");
  });

  it("with the mesh's access log, HBONE origination logs upstream failures, termination failed requests, each listener unmatched connections", () => {
    const logged = buildWaypointListeners({ proxy, mesh: makeMesh({ accessLogFile: "/dev/stdout" }) });
    const filterOf = (log: { filter?: { filterSpecifier: { case?: string } } } | undefined) =>
      log?.filter?.filterSpecifier.case;
    const terminate = logged[0];
    const manager = unpack<hcm.HttpConnectionManager>(terminate.filterChains[0]?.filters[0]);
    assert.deepEqual(manager.accessLog.map(filterOf), ["statusCodeFilter"]);
    const originate = unpack<tcpProxy.TcpProxy>(logged[1].filterChains[0]?.filters[0]);
    assert.deepEqual(originate.accessLog.map(filterOf), ["responseFlagFilter"]);
    for (const l of logged) {
      assert.deepEqual(l.accessLog.map(filterOf), ["responseFlagFilter"], l.name);
      assert.deepEqual(envoyViolations(listener.ListenerSchema, l), [], l.name);
    }
  });
});
