// The security policies of the ambient index (Istio's PolicyCollections and buildWorkloadPolicies,
// pilot/pkg/serviceregistry/ambient policies.go and workloads.go): every Authorization ztunnel is sent,
// and which of them a workload references. A policy is recomputed when its object changes (a
// PeerAuthentication's converted form also when its namespace's or the mesh's policy does); a
// workload, when a policy that could select it or a PeerAuthentication that could apply to it does.

import { create } from "@bufbuild/protobuf";
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
import { type PolicyInfo, type ServiceInfo, type StatusMessage, sameResource } from "./model.ts";
import type { Waypoint } from "./waypoints.ts";

export interface PolicyInputs {
  authorizationPolicies: Collection<AuthorizationPolicy>;
  peerAuthentications: Collection<PeerAuthentication>;
  /** The waypoints, for the policies that allow their identities (allowFromWaypoint). */
  waypoints: Collection<Waypoint>;
  /** The mesh's trust domain, in the identities those policies allow. */
  trustDomain: Collection<{ trustDomain: string }>;
}

export interface PolicyOptions {
  /** The mesh config's root namespace: its policies without a selector are mesh-wide. */
  rootNamespace: () => string;
  /** AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY: send `istio.io/dry-run` AuthorizationPolicies. */
  dryRunPolicies: boolean;
  /**
   * PILOT_AUTO_ALLOW_WAYPOINT_POLICY: a policy per waypoint allowing its identities, referenced by the
   * workloads it fronts (alone, it denies their traffic that did not come through the waypoint).
   */
  allowFromWaypoint: boolean;
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
  const waypointPolicies = derive(
    inputs.waypoints,
    (ctx, waypoint) => {
      if (!options.allowFromWaypoint) return undefined;
      const trustDomain = ctx.fetch(inputs.trustDomain)[0]?.trustDomain ?? "cluster.local";
      const authorization = allowFromWaypointPolicy(waypoint, trustDomain);
      return authorization && policyInfo(authorization, undefined);
    },
    collectionOptions("ambient/allow-from-waypoint-policies"),
  );
  const policies = join(
    [authorizationPolicies, peerAuthenticationPolicies, staticStrictByName, waypointPolicies],
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

/** The name of a waypoint's allowing policy (`_` cannot be in a Kubernetes name); none without identities. */
function allowFromWaypointName(waypoint: Waypoint): string | undefined {
  if (waypoint.serviceAccounts.length === 0) return undefined;
  return `istio_allow_waypoint_${waypoint.namespace}_${waypoint.name}`;
}

/** Istio's implicitWaypointPolicy: ALLOW from the waypoint's service accounts (workloads name it, no selector). */
function allowFromWaypointPolicy(waypoint: Waypoint, trustDomain: string): security.Authorization | undefined {
  const name = allowFromWaypointName(waypoint);
  if (!name) return undefined;
  const principals = waypoint.serviceAccounts.map((sa) => ({
    matchType: { case: "exact" as const, value: `${trustDomain}/ns/${waypoint.namespace}/sa/${sa}` },
  }));
  return create(security.AuthorizationSchema, {
    name,
    namespace: waypoint.namespace,
    scope: security.Scope.WORKLOAD_SELECTOR,
    action: security.Action.ALLOW,
    groups: [{ rules: [{ matches: [{ principals }] }] }],
  });
}

/**
 * The allowing policies a workload references (Istio's implicitWaypointPolicies): those of the
 * waypoints of its services other than its own, by key, then its own waypoint's.
 */
export function allowFromWaypointPolicies(
  ctx: FetchContext,
  waypoints: Collection<Waypoint>,
  own: string | undefined,
  services: readonly ServiceInfo[],
): string[] {
  const keys = [...new Set(services.flatMap((s) => (s.waypointKey && s.waypointKey !== own ? [s.waypointKey] : [])))];
  keys.sort(compareStrings);
  if (own) keys.push(own);
  return keys.flatMap((key) =>
    ctx.fetch(waypoints, { key }).flatMap((w) => {
      const name = allowFromWaypointName(w);
      return name ? [`${w.namespace}/${name}`] : [];
    }),
  );
}
