// Security policies as ztunnel enforces them: AuthorizationPolicy and PeerAuthentication converted to
// WDS's `istio.security.Authorization` (Istio's pilot/pkg/serviceregistry/ambient authorization.go and
// policies.go). ztunnel sees connections, not requests: a rule's L4 parts (peer identity, namespace,
// IPs, ports) are kept; one naming an HTTP attribute is dropped from an ALLOW policy (it then matches
// nothing: more restrictive) and kept without its HTTP parts in a DENY policy (it matches more: more
// restrictive too), and the policy's status says so.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { security } from "../api/index.ts";
import type {
  AuthorizationPolicy,
  AuthorizationPolicyRules,
  AuthorizationPolicyRulesFromSource,
  AuthorizationPolicyRulesToOperation,
  AuthorizationPolicyRulesWhen,
  PeerAuthentication,
  PeerAuthenticationMtls,
} from "../config/types/index.ts";
import { compareStrings, parseGoBool } from "../util/index.ts";
import { ipBlockBytes } from "./ip-bytes.ts";
import type { StatusMessage } from "./model.ts";

type MatchInit = MessageInitShape<typeof security.MatchSchema>;
type RulesInit = MessageInitShape<typeof security.RulesSchema>;
type GroupInit = MessageInitShape<typeof security.GroupSchema>;
type StringMatchInit = MessageInitShape<typeof security.StringMatchSchema>;

/** The DENY-without-mTLS policy every workload under an effective STRICT PeerAuthentication references. */
export const STATIC_STRICT_POLICY_NAME = "istio_converted_static_strict";

const DRY_RUN_ANNOTATION = "istio.io/dry-run";
const UNSUPPORTED_VALUE = "UnsupportedValue";

export interface AuthorizationPolicyConversion {
  /** What ztunnel is sent; absent when ztunnel enforces nothing of the policy. */
  authorization?: security.Authorization;
  /** Why the policy is not enforced as written (absent when it is, or when it is a waypoint's). */
  status?: StatusMessage;
  /** What of the object could not be read (Istio only logs these), naming the object and field. */
  problems: string[];
}

export interface AmbientAuthorizationOptions {
  /** AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY: send `istio.io/dry-run` policies to ztunnel (1.29+). */
  dryRunPolicies: boolean;
}

/** An AuthorizationPolicy as ztunnel enforces it; `rootNamespace` is the mesh config's root namespace. */
export function convertAuthorizationPolicy(
  policy: AuthorizationPolicy,
  rootNamespace: string,
  options: AmbientAuthorizationOptions,
): AuthorizationPolicyConversion {
  const { name = "", namespace = "" } = policy.metadata;
  const spec = policy.spec ?? {};
  const problems: string[] = [];
  const dryRun = readDryRun(policy, problems);
  if (dryRun && !options.dryRunPolicies) {
    const message = `found policy "${namespace}/${name}" using dry-run annotation, but support for ambient dry-run authorizationPolicies isn't enabled`;
    return { status: { reason: UNSUPPORTED_VALUE, message }, problems };
  }
  // A policy with a target reference is a waypoint's, not ztunnel's.
  if ((spec.targetRefs ?? []).length > 0 || spec.targetRef) return { problems };

  let action: security.Action;
  let consequence: string;
  switch (spec.action ?? "ALLOW") {
    case "ALLOW":
      action = security.Action.ALLOW;
      consequence = "Within an ALLOW policy, rules matching HTTP attributes are omitted.";
      break;
    case "DENY":
      action = security.Action.DENY;
      consequence = "DENY policy with HTTP attributes is enforced without the HTTP rules.";
      break;
    default:
      return {
        status: { reason: UNSUPPORTED_VALUE, message: `ztunnel does not support the ${spec.action} action` },
        problems,
      };
  }

  const groups: GroupInit[] = [];
  const unsupported = new Set<string>();
  for (const rule of spec.rules ?? []) {
    const converted = convertRule(rule, namespace);
    for (const attribute of converted.unsupported) unsupported.add(attribute);
    // An ALLOW rule ztunnel cannot check in full allows nothing; a DENY rule denies on its L4 part.
    if (action === security.Action.DENY || converted.unsupported.length === 0) groups.push({ rules: converted.rules });
  }
  const authorization = create(security.AuthorizationSchema, {
    name,
    namespace,
    scope: scopeOf(policy, rootNamespace),
    action,
    groups,
    dryRun,
  });
  if (unsupported.size === 0) return { authorization, problems };
  const found = [...unsupported].sort(compareStrings).join(", ");
  const message =
    `ztunnel does not support HTTP attributes (found: ${found}). ` +
    `In ambient mode you must use a waypoint proxy to enforce HTTP rules. ${consequence} ` +
    "This will be more restrictive than requested.";
  return { authorization, status: { reason: UNSUPPORTED_VALUE, message }, problems };
}

