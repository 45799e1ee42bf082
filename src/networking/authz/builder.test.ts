import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toJson } from "@bufbuild/protobuf";
import { hcm, httpRbac, listener, networkRbac, unpackAny } from "../../api/index.ts";
import { checkMessage } from "../../api/pgv/index.ts";
import type { AuthorizationPolicySpec } from "../../config/types/index.ts";
import { type AuthzBuildOptions, buildHttpAuthzFilters, buildTcpAuthzFilters } from "./builder.ts";
import type { AuthzPolicy, PoliciesByAction } from "./policy-select.ts";

function policy(name: string, spec: AuthorizationPolicySpec, dryRun?: string): AuthzPolicy {
  return { name, namespace: "foo", annotations: dryRun === undefined ? {} : { "istio.io/dry-run": dryRun }, spec };
}

function byAction(policies: Partial<PoliciesByAction>): PoliciesByAction {
  return { custom: [], deny: [], allow: [], audit: [], ...policies };
}

function httpRbacJson(filter: hcm.HttpFilter): Record<string, unknown> {
  assert.equal(filter.configType.case, "typedConfig");
  const config = unpackAny(filter.configType.value, httpRbac.RBACSchema);
  assert.ok(config);
  return toJson(httpRbac.RBACSchema, config) as Record<string, unknown>;
}

function tcpRbacJson(filter: listener.Filter): Record<string, unknown> {
  assert.equal(filter.configType.case, "typedConfig");
  const config = unpackAny(filter.configType.value, networkRbac.RBACSchema);
  assert.ok(config);
  return toJson(networkRbac.RBACSchema, config) as Record<string, unknown>;
}

const EVERY_FIELD: AuthorizationPolicySpec = {
  rules: [
    {
      from: [{ source: { principals: ["td/ns/a/sa/b"], requestPrincipals: ["iss/sub"], notIpBlocks: ["10.0.0.0/8"] } }],
      to: [{ operation: { hosts: ["*.com"], methods: ["GET"], paths: ["/a/*"], notPorts: ["81"] } }],
      when: [
        { key: "request.headers[x-a]", values: ["v"] },
        { key: "request.auth.claims[groups]", values: ["g"] },
        { key: "destination.ip", values: ["10.0.0.1"] },
        { key: "connection.sni", values: ["*.local"] },
      ],
    },
  ],
};

const PROVIDERS: AuthzBuildOptions["custom"] = {
  extensionProviders: [
    { name: "grpc", envoyExtAuthzGrpc: { service: "authz.foo.svc.cluster.local", port: 9000 } },
    { name: "http", envoyExtAuthzHttp: { service: "authz.foo.svc.cluster.local", port: 8000 } },
  ],
  services: [{ hostname: "authz.foo.svc.cluster.local", namespace: "foo" }],
};

