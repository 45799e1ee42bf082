import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import type { AddressInfo, PolicyInfo } from "../../ambient/index.ts";
import { core, packAny, security, workloadapi } from "../../api/index.ts";
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
    const off = workloadGenerator(undefined);
    assert.deepEqual(off.generate(proxy, watched(type), request), { resources: [] });
    assert.equal(off.generate(proxy, watched(type), otherPush), undefined);
    assert.equal(off.generate(proxy, watched(type), policyPush), undefined);
  }
});

const forced = pushRequest({ full: true, push, reasons: ["debug"], forced: true });

test("Authorization with ambient off: no resources on a request, a forced push or an AuthorizationPolicy change; nothing otherwise", () => {
  const w = watched(TypeUrl.WorkloadAuthorization);
  const off = workloadAuthorizationGenerator(undefined);
  assert.deepEqual(off.generate(proxy, w, request), { resources: [] });
  assert.deepEqual(off.generate(proxy, w, policyPush), { resources: [] });
  assert.deepEqual(off.generate(proxy, w, forced), { resources: [] });
  assert.equal(off.generate(proxy, w, otherPush), undefined);
});

// Two policies: what the Authorization generator reads of the ambient index.
const policies: PolicyInfo[] = ["ns/deny", "istio-system/istio_converted_static_strict"].map((name) => {
  const [namespace = "", policyName = ""] = name.split("/");
  const authorization = create(security.AuthorizationSchema, { name: policyName, namespace });
  return {
    name,
    namespace,
    selector: undefined,
    authorization,
    resource: packAny(security.AuthorizationSchema, authorization),
  };
});
const policyIndex = {
  policyInformation: (names?: Iterable<string>) =>
    names ? policies.filter((p) => [...names].includes(p.name)) : policies,
};

test("Authorization with ambient on: every policy on a request or a forced push; a push the policies it names, and those gone", () => {
  const gen = workloadAuthorizationGenerator(policyIndex);
  const w = watched(TypeUrl.WorkloadAuthorization);
  for (const req of [request, forced]) {
    const all = gen.generateDeltas?.(proxy, w, req);
    assert.deepEqual(
      all?.resources.map((r) => r.name),
      ["ns/deny", "istio-system/istio_converted_static_strict"],
    );
    assert.equal(all?.logDetails?.incremental, undefined, "a complete answer");
  }
  // The ambient index names every policy it changed as an AuthorizationPolicy, incrementally.
  const ambientPush = pushRequest({
    full: false,
    push,
    reasons: ["ambient"],
    configsUpdated: [
      {
        kind: "security.istio.io/AuthorizationPolicy",
        namespace: "istio-system",
        name: "istio_converted_static_strict",
      },
      { kind: "security.istio.io/AuthorizationPolicy", namespace: "ns", name: "gone" },
    ],
  });
  const pushed = gen.generateDeltas?.(proxy, w, ambientPush);
  assert.deepEqual(
    pushed?.resources.map((r) => r.name),
    ["istio-system/istio_converted_static_strict"],
  );
  assert.deepEqual(pushed?.removed, ["ns/gone"]);
  assert.equal(pushed?.logDetails?.incremental, true);
  // The store's full push of a changed AuthorizationPolicy names it too.
  assert.deepEqual(
    gen.generateDeltas?.(proxy, w, policyPush)?.resources.map((r) => r.name),
    ["ns/deny"],
  );
  assert.equal(gen.generateDeltas?.(proxy, w, otherPush), undefined);
  assert.equal(gen.generateDeltas?.(proxy, w, addressPush("c//Pod/ns/a")), undefined);
});