/** `istio.io/dry-run` as Go's strconv.ParseBool reads it; a value it cannot read is false, and a problem. */
function readDryRun(policy: AuthorizationPolicy, problems: string[]): boolean {
  const value = policy.metadata.annotations?.[DRY_RUN_ANNOTATION] ?? "";
  if (value === "") return false;
  const dryRun = parseGoBool(value);
  if (dryRun === undefined) {
    const { namespace = "", name = "" } = policy.metadata;
    problems.push(
      `AuthorizationPolicy ${namespace}/${name}: metadata.annotations[${DRY_RUN_ANNOTATION}]: ${JSON.stringify(value)} is not a boolean`,
    );
  }
  return dryRun ?? false;
}

/** A policy without a selector covers its namespace, or the whole mesh in the root namespace. */
function scopeOf(policy: AuthorizationPolicy, rootNamespace: string): security.Scope {
  if (policy.spec?.selector) return security.Scope.WORKLOAD_SELECTOR;
  return policy.metadata.namespace === rootNamespace ? security.Scope.GLOBAL : security.Scope.NAMESPACE;
}

/** One rule as the rules of one group (ANDed): its `to`s, its `from`s, then each `when`. */
function convertRule(rule: AuthorizationPolicyRules, namespace: string): { rules: RulesInit[]; unsupported: string[] } {
  const unsupported: string[] = [];
  const rules: RulesInit[] = [];
  const to = rule.to ?? [];
  if (to.length > 0) {
    rules.push({
      matches: to.map(({ operation = {} }) => {
        unsupported.push(...httpOperationFields(operation));
        return { destinationPorts: ports(operation.ports), notDestinationPorts: ports(operation.notPorts) };
      }),
    });
  }
  const from = rule.from ?? [];
  if (from.length > 0) {
    rules.push({
      matches: from.map(({ source = {} }) => {
        unsupported.push(...unsupportedSourceFields(source));
        return sourceMatch(source, namespace);
      }),
    });
  }
  for (const condition of rule.when ?? []) {
    if (!L4_CONDITION_KEYS.has(condition.key)) unsupported.push(condition.key);
    rules.push({ matches: [conditionMatch(condition)] });
  }
  return { rules, unsupported };
}

const HTTP_OPERATION_FIELDS = ["hosts", "notHosts", "methods", "notMethods", "paths", "notPaths"] as const;

function httpOperationFields(operation: AuthorizationPolicyRulesToOperation): string[] {
  return HTTP_OPERATION_FIELDS.filter((field) => (operation[field] ?? []).length > 0);
}

// Istio ignores trustDomains in ambient, so an ALLOW rule naming one would allow every trust domain;
// Sluice counts them among what ztunnel cannot check (see docs/DIFFERENCES.md).
const UNSUPPORTED_SOURCE_FIELDS = [
  "remoteIpBlocks",
  "notRemoteIpBlocks",
  "requestPrincipals",
  "notRequestPrincipals",
  "trustDomains",
  "notTrustDomains",
] as const;

function unsupportedSourceFields(source: AuthorizationPolicyRulesFromSource): string[] {
  return UNSUPPORTED_SOURCE_FIELDS.filter((field) => (source[field] ?? []).length > 0);
}

function sourceMatch(source: AuthorizationPolicyRulesFromSource, namespace: string): MatchInit {
  return {
    sourceIps: ipBlocks(source.ipBlocks),
    notSourceIps: ipBlocks(source.notIpBlocks),
    namespaces: stringMatches(source.namespaces),
    notNamespaces: stringMatches(source.notNamespaces),
    serviceAccounts: serviceAccounts(source.serviceAccounts, namespace),
    notServiceAccounts: serviceAccounts(source.notServiceAccounts, namespace),
    principals: stringMatches(source.principals),
    notPrincipals: stringMatches(source.notPrincipals),
  };
}

/** The `when` keys ztunnel can check; any other makes the rule an HTTP one. */
const L4_CONDITION_KEYS: ReadonlySet<string> = new Set([
  "source.ip",
  "source.namespace",
  "source.principal",
  "destination.ip",
  "destination.port",
]);

