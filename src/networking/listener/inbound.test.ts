import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { assertGolden, readGoldenInput, testdataDir } from "../../../test/support/golden.ts";
import {
  checkedListenersJson,
  meshFrom,
  type ProxyInput,
  policiesByAction,
  proxyFrom,
} from "../../../test/support/listeners.ts";
import { type listener, tls, unpackAny } from "../../api/index.ts";
import type { AuthorizationPolicySpec } from "../../config/types/index.ts";
import { MemoStore } from "../../util/index.ts";
import { buildSidecarInboundListeners, type InboundPort, type SidecarInboundInput } from "./index.ts";
import type { MtlsMode } from "./types.ts";

const testdata = testdataDir(import.meta.url);

interface GoldenInput {
  proxy?: ProxyInput;
  mesh?: JsonObject;
  ports: InboundPort[];
  mtls?: { mode: MtlsMode; perPort?: Record<number, MtlsMode> };
  authorizationPolicies?: { name: string; spec: AuthorizationPolicySpec }[];
  prometheusStats?: boolean;
}

function mtlsOf(mode: MtlsMode, perPort: Record<number, MtlsMode> = {}): SidecarInboundInput["mtls"] {
  return { mode, perPort: new Map(Object.entries(perPort).map(([port, m]) => [Number(port), m])) };
}

function inputFrom(golden: GoldenInput): SidecarInboundInput {
  const authz = golden.authorizationPolicies && policiesByAction(golden.authorizationPolicies);
  return {
    proxy: proxyFrom(golden.proxy),
    mesh: meshFrom(golden.mesh),
    ports: golden.ports,
    mtls: mtlsOf(golden.mtls?.mode ?? "PERMISSIVE", golden.mtls?.perPort),
    trustDomains: ["cluster.local"],
    policies: { authz, authzOptions: { trustDomains: ["cluster.local"] }, prometheusStats: golden.prometheusStats },
  };
}

function build(input: Partial<SidecarInboundInput> & { ports: InboundPort[] }): listener.Listener[] {
  return buildSidecarInboundListeners({
    proxy: proxyFrom(),
    mesh: meshFrom(),
    mtls: mtlsOf("PERMISSIVE"),
    trustDomains: ["cluster.local"],
    ...input,
  });
}

const httpPort = (protocol: InboundPort["protocol"] = "HTTP"): InboundPort => ({
  targetPort: 8080,
  servicePort: 80,
  protocol,
  hostname: "reviews.default.svc.cluster.local",
});

function chainsOn(l: listener.Listener, port: number): listener.FilterChain[] {
  return l.filterChains.filter((c) => c.filterChainMatch?.destinationPort === port);
}

