// Route retry policies (Istio route/retry/retry.go ConvertPolicy). No `retries` → the mesh
// defaultHttpRetryPolicy, else Istio's default (2 retries on connect-failure, refused-stream,
// unavailable, cancelled and retriable status codes, avoiding hosts already tried); attempts ≤ 0 → none.
import { create } from "@bufbuild/protobuf";
import { packAny, preEncoded, retryPreviousHosts, retryPreviousPriorities, route } from "../../api/index.ts";
import { NAMED_HTTP_STATUSES, type VirtualServiceHttpRetries } from "../../config/index.ts";
import { type Memos, weakTable } from "../../util/index.ts";
import { toDuration } from "../duration.ts";

export const DEFAULT_RETRY_ON = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes";
const DEFAULT_NUM_RETRIES = 2;
const HOST_SELECTION_RETRY_MAX_ATTEMPTS = 5n;
const PREVIOUS_HOSTS = "envoy.retry_host_predicates.previous_hosts";
const PREVIOUS_PRIORITIES = "envoy.retry_priorities.previous_priorities";

// Built once and shared by every policy: generated messages are never changed after they are built.
const PREVIOUS_HOSTS_PREDICATE = create(route.RetryPolicy_RetryHostPredicateSchema, {
  name: PREVIOUS_HOSTS,
  configType: {
    case: "typedConfig",
    value: packAny(
      retryPreviousHosts.PreviousHostsPredicateSchema,
      create(retryPreviousHosts.PreviousHostsPredicateSchema),
    ),
  },
});

function previousPriorities(): route.RetryPolicy_RetryPriority {
  const config = create(retryPreviousPriorities.PreviousPrioritiesConfigSchema, { updateFrequency: 2 });
  return create(route.RetryPolicy_RetryPrioritySchema, {
    name: PREVIOUS_PRIORITIES,
    configType: { case: "typedConfig", value: packAny(retryPreviousPriorities.PreviousPrioritiesConfigSchema, config) },
  });
}

/** Splits retryOn into Envoy conditions and retriable status codes ("5xx,503" → "5xx", [503]). */
export function parseRetryOn(retryOn: string): { retryOn: string; codes: number[] } {
  const conditions: string[] = [];
  const codes: number[] = [];
  for (const raw of retryOn.split(",")) {
    const part = raw.trim();
    if (part === "") continue;
    const code = /^[+-]?\d+$/.test(part) ? Number(part) : Number.NaN;
    if (NAMED_HTTP_STATUSES.has(code)) codes.push(code);
    else conditions.push(part);
  }
  return { retryOn: conditions.join(","), codes };
}

/**
 * The retry policy Istio applies when nothing configures one, a new message the caller may change.
 * `consistentHash` drops the previous-hosts predicate.
 */
export function defaultRetryPolicy(consistentHash = false): route.RetryPolicy {
  return create(route.RetryPolicySchema, {
    numRetries: DEFAULT_NUM_RETRIES,
    retryOn: DEFAULT_RETRY_ON,
    hostSelectionRetryMaxAttempts: HOST_SELECTION_RETRY_MAX_ATTEMPTS,
    retryHostPredicate: consistentHash ? [] : [PREVIOUS_HOSTS_PREDICATE],
  });
}

// Every route without retries shares one default policy, and every route with the same retries
// (config objects are never changed) one translated policy: building them per route was a tenth of RDS.
// They are pre-encoded: a route holding one copies its bytes.
const DEFAULT_POLICY = preEncoded(route.RetryPolicySchema, defaultRetryPolicy(false));
const DEFAULT_POLICY_CONSISTENT_HASH = preEncoded(route.RetryPolicySchema, defaultRetryPolicy(true));
const RETRY_POLICIES = weakTable<VirtualServiceHttpRetries, Map<boolean, route.RetryPolicy | undefined>>(
  "route/retryPolicies",
);

/**
 * Istio's ConvertPolicy: `retries` is the VirtualService's (or, when it has none, the mesh
 * defaultHttpRetryPolicy); undefined means "no retries". The policy is shared: never change it.
 */
export function translateRetries(
  memos: Memos,
  retries: VirtualServiceHttpRetries | undefined,
  consistentHash = false,
): route.RetryPolicy | undefined {
  if (!retries) return consistentHash ? DEFAULT_POLICY_CONSISTENT_HASH : DEFAULT_POLICY;
  const translated = memos.weak(RETRY_POLICIES);
  let byHash = translated.get(retries);
  if (!byHash) {
    byHash = new Map();
    translated.set(retries, byHash);
  }
  if (!byHash.has(consistentHash)) {
    const policy = buildRetryPolicy(retries, consistentHash);
    byHash.set(consistentHash, policy && preEncoded(route.RetryPolicySchema, policy));
  }
  return byHash.get(consistentHash);
}

function buildRetryPolicy(retries: VirtualServiceHttpRetries, consistentHash: boolean): route.RetryPolicy | undefined {
  if ((retries.attempts ?? 0) <= 0) return undefined;
  const out = defaultRetryPolicy(consistentHash);
  out.numRetries = retries.attempts;
  if (retries.retryOn) {
    const parsed = parseRetryOn(retries.retryOn);
    out.retryOn = parsed.retryOn;
    out.retriableStatusCodes = parsed.codes;
    if (parsed.codes.length > 0 && !out.retryOn.includes("retriable-status-codes")) {
      out.retryOn += ",retriable-status-codes";
    }
  }
  const perTry = toDuration(retries.perTryTimeout);
  if (perTry) out.perTryTimeout = perTry;
  if (retries.retryIgnorePreviousHosts !== undefined && retries.retryIgnorePreviousHosts !== null) {
    out.retryHostPredicate = retries.retryIgnorePreviousHosts ? [PREVIOUS_HOSTS_PREDICATE] : [];
  }
  if (retries.retryRemoteLocalities) out.retryPriority = previousPriorities();
  const backoff = toDuration(retries.backoff);
  if (backoff) out.retryBackOff = create(route.RetryPolicy_RetryBackOffSchema, { baseInterval: backoff });
  return out;
}