// An index of one workload and one service: what the generator reads of the ambient index.
const workload = create(workloadapi.WorkloadSchema, { uid: "c//Pod/ns/a", name: "a", namespace: "ns" });
const infos: AddressInfo[] = [
  {
    kind: "workload",
    name: "c//Pod/ns/a",
    aliases: ["/10.0.0.1"],
    resource: packAny(
      workloadapi.AddressSchema,
      create(workloadapi.AddressSchema, { type: { case: "workload", value: workload } }),
    ),
    workload,
  } as AddressInfo,
  {
    kind: "service",
    name: "ns/s.ns.svc.cluster.local",
    aliases: ["/10.96.0.1"],
    resource: packAny(workloadapi.AddressSchema, create(workloadapi.AddressSchema)),
  } as AddressInfo,
];
const index = {
  all: () => infos,
  addressInformation(names: Iterable<string>) {
    const wanted = [...names];
    return {
      found: infos.filter((i) => wanted.includes(i.name) || i.aliases.some((a) => wanted.includes(a))),
      missing: wanted.filter((n) => !infos.some((i) => i.name === n || i.aliases.includes(n))),
    };
  },
  // The pod serves the service: asking for the service's VIP keeps the client on the pod too.
  additionalSubscriptions(_node: string, addresses: Iterable<string>, subscribed: ReadonlySet<string>) {
    return [...addresses].includes("/10.96.0.1") && !subscribed.has("c//Pod/ns/a") ? ["c//Pod/ns/a"] : [];
  },
};
const addressPush = (...names: string[]) =>
  pushRequest({ full: false, push, reasons: ["ambient"], addressesUpdated: names });

test("Address with ambient on: a wildcard request gets everything, complete; a push only the addresses it names, and those gone", () => {
  const gen = workloadGenerator(index);
  const all = gen.generateDeltas?.(proxy, watched(TypeUrl.Address), request);
  assert.deepEqual(
    all?.resources.map((r) => r.name),
    ["c//Pod/ns/a", "ns/s.ns.svc.cluster.local"],
  );
  assert.equal(all?.logDetails?.incremental, undefined, "a complete answer");
  const pushed = gen.generateDeltas?.(proxy, watched(TypeUrl.Address), addressPush("c//Pod/ns/a", "c//Pod/ns/gone"));
  assert.deepEqual(
    pushed?.resources.map((r) => r.name),
    ["c//Pod/ns/a"],
  );
  assert.deepEqual(pushed?.removed, ["c//Pod/ns/gone"]);
  assert.equal(pushed?.logDetails?.incremental, true);
  // Pushes that name no address (even full ones) leave WDS alone.
  assert.equal(gen.generateDeltas?.(proxy, watched(TypeUrl.Address), otherPush), undefined);
  // The Workload type carries the workloads alone, as Workload messages.
  const workloads = gen.generateDeltas?.(proxy, watched(TypeUrl.Workload), request);
  assert.deepEqual(
    workloads?.resources.map((r) => [r.name, (r.resource as { typeUrl: string }).typeUrl]),
    [["c//Pod/ns/a", "type.googleapis.com/istio.workload.Workload"]],
  );
});

test("Address on demand: a request gets what its names stand for; a push only the subscribed names it changes", () => {
  const gen = workloadGenerator(index);
  const onDemand = { typeUrl: TypeUrl.Address, resourceNames: new Set(["/10.96.0.1"]), wildcard: false };
  const answered = gen.generateDeltas?.(proxy, onDemand, request);
  // The service the VIP names, under its aliases (so the name asked for is not removed), and its pod.
  assert.deepEqual(
    answered?.resources.map((r) => [r.name, r.aliases]),
    [
      ["c//Pod/ns/a", ["/10.0.0.1"]],
      ["ns/s.ns.svc.cluster.local", ["/10.96.0.1"]],
    ],
  );
  assert.deepEqual(answered?.removed, []);
  assert.deepEqual(answered?.subscribe, ["c//Pod/ns/a", "ns/s.ns.svc.cluster.local"]);
  assert.equal(answered?.logDetails?.incremental, true);
  // A push naming nothing the client holds sends it nothing; one naming a name it holds, that.
  const holding = { ...onDemand, resourceNames: new Set(["/10.96.0.1", "c//Pod/ns/a"]) };
  assert.equal(gen.generateDeltas?.(proxy, onDemand, addressPush("c//Pod/ns/other")), undefined);
  assert.deepEqual(
    gen.generateDeltas?.(proxy, holding, addressPush("c//Pod/ns/a"))?.resources.map((r) => r.name),
    ["c//Pod/ns/a"],
  );
});
