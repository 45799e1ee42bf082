import assert from "node:assert/strict";
import { test } from "node:test";
import { routeAction, runGoldenCase, vhostNamed } from "../../../test/support/route-cases.ts";
import { MemoStore } from "../../util/memo.ts";
import { defaultRetryPolicy, parseRetryOn, translateRetries } from "./retry.ts";

const memos = new MemoStore();

function routes(name = "retry") {
  return vhostNamed(runGoldenCase(name).get("9080"), "reviews.default.svc.cluster.local:9080").routes;
}

test("retry golden: VS timeout as timeout and max_grpc_timeout", () => {
  const action = routeAction(routes()[0]);
  assert.equal(action.timeout?.seconds, 1n);
  assert.equal(action.timeout?.nanos, 500_000_000);
  assert.deepEqual(action.maxGrpcTimeout, action.timeout);
});

test("retries: attempts, perTryTimeout, status codes split from retryOn, remote localities, backoff", () => {
  const p = routeAction(routes()[0]).retryPolicy;
  assert.equal(p?.numRetries, 3);
  assert.equal(p?.retryOn, "gateway-error,connect-failure,999,retriable-status-codes");
  assert.deepEqual(p?.retriableStatusCodes, [503]);
  assert.equal(p?.perTryTimeout?.nanos, 500_000_000);
  assert.equal(p?.retryPriority?.name, "envoy.retry_priorities.previous_priorities");
  assert.equal(p?.retryBackOff?.baseInterval?.nanos, 25_000_000);
  assert.equal(p?.retryHostPredicate.length, 1);
});

test("retryIgnorePreviousHosts false drops the previous-hosts predicate; codes only → retriable-status-codes", () => {
  const p = routeAction(routes()[1]).retryPolicy;
  assert.equal(p?.retryHostPredicate.length, 0);
  assert.equal(p?.retryOn, ",retriable-status-codes");
  assert.deepEqual(p?.retriableStatusCodes, [503]);
});

test("attempts 0 means no retry policy; no retries means Istio's default and a 0s timeout", () => {
  assert.equal(routeAction(routes()[2]).retryPolicy, undefined);
  const defaults = routeAction(routes()[3]);
  assert.deepEqual(defaults.retryPolicy, defaultRetryPolicy());
  assert.equal(defaults.timeout?.seconds, 0n);
  assert.equal(defaults.timeout?.nanos, 0);
});

test("meshConfig.defaultHttpRetryPolicy replaces the default for VS routes and default routes", () => {
  const config = runGoldenCase("retry-mesh").get("9080");
  for (const vh of ["reviews.default.svc.cluster.local:9080", "ratings.default.svc.cluster.local:9080"]) {
    const p = routeAction(vhostNamed(config, vh).routes[0]).retryPolicy;
    assert.equal(p?.numRetries, 5);
    assert.equal(p?.retryOn, "5xx,reset");
    assert.equal(p?.perTryTimeout?.seconds, 2n);
  }
  assert.equal(
    routeAction(vhostNamed(config, "reviews.default.svc.cluster.local:9080").routes[0]).timeout?.seconds,
    10n,
  );
});

test("a consistent hash drops the previous-hosts predicate; only Go's known status codes count", () => {
  assert.equal(defaultRetryPolicy(true).retryHostPredicate.length, 0);
  assert.equal(translateRetries(memos, { attempts: 2 }, true)?.retryHostPredicate.length, 0);
  assert.deepEqual(parseRetryOn(" 5xx , 429,600 "), { retryOn: "5xx,600", codes: [429] });
});

test("routes share one policy per distinct retries; translating one never changes another", () => {
  const retries = { attempts: 4, retryOn: "5xx,503" };
  const first = translateRetries(memos, retries);
  assert.equal(translateRetries(memos, retries), first);
  assert.equal(translateRetries(memos, undefined), translateRetries(memos, undefined));
  assert.notEqual(translateRetries(memos, retries, true), first);
  assert.equal(first?.numRetries, 4);
  assert.equal(translateRetries(memos, retries, true)?.retryHostPredicate.length, 0);
  // The shared default is left as Istio's default by the policies built from it.
  assert.deepEqual(translateRetries(memos, undefined), defaultRetryPolicy());
  assert.equal(translateRetries(memos, { ...retries })?.numRetries, 4);
  assert.notEqual(translateRetries(memos, { ...retries }), first);
});