/** A condition as one match: its values and notValues in the fields of its key (none for other keys). */
function conditionMatch({ key, values, notValues }: AuthorizationPolicyRulesWhen): MatchInit {
  switch (key) {
    case "source.namespace":
      return { namespaces: stringMatches(values), notNamespaces: stringMatches(notValues) };
    case "source.principal":
      return { principals: stringMatches(values), notPrincipals: stringMatches(notValues) };
    case "source.ip":
      return { sourceIps: ipBlocks(values), notSourceIps: ipBlocks(notValues) };
    case "destination.ip":
      return { destinationIps: ipBlocks(values), notDestinationIps: ipBlocks(notValues) };
    case "destination.port":
      return { destinationPorts: ports(values), notDestinationPorts: ports(notValues) };
    default:
      return {};
  }
}

/** `*` is presence, a leading `*` a suffix match, a trailing one a prefix match, else exact. */
function stringMatches(values: readonly string[] = []): StringMatchInit[] {
  return values.map((value): StringMatchInit => {
    if (value === "*") return { matchType: { case: "presence", value: {} } };
    if (value.startsWith("*")) return { matchType: { case: "suffix", value: value.slice(1) } };
    if (value.endsWith("*")) return { matchType: { case: "prefix", value: value.slice(0, -1) } };
    return { matchType: { case: "exact", value } };
  });
}

/** `ns/sa`, or a bare `sa` of the policy's own namespace. */
function serviceAccounts(values: readonly string[] = [], namespace: string) {
  return values.map((value) => {
    const slash = value.indexOf("/");
    return slash < 0
      ? { namespace, serviceAccount: value }
      : { namespace: value.slice(0, slash), serviceAccount: value.slice(slash + 1) };
  });
}

/** Decimal ports up to 65535; anything else is skipped, as Istio does (validation refuses it first). */
function ports(values: readonly string[] = []): number[] {
  return values.filter((value) => /^[0-9]+$/.test(value) && Number(value) <= 65535).map(Number);
}

/** Addresses and CIDR blocks; a value that is neither is skipped, as Istio does (validation refuses it first). */
function ipBlocks(values: readonly string[] = []): MessageInitShape<typeof security.AddressSchema>[] {
  return values.flatMap((value) => ipBlockBytes(value) ?? []);
}

/** Matches a connection without a peer identity, i.e. one not over mTLS. */
const WITHOUT_MTLS: MatchInit = { notPrincipals: [{ matchType: { case: "presence", value: {} } }] };

/**
 * The policy every workload under an effective STRICT mode references (Istio's static STRICT policy):
 * deny what comes without mTLS. Istio sends it once any PeerAuthentication exists.
 */
export function staticStrictPolicy(rootNamespace: string): security.Authorization {
  return create(security.AuthorizationSchema, {
    name: STATIC_STRICT_POLICY_NAME,
    namespace: rootNamespace,
    scope: security.Scope.WORKLOAD_SELECTOR,
    action: security.Action.DENY,
    groups: [{ rules: [{ matches: [WITHOUT_MTLS] }] }],
  });
}

/** The name ztunnel knows a PeerAuthentication's converted policy by. */
export function peerAuthenticationPolicyName(name: string): string {
  return `converted_peer_authentication_${name}`;
}

type MtlsMode = NonNullable<PeerAuthenticationMtls["mode"]>;

function modeOf(mtls: PeerAuthenticationMtls | undefined): MtlsMode {
  return mtls?.mode ?? "UNSET";
}

/**
 * The port-level exceptions of a workload PeerAuthentication as a DENY policy (Istio's
 * convertPeerAuthentication), given the namespace's and the mesh's (root namespace, no selector)
 * policies in force. Undefined when the policy has nothing ztunnel needs beyond the static STRICT
 * policy: not a workload policy with port-level modes, or no port that differs from what it inherits.
 */
