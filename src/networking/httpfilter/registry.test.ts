import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertGolden, protoJson, readGoldenInput, testdataDir } from "../../../test/support/golden.ts";
import { hcm } from "../../api/index.ts";
import type { AuthorizationPolicySpec, RequestAuthenticationJwtRules } from "../../config/types/index.ts";
import type { ServiceProtocol } from "../../registry/index.ts";
import type { AuthzPolicy, PoliciesByAction } from "../authz/index.ts";
import { buildHttpFilters, HTTP_FILTERS, type HttpFilterContext, type ListenerClass, ROUTER_FILTER } from "./index.ts";
import { envoyViolations } from "./pgv.ts";

const testdata = testdataDir(import.meta.url);

interface GoldenInput {
  listenerClass: ListenerClass;
  protocol?: ServiceProtocol;
  prometheusStats?: boolean;
  authorizationPolicies?: { name: string; namespace: string; spec: AuthorizationPolicySpec }[];
  jwtRules?: RequestAuthenticationJwtRules[];
}

function byAction(policies: GoldenInput["authorizationPolicies"]): PoliciesByAction {
  const out: PoliciesByAction = { custom: [], deny: [], allow: [], audit: [] };
  for (const p of policies ?? []) {
    const policy: AuthzPolicy = { ...p, annotations: {} };
    const action = (p.spec.action ?? "ALLOW").toLowerCase() as keyof PoliciesByAction;
    out[action].push(policy);
  }
  return out;
}

function contextOf(input: GoldenInput, problems: string[] = []): HttpFilterContext {
  return {
    listenerClass: input.listenerClass,
    protocol: input.protocol,
    prometheusStats: input.prometheusStats,
    authz: input.authorizationPolicies ? byAction(input.authorizationPolicies) : undefined,
    authzOptions: { trustDomains: ["cluster.local"] },
    jwtRules: input.jwtRules,
    jwksCluster: (host, port) => (host === "auth.example.com" ? `outbound|${port}||${host}` : undefined),
    report: (p) => problems.push(p),
  };
}

function names(filters: readonly hcm.HttpFilter[]): string[] {
  return filters.map((f) => f.name);
}

describe("HTTP filter registry (Istio listener_builder order)", () => {
  for (const name of ["sidecar-outbound", "sidecar-inbound-policies", "gateway-jwt"]) {
    it(`golden: ${name}`, () => {
      const filters = buildHttpFilters(contextOf(readGoldenInput(testdata, name) as GoldenInput));
      for (const f of filters) assert.deepEqual(envoyViolations(hcm.HttpFilterSchema, f), [], f.name);
      assertGolden(
        testdata,
        name,
        filters.map((f) => protoJson(hcm.HttpFilterSchema, f)),
      );
    });
  }

  it("sidecar outbound: metadata exchange, grpc_stats, istio.alpn, fault, cors, router — no authn/authz", () => {
    const filters = buildHttpFilters({
      listenerClass: "sidecarOutbound",
      authz: byAction([{ name: "deny", namespace: "ns", spec: { action: "DENY", rules: [{}] } }]),
      jwtRules: [{ issuer: "x", jwks: "{}" }],
    });
    assert.deepEqual(names(filters), [
      "istio.metadata_exchange",
      "envoy.filters.http.grpc_stats",
      "istio.alpn",
      "envoy.filters.http.fault",
      "envoy.filters.http.cors",
      ROUTER_FILTER,
    ]);
  });

  it("sidecar inbound: jwt_authn before rbac (DENY then ALLOW), no istio.alpn, router last", () => {
    const filters = buildHttpFilters({
      listenerClass: "sidecarInbound",
      authz: byAction([
        { name: "allow", namespace: "ns", spec: { action: "ALLOW", rules: [{}] } },
        { name: "deny", namespace: "ns", spec: { action: "DENY", rules: [{}] } },
      ]),
      jwtRules: [{ issuer: "x", jwks: "{}" }],
      prometheusStats: true,
    });
    assert.deepEqual(names(filters), [
      "istio.metadata_exchange",
      "envoy.filters.http.jwt_authn",
      "envoy.filters.http.rbac",
      "envoy.filters.http.rbac",
      "envoy.filters.http.grpc_stats",
      "envoy.filters.http.fault",
      "envoy.filters.http.cors",
      "istio.stats",
      ROUTER_FILTER,
    ]);
  });

  it("grpc_web only on GRPC-Web ports, before grpc_stats", () => {
    const web = names(buildHttpFilters({ listenerClass: "sidecarOutbound", protocol: "GRPC-Web" }));
    assert.equal(web.indexOf("envoy.filters.http.grpc_web") + 1, web.indexOf("envoy.filters.http.grpc_stats"));
    assert.ok(
      !names(buildHttpFilters({ listenerClass: "sidecarOutbound", protocol: "GRPC" })).includes(
        "envoy.filters.http.grpc_web",
      ),
    );
  });

  it("the router stays last even when a caller passes its own filter list", () => {
    const extra = { name: "x", httpFilters: () => [] };
    const filters = buildHttpFilters({ listenerClass: "gateway" }, [...HTTP_FILTERS, extra]);
    assert.equal(filters.at(-1)?.name, ROUTER_FILTER);
    assert.equal(names(filters).filter((n) => n === ROUTER_FILTER).length, 1);
  });

  it("a JWKS URI without a mesh cluster falls back to outbound|port||host and reports it", () => {
    const problems: string[] = [];
    const filters = buildHttpFilters(
      contextOf(
        { listenerClass: "sidecarInbound", jwtRules: [{ issuer: "i", jwksUri: "https://keys.example.org/jwks" }] },
        problems,
      ),
    );
    const json = JSON.stringify(protoJson(hcm.HttpFilterSchema, filters[1]));
    assert.match(json, /outbound\|443\|\|keys\.example\.org/);
    assert.equal(problems.length, 1);
  });
});
