import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { routeAction } from "../../../test/support/route-cases.ts";
import { route } from "../../api/index.ts";
import { checkMessage } from "../../api/pgv/index.ts";
import { DEFAULT_MESH_CONFIG } from "../../config/index.ts";
import { NO_MEMOS } from "../../util/memo.ts";
import { buildDefaultInboundRoute, buildDefaultOutboundRoute } from "./default-route.ts";

test("default outbound route: name default, prefix /, cluster outbound|port||host, a consistent hash policy when given", () => {
  const hash = create(route.RouteAction_HashPolicySchema, {
    policySpecifier: { case: "header", value: { headerName: "x-user" } },
  });
  const r = buildDefaultOutboundRoute(NO_MEMOS, "a.ns.svc.cluster.local", 8080, DEFAULT_MESH_CONFIG, hash);
  assert.equal(r.name, "default");
  assert.deepEqual(r.match?.pathSpecifier, { case: "prefix", value: "/" });
  assert.equal(r.match?.caseSensitive, undefined);
  assert.equal(routeAction(r).hashPolicy.length, 1);
  assert.deepEqual(checkMessage(route.RouteSchema, r), []);
});

test("default inbound route: no timeout, no stream limit, 2 retries on reset-before-request; none on gRPC ports", () => {
  const r = buildDefaultInboundRoute(
    "inbound|8080||",
    "reviews.default.svc.cluster.local:9080/*",
    false,
    DEFAULT_MESH_CONFIG,
  );
  const action = routeAction(r);
  assert.equal(action.retryPolicy?.retryOn, "reset-before-request");
  assert.equal(action.retryPolicy?.numRetries, 2);
  assert.equal(action.maxStreamDuration?.maxStreamDuration?.seconds, 0n);
  assert.equal(action.timeout?.seconds, 0n);
  assert.equal(r.decorator?.operation, "reviews.default.svc.cluster.local:9080/*");
  const grpc = buildDefaultInboundRoute("inbound|8080||", "x", true, DEFAULT_MESH_CONFIG);
  assert.equal(routeAction(grpc).retryPolicy, undefined);
  assert.deepEqual(checkMessage(route.RouteSchema, r), []);
});

test("meshConfig.defaultInboundHttpRetryPolicy: attempts, retryOn codes and backoff; attempts 0 disables", () => {
  const mesh = {
    ...DEFAULT_MESH_CONFIG,
    defaultInboundHttpRetryPolicy: { attempts: 4, retryOn: "503", backoff: "1s" },
  };
  const p = routeAction(buildDefaultInboundRoute("c", "o", false, mesh)).retryPolicy;
  assert.equal(p?.numRetries, 4);
  assert.equal(p?.retryOn, ",retriable-status-codes");
  assert.deepEqual(p?.retriableStatusCodes, [503]);
  assert.equal(p?.retryBackOff?.baseInterval?.seconds, 1n);
  const off = { ...DEFAULT_MESH_CONFIG, defaultInboundHttpRetryPolicy: { attempts: 0 } };
  assert.equal(routeAction(buildDefaultInboundRoute("c", "o", false, off)).retryPolicy, undefined);
});