describe("sidecar inbound listeners (listener_inbound.go)", () => {
  for (const name of [
    "inbound-permissive",
    "inbound-strict-authz",
    "inbound-interception-none",
    "inbound-tproxy-disable",
  ]) {
    it(`golden: ${name}`, () => {
      const listeners = buildSidecarInboundListeners(inputFrom(readGoldenInput(testdata, name) as GoldenInput));
      assertGolden(testdata, name, checkedListenersJson(listeners));
    });
  }

  it("virtualInbound: blackhole for 15006 first, passthrough chains next, then ports in target-port order", () => {
    const [l] = build({
      mtls: mtlsOf("DISABLE"),
      ports: [
        { ...httpPort(), targetPort: 9090 },
        { ...httpPort(), targetPort: 8080 },
      ],
    });
    assert.equal(l.name, "virtualInbound");
    assert.equal(l.filterChains[0].name, "virtualInbound-blackhole");
    assert.equal(l.filterChains[0].filterChainMatch?.destinationPort, 15006);
    const names = l.filterChains.map((c) => c.name);
    assert.ok(names.indexOf("virtualInbound") < names.indexOf("0.0.0.0_8080"));
    assert.ok(names.indexOf("0.0.0.0_8080") < names.indexOf("0.0.0.0_9090"));
  });

  it("PERMISSIVE HTTP port: an mTLS chain on tls + all Istio ALPNs, and a plaintext raw_buffer chain", () => {
    const [l] = build({ ports: [httpPort()] });
    const chains = chainsOn(l, 8080);
    assert.deepEqual(
      chains.map((c) => [
        c.filterChainMatch?.transportProtocol,
        c.filterChainMatch?.applicationProtocols,
        !!c.transportSocket,
      ]),
      [
        ["tls", ["istio", "istio-peer-exchange", "istio-http/1.0", "istio-http/1.1", "istio-h2"], true],
        ["raw_buffer", [], false],
      ],
    );
  });

  it("every mTLS chain of a kind, in every workload built with the same memos, shares one transport socket", () => {
    const memos = new MemoStore();
    const mesh = meshFrom();
    const sockets = (l: listener.Listener, transport: string) =>
      l.filterChains
        .filter((c) => c.transportSocket && c.filterChainMatch?.applicationProtocols.includes(transport))
        .map((c) => c.transportSocket);
    const [a] = build({ memos, mesh, ports: [httpPort()] });
    const [b] = build({
      memos,
      mesh,
      ports: [{ ...httpPort(), targetPort: 9090, hostname: "ratings.default.svc.cluster.local" }],
    });
    // HTTP chains (istio-http ALPNs) and TCP ones (istio-peer-exchange only) get different contexts.
    const http = [...sockets(a, "istio-http/1.1"), ...sockets(b, "istio-http/1.1")];
    const tcp = [...sockets(a, "istio-peer-exchange"), ...sockets(b, "istio-peer-exchange")].filter(
      (s) => !http.includes(s),
    );
    assert.ok(http.length >= 4 && tcp.length >= 2, "both workloads have HTTP and TCP mTLS chains");
    assert.ok(http.every((s) => s === http[0]));
    assert.ok(tcp.every((s) => s === tcp[0]));
    assert.notEqual(http[0], tcp[0]);
    // Without memos, each build makes its own, equal ones.
    const [c] = build({ mesh, ports: [httpPort()] });
    assert.notEqual(sockets(c, "istio-http/1.1")[0], http[0]);
    assert.deepEqual(sockets(c, "istio-http/1.1")[0], http[0]);
  });

  it("STRICT (port-level) accepts only mTLS: one tls chain whose context requires client certificates from the trust domain", () => {
    const [l] = build({ mtls: mtlsOf("PERMISSIVE", { 8080: "STRICT" }), ports: [httpPort()] });
    const chains = chainsOn(l, 8080);
    assert.equal(chains.length, 1);
    const socket = chains[0].transportSocket;
    assert.ok(socket?.configType.case === "typedConfig");
    const context = unpackAny(socket.configType.value, tls.DownstreamTlsContextSchema);
    assert.equal(context?.requireClientCertificate, true);
    assert.deepEqual(context?.commonTlsContext?.alpnProtocols, ["h2", "http/1.1"]);
    assert.deepEqual(
      context?.commonTlsContext?.tlsCertificateSdsSecretConfigs.map((s) => s.name),
      ["default"],
    );
    const validation = context?.commonTlsContext?.validationContextType;
    assert.ok(validation?.case === "combinedValidationContext");
    assert.equal(validation.value.validationContextSdsSecretConfig?.name, "ROOTCA");
    assert.deepEqual(validation.value.defaultValidationContext?.matchSubjectAltNames[0].matchPattern, {
      case: "prefix",
      value: "spiffe://cluster.local/",
    });
  });

  it("Auto (undeclared protocol) PERMISSIVE port: five chains, HTTP sniffed by ALPN, TCP with peer exchange", () => {
    const [l] = build({ ports: [httpPort("UnsupportedProtocol")] });
    assert.equal(chainsOn(l, 8080).length, 5);
  });

  it("a port-level mTLS mode for an undeclared port adds passthrough chains on that port", () => {
    const [l] = build({ ports: [], mtls: mtlsOf("PERMISSIVE", { 9999: "STRICT" }) });
    const chains = chainsOn(l, 9999);
    assert.deepEqual(
      chains.map((c) => c.name),
      ["virtualInbound-catchall-http", "virtualInbound"],
    );
  });

  it("interception NONE: no virtualInbound, a listener bound to the pod IP per port", () => {
    const listeners = build({
      proxy: proxyFrom({ metadata: { INTERCEPTION_MODE: "NONE" } }),
      mtls: mtlsOf("DISABLE"),
      ports: [httpPort()],
    });
    assert.deepEqual(
      listeners.map((l) => l.name),
      ["10.1.0.5_8080"],
    );
    assert.ok(!listeners[0].listenerFilters.some((f) => f.name === "envoy.filters.listener.original_dst"));
  });

  it("TPROXY: virtualInbound is transparent and restores the source with original_src", () => {
    const [l] = build({ proxy: proxyFrom({ metadata: { INTERCEPTION_MODE: "TPROXY" } }), ports: [] });
    assert.equal(l.transparent, true);
    assert.deepEqual(
      l.listenerFilters.slice(0, 2).map((f) => f.name),
      ["envoy.filters.listener.original_dst", "envoy.filters.listener.original_src"],
    );
  });

  it("the inspectors skip ports that do not need them (http_inspector off on 15006 and explicit-protocol ports)", () => {
    const [l] = build({ ports: [{ ...httpPort("TCP"), targetPort: 3306 }] });
    const httpInspector = l.listenerFilters.find((f) => f.name === "envoy.filters.listener.http_inspector");
    assert.ok(httpInspector?.filterDisabled?.rule.case === "orMatch");
    const ranges = httpInspector.filterDisabled.rule.value.rules.map((r) =>
      r.rule.case === "destinationPortRange" ? r.rule.value.start : -1,
    );
    assert.deepEqual(ranges, [3306, 15006]);
  });

  it("Sidecar ingress captureMode NONE: that port gets its own bound listener after virtualInbound", () => {
    const listeners = build({
      mtls: mtlsOf("DISABLE"),
      ports: [{ ...httpPort(), bindToPort: true, bind: "127.0.0.1" }],
    });
    assert.deepEqual(
      listeners.map((l) => l.name),
      ["virtualInbound", "127.0.0.1_8080"],
    );
    assert.equal(chainsOn(listeners[0], 8080).length, 0);
  });

  it("node INBOUND_LISTENER_EXACT_BALANCE balances virtualInbound's connections exactly", () => {
    const [l] = build({ proxy: proxyFrom({ metadata: { INBOUND_LISTENER_EXACT_BALANCE: "true" } }), ports: [] });
    assert.equal(l.connectionBalanceConfig?.balanceType.case, "exactBalance");
  });

  it("Sidecar ingress tls with mTLS DISABLE: one tls chain terminating the user's certificate, HTTP inside HTTPS", () => {
    const [l] = build({
      mtls: mtlsOf("DISABLE"),
      ports: [
        {
          ...httpPort("HTTPS"),
          tls: { mode: "SIMPLE", serverCertificate: "/etc/certs/cert.pem", privateKey: "/etc/certs/key.pem" },
        },
      ],
    });
    const chains = chainsOn(l, 8080);
    assert.equal(chains.length, 1);
    assert.equal(chains[0].filterChainMatch?.transportProtocol, "tls");
    assert.ok(chains[0].filters.some((f) => f.name === "envoy.filters.network.http_connection_manager"));
    const socket = chains[0].transportSocket;
    assert.ok(socket?.configType.case === "typedConfig");
    const context = unpackAny(socket.configType.value, tls.DownstreamTlsContextSchema);
    assert.equal(
      context?.commonTlsContext?.tlsCertificateSdsSecretConfigs[0].name,
      "file-cert:/etc/certs/cert.pem~/etc/certs/key.pem",
    );
  });
});
