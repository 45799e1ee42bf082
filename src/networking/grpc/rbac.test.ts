// AuthorizationPolicy → the RBAC filters of a proxyless server chain (Istio's grpcgen buildRBAC).
import assert from "node:assert/strict";
import { test } from "node:test";
import { hcm, httpRbac, rbac, unpackAny } from "../../api/index.ts";
import { checkMessage } from "../../api/pgv/index.ts";
import type { AuthorizationPolicySpec } from "../../config/types/index.ts";
import type { AuthzPolicy, PoliciesByAction } from "../authz/index.ts";
import { buildGrpcRbacFilters } from "./rbac.ts";

function policy(name: string, spec: AuthorizationPolicySpec): AuthzPolicy {
  return { name, namespace: "default", annotations: {}, spec };
}

function byAction(partial: Partial<PoliciesByAction>): PoliciesByAction {
  return { custom: [], deny: [], allow: [], audit: [], ...partial };
}

function rules(filter: hcm.HttpFilter | undefined): rbac.RBAC | undefined {
  assert.ok(filter);
  assert.deepEqual(checkMessage(hcm.HttpFilterSchema, filter), []);
  assert.equal(filter.configType.case, "typedConfig");
  if (filter.configType.case !== "typedConfig") return undefined;
  return unpackAny(filter.configType.value, httpRbac.RBACSchema)?.rules;
}

const ALLOW_ALICE = policy("allow-alice", {
  action: "ALLOW",
  rules: [{ from: [{ source: { principals: ["cluster.local/ns/default/sa/alice"] } }] }],
});

test("DENY then ALLOW, one policy per rule named <ns>-<name>-<index>, peers by certificate identity", () => {
  const deny = policy("deny-other", { action: "DENY", rules: [{ to: [{ operation: { methods: ["POST"] } }] }] });
  const { filters, problems } = buildGrpcRbacFilters(byAction({ deny: [deny], allow: [ALLOW_ALICE] }));
  assert.deepEqual(problems, []);
  assert.deepEqual(
    filters.map((f) => f.name),
    ["envoy.filters.http.rbac.DENY", "envoy.filters.http.rbac"],
  );
  const denyRules = rules(filters[0]);
  assert.equal(denyRules?.action, rbac.RBAC_Action.DENY);
  assert.deepEqual(Object.keys(denyRules?.policies ?? {}), ["default-deny-other-0"]);
  const allowRules = rules(filters[1]);
  assert.equal(allowRules?.action, rbac.RBAC_Action.ALLOW);
  const alice = allowRules?.policies["default-allow-alice-0"];
  assert.ok(alice);
  const json = JSON.stringify(alice.principals, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v));
  assert.ok(json.includes('"authenticated"'), json);
  assert.ok(json.includes("spiffe://cluster.local/ns/default/sa/alice"), json);
});

test("no policies, or AUDIT and CUSTOM only: no filters (gRPC has no form for them)", () => {
  assert.deepEqual(buildGrpcRbacFilters(byAction({})).filters, []);
  const audit = policy("audit", { action: "AUDIT", rules: [{}] });
  const custom = policy("custom", { action: "CUSTOM", provider: { name: "x" }, rules: [{}] });
  assert.deepEqual(buildGrpcRbacFilters(byAction({ audit: [audit], custom: [custom] })).filters, []);
});

test("an ALLOW policy without rules allows nothing: the ALLOW filter is kept with no policies", () => {
  const { filters } = buildGrpcRbacFilters(byAction({ allow: [policy("allow-nothing", { action: "ALLOW" })] }));
  assert.equal(filters.length, 1);
  assert.deepEqual(rules(filters[0])?.policies, {});
});