export function convertPeerAuthentication(
  workload: PeerAuthentication,
  namespacePolicy: PeerAuthentication | undefined,
  rootPolicy: PeerAuthentication | undefined,
  rootNamespace: string,
): security.Authorization | undefined {
  const { name = "", namespace = "" } = workload.metadata;
  const spec = workload.spec ?? {};
  const portModes = Object.entries(spec.portLevelMtls ?? {})
    .filter(([port]) => /^[0-9]+$/.test(port))
    .map(([port, mtls]) => ({ port: Number(port), mode: modeOf(mtls) }))
    .sort((a, b) => a.port - b.port);
  if (namespace === rootNamespace || !spec.selector || portModes.length === 0) return undefined;

  const mode = modeOf(spec.mtls);
  // What the workload inherits: the namespace's mode when it sets one, else the mesh's.
  const namespaceMode = modeOf(namespacePolicy?.spec?.mtls);
  const inheritsStrict =
    namespaceMode === "UNSET" ? modeOf(rootPolicy?.spec?.mtls) === "STRICT" : namespaceMode === "STRICT";
  const effectiveStrict = mode === "STRICT" || (mode === "UNSET" && inheritsStrict);

  const rules: RulesInit[] = mode === "STRICT" ? [{ matches: [WITHOUT_MTLS] }] : [];
  // Groups are ORed: one per STRICT port the workload's own mode leaves open.
  const groups: GroupInit[] = [];
  let foundOpenPort = false;
  for (const { port, mode: portMode } of portModes) {
    if (portMode === "STRICT" && !effectiveStrict) {
      groups.push({ rules: [{ matches: [{ ...WITHOUT_MTLS, destinationPorts: [port] }] }] });
    } else if ((portMode === "PERMISSIVE" || portMode === "DISABLE") && effectiveStrict) {
      foundOpenPort = true;
      // Deny only off this port: the rules of a group are ANDed.
      rules.push({ matches: [{ notDestinationPorts: [port] }] });
    }
  }
  if (!foundOpenPort && (mode === "STRICT" || groups.length === 0)) return undefined;
  // An inherited STRICT goes into this policy, which the workload references instead of the static one.
  if (inheritsStrict && foundOpenPort) rules.push({ matches: [WITHOUT_MTLS] });
  if (rules.length > 0) groups.push({ rules });
  return create(security.AuthorizationSchema, {
    name: peerAuthenticationPolicyName(name),
    namespace,
    scope: security.Scope.WORKLOAD_SELECTOR,
    action: security.Action.DENY,
    groups,
  });
}

/** The oldest of the two by creationTimestamp (a missing one is the oldest); `current` on a tie. */
export function olderPeerAuthentication(
  current: PeerAuthentication | undefined,
  candidate: PeerAuthentication,
): PeerAuthentication {
  return current && creationTime(current) <= creationTime(candidate) ? current : candidate;
}

function creationTime(policy: PeerAuthentication): number {
  const time = Date.parse(policy.metadata.creationTimestamp ?? "");
  return Number.isNaN(time) ? 0 : time;
}

/**
 * The PeerAuthentication-derived policies a workload references (Istio's
 * convertedSelectorPeerAuthentications), as `namespace/name`, given the PeerAuthentications that apply
 * to it (the mesh's, its namespace's, its own; the oldest wins at each level): the static STRICT
 * policy when its effective mode is STRICT, or instead its own policy's converted form when that
 * holds port exceptions to its mode.
 */
export function peerAuthenticationPolicyKeys(rootNamespace: string, applying: readonly PeerAuthentication[]): string[] {
  let mesh: PeerAuthentication | undefined;
  let namespaceWide: PeerAuthentication | undefined;
  let workload: PeerAuthentication | undefined;
  for (const policy of applying) {
    const inRoot = policy.metadata.namespace === rootNamespace;
    if (Object.keys(policy.spec?.selector?.matchLabels ?? {}).length === 0) {
      if (inRoot) mesh = olderPeerAuthentication(mesh, policy);
      else namespaceWide = olderPeerAuthentication(namespaceWide, policy);
    } else if (!inRoot) {
      workload = olderPeerAuthentication(workload, policy);
    }
  }
  // Mesh, then namespace, then workload: UNSET inherits.
  let strict = modeOf(mesh?.spec?.mtls) === "STRICT";
  const namespaceMode = modeOf(namespaceWide?.spec?.mtls);
  if (namespaceMode !== "UNSET") strict = namespaceMode === "STRICT";
  const keys: string[] = [];
  if (workload) {
    const mode = modeOf(workload.spec?.mtls);
    if (mode !== "UNSET") strict = mode === "STRICT";
    const portModes = Object.values(workload.spec?.portLevelMtls ?? {}).map(modeOf);
    const open = (m: MtlsMode) => m === "PERMISSIVE" || m === "DISABLE";
    let exceptions: boolean;
    if (mode === "STRICT") exceptions = portModes.some(open);
    else if (open(mode)) exceptions = portModes.includes("STRICT");
    // Istio counts only PERMISSIVE ports as exceptions to an inherited STRICT: a DISABLE port stays STRICT.
    else exceptions = strict ? portModes.includes("PERMISSIVE") : portModes.includes("STRICT");
    if (exceptions) {
      // Its converted form holds the workload's STRICT part too, in place of the static policy.
      strict = false;
      keys.push(`${workload.metadata.namespace ?? ""}/${peerAuthenticationPolicyName(workload.metadata.name ?? "")}`);
    }
  }
  if (strict) keys.push(`${rootNamespace}/${STATIC_STRICT_POLICY_NAME}`);
  return keys.sort(compareStrings);
}
