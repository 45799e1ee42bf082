// One AuthorizationPolicy rule as one RBAC policy (Istio's authz model). `from` entries become
// or-ed principals and `to` entries or-ed permissions; each `when` condition joins every principal
// (peer and credential keys) or every permission (destination keys). Within one entry the
// conditions are and-ed: a field's values are or-ed and its not-values negated.
import { create } from "@bufbuild/protobuf";
import { rbac } from "../../api/index.ts";
import type { AuthorizationPolicyRules } from "../../config/types/index.ts";
import { type GenerateContext, type Generator, NotGenerated } from "./generator.ts";
import * as permission from "./permission.ts";
import * as principal from "./principal.ts";
import { expandTrustDomainAliases, replaceTrustDomainAliases, type TrustDomainBundle } from "./trust-domain.ts";

interface Condition<T> {
  key: string;
  values: readonly string[];
  notValues: readonly string[];
  generator: Generator<T>;
}

type PrincipalCondition = Condition<rbac.Principal>;
type PermissionCondition = Condition<rbac.Permission>;

type WhenCondition = { principal: PrincipalCondition } | { permission: PermissionCondition };

export interface RuleOptions extends GenerateContext {
  /** The namespace of the policy: the default namespace of its service accounts. */
  policyNamespace: string;
  trustDomains: TrustDomainBundle;
  action: rbac.RBAC_Action;
}

/** The RBAC policy of one rule, or why the rule is left out of the filter. */
export function rulePolicy(rule: AuthorizationPolicyRules, options: RuleOptions): rbac.Policy | NotGenerated {
  const whenPrincipals: PrincipalCondition[] = [];
  const whenPermissions: PermissionCondition[] = [];
  for (const when of rule.when ?? []) {
    const parsed = whenCondition(when.key, when.values ?? [], when.notValues ?? [], options.policyNamespace);
    if (parsed === undefined) return new NotGenerated(`unknown attribute ${when.key}`);
    if ("principal" in parsed) {
      if (!isEmpty(parsed.principal)) whenPrincipals.push(parsed.principal);
    } else if (!isEmpty(parsed.permission)) whenPermissions.push(parsed.permission);
  }

  // Istio's rule lists share the `when` conditions between `from` entries and rewrite trust
  // domains in place, so those are rewritten once per entry; this repeats aliases as Istio does.
  const sharedMigrations = Math.max(1, rule.from?.length ?? 0);
  let sharedPrincipals = whenPrincipals;
  for (let i = 0; i < sharedMigrations; i++) {
    sharedPrincipals = sharedPrincipals.map((c) => migrateTrustDomain(c, options.trustDomains));
  }

  const principalLists = rule.from?.length
    ? rule.from.map((from) => [
        ...sourceConditions(from.source ?? {}, options.policyNamespace).map((c) =>
          migrateTrustDomain(c, options.trustDomains),
        ),
        ...sharedPrincipals,
      ])
    : [sharedPrincipals];
  const permissionLists = rule.to?.length
    ? rule.to.map((to) => [...operationConditions(to.operation ?? {}), ...whenPermissions])
    : [whenPermissions];

  const permissions: rbac.Permission[] = [];
  for (const list of permissionLists) {
    const and = matchAll(list, options, PERMISSION_OPS);
    if (and instanceof NotGenerated) return and;
    permissions.push(and);
  }
  const principals: rbac.Principal[] = [];
  for (const list of principalLists) {
    const and = matchAll(list, options, PRINCIPAL_OPS);
    if (and instanceof NotGenerated) return and;
    principals.push(and);
  }
  return create(rbac.PolicySchema, { permissions, principals });
}

/** The policy of a policy without rules: it matches nothing. */
export function matchNothingPolicy(): rbac.Policy {
  return create(rbac.PolicySchema, {
    permissions: [permission.permissionNot(permission.permissionAny())],
    principals: [principal.principalNot(principal.principalAny())],
  });
}

interface Ops<T> {
  any(): T;
  and(items: T[]): T;
  or(items: T[]): T;
  not(item: T): T;
}

const PERMISSION_OPS: Ops<rbac.Permission> = {
  any: permission.permissionAny,
  and: permission.permissionAnd,
  or: permission.permissionOr,
  not: permission.permissionNot,
};

const PRINCIPAL_OPS: Ops<rbac.Principal> = {
  any: principal.principalAny,
  and: principal.principalAnd,
  or: principal.principalOr,
  not: principal.principalNot,
};

/** The and of every condition's matchers (`any` when there are none). */
function matchAll<T>(conditions: readonly Condition<T>[], options: RuleOptions, ops: Ops<T>): T | NotGenerated {
  const and: T[] = [];
  for (const condition of conditions) {
    const matchers = conditionMatchers(condition, options, ops);
    if (matchers instanceof NotGenerated) return matchers;
    and.push(...matchers);
  }
  return ops.and(and.length > 0 ? and : [ops.any()]);
}

/**
 * The matcher of a condition's values and the negated matcher of its not-values. A value that
 * cannot be generated fails an ALLOW rule (a narrower allow) but is only left out of a DENY or
 * AUDIT rule (a wider deny).
 */
