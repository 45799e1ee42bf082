// The security policies of the ambient index (Istio's PolicyCollections and buildWorkloadPolicies,
// pilot/pkg/serviceregistry/ambient policies.go and workloads.go): every Authorization ztunnel is sent,
// and which of them a workload references. A policy is recomputed when its object changes (a
// PeerAuthentication's converted form also when its namespace's or the mesh's policy does); a
// workload, when a policy that could select it or a PeerAuthentication that could apply to it does.
import type { Logger } from "pino";
import { packAny, security } from "../api/index.ts";
import type { AuthorizationPolicy, PeerAuthentication } from "../config/types/index.ts";
import type { Collection, DebugRegistry, FetchContext, Labels } from "../krt/index.ts";
import { derive, join, labelsContain, singleton } from "../krt/index.ts";
import { compareStrings } from "../util/index.ts";
import {
  convertAuthorizationPolicy,
  convertPeerAuthentication,
  olderPeerAuthentication,
  peerAuthenticationPolicyKeys,
  staticStrictPolicy,
} from "./authorization.ts";
import { type PolicyInfo, type StatusMessage, sameResource } from "./model.ts";

export interface PolicyInputs {
  authorizationPolicies: Collection<AuthorizationPolicy>;
  peerAuthentications: Collection<PeerAuthentication>;
}

export interface PolicyOptions {
  /** The mesh config's root namespace: its policies without a selector are mesh-wide. */
  rootNamespace: () => string;
  /** AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY: send `istio.io/dry-run` AuthorizationPolicies. */
  dryRunPolicies: boolean;
  /** Where what an object holds that cannot be read is told (Istio only logs it). */
  log?: Logger;
  debug?: DebugRegistry;
}

/** How ztunnel takes an AuthorizationPolicy: what it is sent of it, or why not all of it (for its status). */
export interface ZtunnelBinding {
  name: string;
  namespace: string;
  generation: number;
  selector: Labels | undefined;
  authorization?: security.Authorization;
  status?: StatusMessage;
}

export interface PolicyCollections {
  /** Every AuthorizationPolicy, converted once: what the two others and its status are made of. */
  ztunnelBindings: Collection<ZtunnelBinding>;
  /** The AuthorizationPolicies ztunnel enforces: what workloads select policies from. */
  authorizationPolicies: Collection<PolicyInfo>;
  /** Every policy sent: those, PeerAuthentications' port exceptions and the static STRICT policy. */
  policies: Collection<PolicyInfo>;
}

function policyInfo(authorization: security.Authorization, selector: Labels | undefined): PolicyInfo {
  return {
    name: `${authorization.namespace}/${authorization.name}`,
    namespace: authorization.namespace,
    selector,
    authorization,
    resource: packAny(security.AuthorizationSchema, authorization),
  };
}

/** Two infos are the same when they send the same bytes and select alike. */
function samePolicy(a: PolicyInfo, b: PolicyInfo): boolean {
  return (
    a.name === b.name &&
    sameResource(a.resource, b.resource) &&
    JSON.stringify(a.selector) === JSON.stringify(b.selector)
  );
}

export function policyCollections(inputs: PolicyInputs, options: PolicyOptions): PolicyCollections {
  const { debug } = options;
  const collectionOptions = (name: string) => ({ name, keyOf: (p: PolicyInfo) => p.name, equals: samePolicy, debug });
  const ztunnelBindings = derive(
    inputs.authorizationPolicies,
    (_ctx, policy): ZtunnelBinding => {
      const { authorization, status, problems } = convertAuthorizationPolicy(policy, options.rootNamespace(), options);
      for (const problem of problems) options.log?.warn(problem);
      return {
        name: policy.metadata.name ?? "",
        namespace: policy.metadata.namespace ?? "",
        generation: policy.metadata.generation ?? 0,
        selector: policy.spec?.selector?.matchLabels,
        ...(authorization ? { authorization } : {}),
        ...(status ? { status } : {}),
      };
    },
    { name: "ambient/ztunnel-bindings", keyOf: (b) => `${b.namespace}/${b.name}`, debug },
  );
  const authorizationPolicies = derive(
    ztunnelBindings,
    (_ctx, binding) => binding.authorization && policyInfo(binding.authorization, binding.selector),
    collectionOptions("ambient/authorization-policies"),
  );
  // The namespace-wide PeerAuthentications (mesh-wide in the root namespace).
  const namespaceWide = inputs.peerAuthentications.addIndex("ambient/peer-authentications-by-namespace", (p) =>
    p.spec?.selector ? [] : [p.metadata.namespace ?? ""],
  );
  const oldestOf = (policies: readonly PeerAuthentication[]) =>
    policies.reduce<PeerAuthentication | undefined>(olderPeerAuthentication, undefined);
  const peerAuthenticationPolicies = derive(
    inputs.peerAuthentications,
    (ctx, policy) => {
      const rootNamespace = options.rootNamespace();
      const authorization = convertPeerAuthentication(
        policy,
        oldestOf(ctx.fetchIndex(namespaceWide, policy.metadata.namespace ?? "")),
        oldestOf(ctx.fetchIndex(namespaceWide, rootNamespace)),
        rootNamespace,
      );
      // Workloads reference it by name (peerAuthenticationPolicyKeys), not by selector.
      return authorization && policyInfo(authorization, undefined);
    },
    collectionOptions("ambient/peer-authentication-policies"),
  );
  // Sent once any PeerAuthentication exists.
  const staticStrict = singleton(
    (ctx) =>
      ctx.fetch(inputs.peerAuthentications).length > 0
        ? policyInfo(staticStrictPolicy(options.rootNamespace()), undefined)
        : undefined,
    { name: "ambient/static-strict-policy", equals: samePolicy, debug },
  );
  // Keyed by its name, as the join's inputs must be.
  const staticStrictByName = derive(
    staticStrict.asCollection(),
    (_ctx, policy) => policy,
    collectionOptions("ambient/static-strict-policy-by-name"),
  );
  const policies = join(
    [authorizationPolicies, peerAuthenticationPolicies, staticStrictByName],
    collectionOptions("ambient/policies"),
  );
  return { ztunnelBindings, authorizationPolicies, policies };
}

/**
 * The policies a workload references, by resource name (Istio's buildWorkloadPolicies): the
 * AuthorizationPolicies of the root namespace or its own whose non-empty selector selects its labels,
 * sorted, then the PeerAuthentication-derived ones that apply to it.
 */
export function workloadPolicies(
  ctx: FetchContext,
  collections: { authorizationPolicies: Collection<PolicyInfo>; peerAuthentications: Collection<PeerAuthentication> },
  rootNamespace: string,
  namespace: string,
  labels: Labels,
): string[] {
  const namespaces = namespace === rootNamespace ? [namespace] : [rootNamespace, namespace];
  const selected = namespaces.flatMap((ns) =>
    ctx.fetch(collections.authorizationPolicies, { namespace: ns, selectsNonEmpty: labels }),
  );
  const names = selected.map((p) => p.name).sort(compareStrings);
  // Its namespace's that select it (or all of it), and the mesh's.
  const applying = ctx.fetch(collections.peerAuthentications, {
    namespace,
    where: (p) => labelsContain(labels, p.spec?.selector?.matchLabels ?? {}),
  });
  if (namespace !== rootNamespace) {
    applying.push(
      ...ctx.fetch(collections.peerAuthentications, { namespace: rootNamespace, where: (p) => !p.spec?.selector }),
    );
  }
  return [...names, ...peerAuthenticationPolicyKeys(rootNamespace, applying)];
}
