import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { core } from "../../api/index.ts";
import { parseProxy } from "../../model/proxy.ts";
import { newPushContext, pushRequest } from "../../model/push-context.ts";
import { TypeUrl } from "../types.ts";
import { workloadAuthorizationGenerator, workloadGenerator } from "./ambient.ts";

const parsed = parseProxy(create(core.NodeSchema, { id: "sidecar~10.0.0.1~app.ns~ns.svc.cluster.local" }));
if (parsed.error !== undefined) throw new Error(parsed.error);
const proxy = parsed.proxy;
const push = newPushContext({});
const request = pushRequest({ full: true, push, reasons: ["proxyrequest"] });
const policy = { kind: "security.istio.io/AuthorizationPolicy", namespace: "ns", name: "deny" };
const policyPush = pushRequest({ full: true, push, reasons: ["config"], configsUpdated: [policy] });
const otherPush = pushRequest({
  full: true,
  push,
  reasons: ["config"],
  configsUpdated: [{ kind: "networking.istio.io/VirtualService", namespace: "ns", name: "vs" }],
});
const watched = (typeUrl: string) => ({ typeUrl, resourceNames: new Set<string>(), wildcard: true });

test("Address and Workload: a request gets no resources, a push sends nothing (istiod without PILOT_ENABLE_AMBIENT)", () => {
  for (const type of [TypeUrl.Address, TypeUrl.Workload]) {
    assert.deepEqual(workloadGenerator.generate(proxy, watched(type), request), { resources: [] });
    assert.equal(workloadGenerator.generate(proxy, watched(type), otherPush), undefined);
    assert.equal(workloadGenerator.generate(proxy, watched(type), policyPush), undefined);
  }
});

test("Authorization: no resources on a request, a forced push or an AuthorizationPolicy change; nothing otherwise", () => {
  const w = watched(TypeUrl.WorkloadAuthorization);
  assert.deepEqual(workloadAuthorizationGenerator.generate(proxy, w, request), { resources: [] });
  assert.deepEqual(workloadAuthorizationGenerator.generate(proxy, w, policyPush), { resources: [] });
  const forced = pushRequest({ full: true, push, reasons: ["debug"], forced: true });
  assert.deepEqual(workloadAuthorizationGenerator.generate(proxy, w, forced), { resources: [] });
  assert.equal(workloadAuthorizationGenerator.generate(proxy, w, otherPush), undefined);
});
