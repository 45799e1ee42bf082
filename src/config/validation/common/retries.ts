// Istio's HTTPRetry rule, shared by VirtualService routes and MeshConfig's default inbound retry policy.
import type { Findings } from "../findings.ts";
import { checkDurationField } from "./durations.ts";
import { goAtoi, goQuote } from "./format.ts";
import { has, type JsonObject, numberField, stringField } from "./json.ts";

// Envoy's x-envoy-retry-on and x-envoy-retry-grpc-on policies.
const RETRY_ON_POLICIES = new Set([
  "5xx",
  "gateway-error",
  "reset",
  "reset-before-request",
  "connect-failure",
  "retriable-4xx",
  "refused-stream",
  "retriable-status-codes",
  "retriable-headers",
  "envoy-ratelimited",
  "http3-post-connect-failure",
  "cancelled",
  "deadline-exceeded",
  "internal",
  "resource-exhausted",
  "unavailable",
]);

// The status codes Go's http.StatusText names.
/** The status codes Go's net/http names (http.StatusText is not empty): only these count as codes in retryOn. */
export const NAMED_HTTP_STATUSES: ReadonlySet<number> = new Set([
  100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307, 308, 400,
  401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 421, 422, 423, 424, 425,
  426, 428, 429, 431, 451, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
]);

/** Istio's validateHTTPRetry; `out` is positioned at the HTTPRetry message. */
export function validateHttpRetry(retries: JsonObject, out: Findings): void {
  const attempts = numberField(retries, "attempts");
  const retryOn = stringField(retries, "retryOn");
  if (attempts < 0) out.at("attempts").error("attempts cannot be negative");
  if (attempts === 0 && (has(retries, "perTryTimeout") || retryOn !== "" || has(retries, "retryRemoteLocalities"))) {
    out.error("http retry policy configured when attempts are set to 0 (disabled)");
  }
  checkDurationField(retries, "perTryTimeout", out);
  if (retryOn !== "") {
    for (const policy of retryOn.split(",")) {
      if (!NAMED_HTTP_STATUSES.has(goAtoi(policy) ?? 0) && !RETRY_ON_POLICIES.has(policy)) {
        out.at("retryOn").error(`${goQuote(policy)} is not a valid retryOn policy`);
      }
    }
  }
  checkDurationField(retries, "backoff", out);
}