function conditionMatchers<T>(condition: Condition<T>, options: RuleOptions, ops: Ops<T>): T[] | NotGenerated {
  const failsRule = options.action === rbac.RBAC_Action.ALLOW;
  const out: T[] = [];
  for (const [values, negate] of [
    [condition.values, false],
    [condition.notValues, true],
  ] as const) {
    if (values.length === 0) continue;
    let matched: T | undefined;
    const generator = condition.generator;
    if ("all" in generator) {
      const generated = generator.all(condition.key, values, options);
      if (generated instanceof NotGenerated) {
        if (failsRule) return generated;
      } else matched = generated;
    } else {
      const or: T[] = [];
      for (const value of values) {
        const generated = generator.each(condition.key, value, options);
        if (generated instanceof NotGenerated) {
          if (failsRule) return generated;
        } else or.push(generated);
      }
      if (or.length > 0) matched = ops.or(or);
    }
    if (matched !== undefined) out.push(negate ? ops.not(matched) : matched);
  }
  return out;
}

function isEmpty<T>(condition: Condition<T>): boolean {
  return condition.values.length === 0 && condition.notValues.length === 0;
}

function condition<T>(
  key: string,
  generator: Generator<T>,
  values: readonly string[] | undefined,
  notValues: readonly string[] | undefined,
): Condition<T> {
  return { key, generator, values: values ?? [], notValues: notValues ?? [] };
}

/** The conditions of a `from.source`, in the order Istio ands them. */
function sourceConditions(
  source: NonNullable<NonNullable<AuthorizationPolicyRules["from"]>[number]["source"]>,
  policyNamespace: string,
): PrincipalCondition[] {
  return [
    condition("source.principal", principal.sourcePrincipal, source.principals, source.notPrincipals),
    condition(
      "request.auth.principal",
      principal.requestPrincipal,
      source.requestPrincipals,
      source.notRequestPrincipals,
    ),
    condition(
      "source.serviceAccount",
      principal.sourceServiceAccount(policyNamespace),
      source.serviceAccounts,
      source.notServiceAccounts,
    ),
    condition("source.trustDomain", principal.sourceTrustDomain, source.trustDomains, source.notTrustDomains),
    condition("source.namespace", principal.sourceNamespace, source.namespaces, source.notNamespaces),
    condition("remote.ip", principal.remoteIp, source.remoteIpBlocks, source.notRemoteIpBlocks),
    condition("source.ip", principal.sourceIp, source.ipBlocks, source.notIpBlocks),
  ].filter((c) => !isEmpty(c));
}

/** The conditions of a `to.operation`, in the order Istio ands them. */
function operationConditions(
  operation: NonNullable<NonNullable<AuthorizationPolicyRules["to"]>[number]["operation"]>,
): PermissionCondition[] {
  return [
    condition(permission.HOST_HEADER, permission.host, operation.hosts, operation.notHosts),
    condition(permission.METHOD_HEADER, permission.method, operation.methods, operation.notMethods),
    condition("path-matcher", permission.path, operation.paths, operation.notPaths),
    condition("destination.port", permission.destinationPort, operation.ports, operation.notPorts),
  ].filter((c) => !isEmpty(c));
}

/** A `when` key's condition, or undefined for an unknown attribute. */
function whenCondition(
  key: string,
  values: readonly string[],
  notValues: readonly string[],
  policyNamespace: string,
): WhenCondition | undefined {
  const onPermission = (generator: Generator<rbac.Permission>): WhenCondition => ({
    permission: condition(key, generator, values, notValues),
  });
  const onPrincipal = (generator: Generator<rbac.Principal>): WhenCondition => ({
    principal: condition(key, generator, values, notValues),
  });
  switch (key) {
    case "destination.ip":
      return onPermission(permission.destinationIp);
    case "destination.port":
      return onPermission(permission.destinationPort);
    case "connection.sni":
      return onPermission(permission.connectionSni);
    case "source.ip":
      return onPrincipal(principal.sourceIp);
    case "remote.ip":
      return onPrincipal(principal.remoteIp);
    case "source.namespace":
      return onPrincipal(principal.sourceNamespace);
    case "source.trustDomain":
      return onPrincipal(principal.sourceTrustDomain);
    case "source.serviceAccount":
      return onPrincipal(principal.sourceServiceAccount(policyNamespace));
    case "source.principal":
      return onPrincipal(principal.sourcePrincipal);
    case "request.auth.principal":
      return onPrincipal(principal.requestPrincipal);
    case "request.auth.audiences":
      return onPrincipal(principal.requestAudiences);
    case "request.auth.presenter":
      return onPrincipal(principal.requestPresenter);
  }
  if (key.startsWith("experimental.envoy.filters.")) return onPermission(permission.envoyFilterMetadata);
  if (key.startsWith("request.headers")) return onPrincipal(principal.requestHeader);
  if (key.startsWith("request.auth.claims")) return onPrincipal(principal.requestClaims);
  return undefined;
}

/** Source principals are rewritten for every trust domain alias; trust domains expanded to all of them. */
function migrateTrustDomain(c: PrincipalCondition, bundle: TrustDomainBundle): PrincipalCondition {
  const rewrite =
    c.key === "source.principal"
      ? replaceTrustDomainAliases
      : c.key === "source.trustDomain"
        ? expandTrustDomainAliases
        : undefined;
  if (rewrite === undefined) return c;
  return {
    ...c,
    values: c.values.length > 0 ? rewrite(bundle, c.values) : c.values,
    notValues: c.notValues.length > 0 ? rewrite(bundle, c.notValues) : c.notValues,
  };
}
