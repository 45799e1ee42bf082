// Route retry policies (Istio route/retry/retry.go ConvertPolicy). No `retries` → the mesh
// defaultHttpRetryPolicy, else Istio's default (2 retries on connect-failure, refused-stream,
// unavailable, cancelled and retriable status codes, avoiding hosts already tried); attempts ≤ 0 → none.
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { route } from "../../api/index.ts";
import type { VirtualServiceHttpRetries } from "../../config/index.ts";
import { toDuration } from "./duration.ts";
import { PreviousHostsPredicateSchema, PreviousPrioritiesConfigSchema } from "./retry-extensions.ts";

export const DEFAULT_RETRY_ON = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes";
const DEFAULT_NUM_RETRIES = 2;
const HOST_SELECTION_RETRY_MAX_ATTEMPTS = 5n;
const PREVIOUS_HOSTS = "envoy.retry_host_predicates.previous_hosts";
const PREVIOUS_PRIORITIES = "envoy.retry_priorities.previous_priorities";

/** The status codes Go's net/http names (http.StatusText ≠ ""): only these count as codes in retryOn. */
const HTTP_STATUS_CODES: ReadonlySet<number> = new Set([
  100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307, 308, 400,
  401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 421, 422, 423, 424, 425,
  426, 428, 429, 431, 451, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
]);

function previousHostsPredicate(): route.RetryPolicy_RetryHostPredicate {
  return create(route.RetryPolicy_RetryHostPredicateSchema, {
    name: PREVIOUS_HOSTS,
    configType: {
      case: "typedConfig",
      value: anyPack(PreviousHostsPredicateSchema, create(PreviousHostsPredicateSchema)),
    },
  });
}

function previousPriorities(): route.RetryPolicy_RetryPriority {
  const config = create(PreviousPrioritiesConfigSchema, { updateFrequency: 2 });
  return create(route.RetryPolicy_RetryPrioritySchema, {
    name: PREVIOUS_PRIORITIES,
    configType: { case: "typedConfig", value: anyPack(PreviousPrioritiesConfigSchema, config) },
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
    if (HTTP_STATUS_CODES.has(code)) codes.push(code);
    else conditions.push(part);
  }
  return { retryOn: conditions.join(","), codes };
}

/** The retry policy Istio applies when nothing configures one. `consistentHash` drops the previous-hosts predicate. */
export function defaultRetryPolicy(consistentHash = false): route.RetryPolicy {
  return create(route.RetryPolicySchema, {
    numRetries: DEFAULT_NUM_RETRIES,
    retryOn: DEFAULT_RETRY_ON,
    hostSelectionRetryMaxAttempts: HOST_SELECTION_RETRY_MAX_ATTEMPTS,
    retryHostPredicate: consistentHash ? [] : [previousHostsPredicate()],
  });
}

/**
 * Istio's ConvertPolicy: `retries` is the VirtualService's (or, when it has none, the mesh
 * defaultHttpRetryPolicy); undefined means "no retries".
 */
export function translateRetries(
  retries: VirtualServiceHttpRetries | undefined,
  consistentHash = false,
): route.RetryPolicy | undefined {
  if (!retries) return defaultRetryPolicy(consistentHash);
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
    out.retryHostPredicate = retries.retryIgnorePreviousHosts ? [previousHostsPredicate()] : [];
  }
  if (retries.retryRemoteLocalities) out.retryPriority = previousPriorities();
  const backoff = toDuration(retries.backoff);
  if (backoff) out.retryBackOff = create(route.RetryPolicy_RetryBackOffSchema, { baseInterval: backoff });
  return out;
}