describe("authz builder", () => {
  it("emits one RBAC filter per action, AUDIT (LOG) then DENY then ALLOW", () => {
    const { filters } = buildHttpAuthzFilters(
      byAction({ allow: [policy("a", {})], deny: [policy("d", {})], audit: [policy("l", {})] }),
    );
    assert.deepEqual(
      filters.map((f) => (httpRbacJson(f).rules as { action?: string }).action),
      ["LOG", "DENY", undefined],
    );
  });

  it("nothing applies: no filter", () => {
    assert.deepEqual(buildHttpAuthzFilters(byAction({})).filters, []);
    assert.deepEqual(buildTcpAuthzFilters(byAction({})).filters, []);
  });

  it("names policies ns[<ns>]-policy[<name>]-rule[<i>]; a policy without rules matches nothing", () => {
    const { filters } = buildHttpAuthzFilters(
      byAction({ allow: [policy("p", { rules: [{}, {}] }), policy("empty", {})] }),
    );
    const policies = (httpRbacJson(filters[0]).rules as { policies: Record<string, unknown> }).policies;
    assert.deepEqual(Object.keys(policies).sort(), [
      "ns[foo]-policy[empty]-rule[0]",
      "ns[foo]-policy[p]-rule[0]",
      "ns[foo]-policy[p]-rule[1]",
    ]);
    assert.deepEqual(policies["ns[foo]-policy[empty]-rule[0]"], {
      permissions: [{ notRule: { any: true } }],
      principals: [{ notId: { any: true } }],
    });
  });

  it("dry-run policies become shadow rules with the action's stat prefix", () => {
    const deny = httpRbacJson(buildHttpAuthzFilters(byAction({ deny: [policy("d", {}, "true")] })).filters[0]);
    assert.equal(deny.rules, undefined);
    assert.equal((deny.shadowRules as { action: string }).action, "DENY");
    assert.deepEqual(Object.keys((deny.shadowRules as { policies: object }).policies), ["ns[foo]-policy[d]-rule[0]"]);
    assert.equal(deny.shadowRulesStatPrefix, "istio_dry_run_deny_");
    // Without shadow rules Istio still names the (unused) prefix after ALLOW.
    const enforced = buildHttpAuthzFilters(byAction({ deny: [policy("d", {}, "false")] })).filters;
    assert.equal(httpRbacJson(enforced[0]).shadowRulesStatPrefix, "istio_dry_run_allow_");
    const audit = buildHttpAuthzFilters(byAction({ audit: [policy("l", {}, "1")] })).filters;
    assert.equal(httpRbacJson(audit[0]).shadowRulesStatPrefix, undefined);
  });

  it("TCP filters carry stat prefix tcp. and an ALLOW policy with HTTP-only rules allows nothing", () => {
    const { filters, problems } = buildTcpAuthzFilters(
      byAction({ allow: [policy("http-only", { rules: [{ to: [{ operation: { methods: ["GET"] } }] }] })] }),
    );
    assert.deepEqual(tcpRbacJson(filters[0]), {
      rules: {},
      statPrefix: "tcp.",
      shadowRulesStatPrefix: "istio_dry_run_allow_",
    });
    assert.match(problems[0], /HTTP only/);
  });

  it("every generated RBAC filter passes Envoy's PGV rules", () => {
    for (const action of ["allow", "deny", "audit"] as const) {
      const policies = byAction({ [action]: [policy("p", EVERY_FIELD), policy("dry", EVERY_FIELD, "true")] });
      for (const filter of buildHttpAuthzFilters(policies).filters) {
        assert.deepEqual(checkMessage(hcm.HttpFilterSchema, filter), [], action);
      }
      for (const filter of buildTcpAuthzFilters(policies).filters) {
        assert.deepEqual(checkMessage(listener.FilterSchema, filter), [], action);
      }
    }
  });

  it("CUSTOM: a shadow RBAC filter records the matched policy, then the provider's ext_authz filter", () => {
    const custom = byAction({ custom: [policy("c", { action: "CUSTOM", provider: { name: "grpc" }, rules: [{}] })] });
    const { filters } = buildHttpAuthzFilters(custom, { custom: PROVIDERS });
    assert.deepEqual(
      filters.map((f) => f.name),
      ["envoy.filters.http.rbac", "envoy.filters.http.ext_authz"],
    );
    const rbacJson = httpRbacJson(filters[0]);
    assert.equal(rbacJson.shadowRulesStatPrefix, "istio_ext_authz_");
    assert.deepEqual(Object.keys((rbacJson.shadowRules as { policies: object }).policies), [
      "istio-ext-authz-grpc-ns[foo]-policy[c]-rule[0]",
    ]);
    for (const filter of filters) assert.deepEqual(checkMessage(hcm.HttpFilterSchema, filter), []);
    // The enforcing builder leaves CUSTOM policies alone.
    assert.deepEqual(buildHttpAuthzFilters(custom).filters, []);
  });

  it("CUSTOM with an HTTP provider builds nothing on TCP", () => {
    const custom = byAction({ custom: [policy("c", { action: "CUSTOM", provider: { name: "http" }, rules: [{}] })] });
    assert.deepEqual(buildTcpAuthzFilters(custom, { custom: PROVIDERS }).filters, []);
    assert.equal(buildHttpAuthzFilters(custom, { custom: PROVIDERS }).filters.length, 2);
  });

  it("CUSTOM with an unknown provider denies what its policies match", () => {
    const custom = byAction({
      custom: [policy("c", { action: "CUSTOM", provider: { name: "missing" }, rules: [{}] })],
    });
    const { filters, problems } = buildHttpAuthzFilters(custom, { custom: PROVIDERS });
    assert.equal(filters.length, 1);
    const rules = httpRbacJson(filters[0]).rules as { action: string; policies: object };
    assert.equal(rules.action, "DENY");
    assert.deepEqual(Object.keys(rules.policies), [
      "istio-ext-authz-missing-ns[foo]-policy[c]-rule[0]-deny-due-to-bad-CUSTOM-action",
    ]);
    assert.match(problems[0], /missing/);
  });

  it("CUSTOM with two providers denies per provider unless multiple providers are enabled", () => {
    const custom = byAction({
      custom: [
        policy("c1", { action: "CUSTOM", provider: { name: "http" }, rules: [{}] }),
        policy("c2", { action: "CUSTOM", provider: { name: "grpc" }, rules: [{}] }),
      ],
    });
    const denied = buildHttpAuthzFilters(custom, { custom: PROVIDERS }).filters;
    assert.deepEqual(
      denied.map((f) => Object.keys((httpRbacJson(f).rules as { policies: object }).policies)),
      [
        ["istio-ext-authz-grpc-ns[foo]-policy[c2]-rule[0]-deny-due-to-bad-CUSTOM-action"],
        ["istio-ext-authz-http-ns[foo]-policy[c1]-rule[0]-deny-due-to-bad-CUSTOM-action"],
      ],
    );
    const both = buildHttpAuthzFilters(custom, { custom: { ...PROVIDERS, multipleProviders: true } }).filters;
    assert.equal(both.length, 4);
  });

  it("CUSTOM dry-run policies go to rules, which only record a match", () => {
    const custom = byAction({
      custom: [policy("c", { action: "CUSTOM", provider: { name: "grpc" }, rules: [{}] }, "true")],
    });
    const rbacJson = httpRbacJson(buildHttpAuthzFilters(custom, { custom: PROVIDERS }).filters[0]);
    assert.deepEqual(rbacJson.shadowRules, { action: "DENY" });
    assert.deepEqual(Object.keys((rbacJson.rules as { policies: object }).policies), [
      "istio-ext-authz-grpc-ns[foo]-policy[c]-rule[0]",
    ]);
  });
});
