import assert from "node:assert/strict";
import { test } from "node:test";
import { cfg, proxy, svc } from "../../test/support/model-fixtures.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG, type ObjectKey } from "../config/index.ts";
import { buildPushContext, type MeshPush, pushRequest } from "../model/index.ts";
import { proxyNeedsPush } from "./proxy-needs-push.ts";

const NET = "networking.istio.io";
const services = [svc("app", "a"), svc("app", "b")];
// Each namespace's proxies see only their own namespace.
const sidecars = ["a", "b"].map((ns) => cfg("Sidecar", ns, "default", { egress: [{ hosts: ["./*"] }] }));
const routes = cfg("VirtualService", "a", "routes", {
  hosts: ["app"],
  http: [{ route: [{ destination: { host: "app" } }] }],
});
const push = (configs: ConfigObject[]): MeshPush =>
  buildPushContext({ configs, services, mesh: DEFAULT_MESH_CONFIG, domainSuffix: "cluster.local" });
const hostKey = (namespace: string, service: string): ObjectKey => ({
  kind: `${NET}/ServiceEntry`,
  namespace,
  name: `${service}.${namespace}.svc.cluster.local`,
});
const vsKey: ObjectKey = { kind: `${NET}/VirtualService`, namespace: "a", name: "routes" };

const inA = proxy("sidecar", "a", { app: "app" });
const inB = proxy("sidecar", "b", { app: "app" });
const unscoped = proxy("sidecar", "c");

test("a full push naming only configs outside a proxy's Sidecar scope skips it, added or removed", () => {
  const before = push(sidecars);
  const after = push([...sidecars, routes]);
  const added = pushRequest({ full: true, push: after, configsUpdated: [vsKey] });
  assert.equal(proxyNeedsPush(inA, added, before), true, "the new scope uses the VirtualService");
  assert.equal(proxyNeedsPush(inB, added, before), false);
  const removed = pushRequest({ full: true, push: before, configsUpdated: [vsKey] });
  assert.equal(proxyNeedsPush(inA, removed, after), true, "the old scope used it");
  assert.equal(proxyNeedsPush(inB, removed, after), false);
});

test("an incremental EDS push reaches the proxies whose scope sees the service's hostname", () => {
  const current = push(sidecars);
  const eds = pushRequest({ full: false, push: current, configsUpdated: [hostKey("b", "app")] });
  assert.equal(proxyNeedsPush(inB, eds, current), true);
  assert.equal(proxyNeedsPush(inA, eds, current), false);
  assert.equal(proxyNeedsPush(unscoped, eds, current), true, "a proxy without Sidecar sees every service");
  assert.equal(proxyNeedsPush(proxy("router", "a"), eds, current), true, "a gateway sees every visible service");
});

test("forced pushes, pushes naming nothing, and unscoped kinds reach every proxy", () => {
  const current = push(sidecars);
  const forced = pushRequest({ full: true, push: current, configsUpdated: [vsKey], forced: true });
  assert.equal(proxyNeedsPush(inB, forced, current), true);
  assert.equal(proxyNeedsPush(inB, pushRequest({ full: true, push: current }), current), true);
  const secret = pushRequest({
    full: true,
    push: current,
    configsUpdated: [{ kind: "/Secret", namespace: "a", name: "x" }],
  });
  assert.equal(proxyNeedsPush(inB, secret, current), true);
  const gateway = pushRequest({
    full: true,
    push: current,
    configsUpdated: [{ kind: `${NET}/Gateway`, namespace: "b", name: "gw" }],
  });
  assert.equal(proxyNeedsPush(inB, gateway, current), false, "sidecars never read Gateways");
  assert.equal(proxyNeedsPush(proxy("router", "b"), gateway, current), true);
});

test("a change to a service a proxy is behind reaches it even when its Sidecar imports other namespaces only", () => {
  const elsewhere = [cfg("Sidecar", "a", "default", { egress: [{ hosts: ["b/*"] }] })];
  const current = push(elsewhere);
  const own = pushRequest({ full: true, push: current, configsUpdated: [hostKey("a", "app")] });
  assert.equal(proxyNeedsPush(inA, own, current), true);
  assert.equal(proxyNeedsPush(proxy("sidecar", "a", { app: "other" }), own, current), false);
});

test("a push naming services of other namespaces only skips a scoped proxy without looking up its service targets", () => {
  const current = push(sidecars);
  const lookups: string[] = [];
  const serviceTargets = current.snapshot.serviceTargets.bind(current.snapshot);
  current.snapshot.serviceTargets = (p) => {
    lookups.push(p.configNamespace);
    return serviceTargets(p);
  };
  // inA's Sidecar does not see b's app, and its own targets are all in a.
  const eds = pushRequest({ full: false, push: current, configsUpdated: [hostKey("b", "app")] });
  assert.equal(proxyNeedsPush(inA, eds, current), false);
  assert.deepEqual(lookups, []);
  const elsewhere = push([cfg("Sidecar", "a", "default", { egress: [{ hosts: ["b/*"] }] })]);
  const own = pushRequest({ full: false, push: elsewhere, configsUpdated: [hostKey("a", "app")] });
  elsewhere.snapshot.serviceTargets = current.snapshot.serviceTargets;
  assert.equal(proxyNeedsPush(inA, own, elsewhere), true, "its own namespace's service is one it is behind");
  assert.ok(lookups.length > 0);
});

test("an endpoint push finds a proxy's service targets in the snapshot it was last pushed with only", () => {
  // a's Sidecar imports b only: inA is reached by a's app because it is behind it.
  const importsB = [cfg("Sidecar", "a", "default", { egress: [{ hosts: ["b/*"] }] })];
  const before = push(importsB);
  const after = push(importsB);
  const looked: MeshPush[] = [];
  for (const p of [before, after]) {
    const serviceTargets = p.snapshot.serviceTargets.bind(p.snapshot);
    p.snapshot.serviceTargets = (proxy) => {
      looked.push(p);
      return serviceTargets(proxy);
    };
  }
  const eds = pushRequest({ full: false, push: after, configsUpdated: [hostKey("a", "app")] });
  assert.equal(proxyNeedsPush(inA, eds, before), true);
  assert.ok(looked.length > 0 && looked.every((p) => p === before), "only the previous snapshot is asked");
  looked.length = 0;
  const full = pushRequest({ full: true, push: after, configsUpdated: [hostKey("a", "app")] });
  assert.equal(proxyNeedsPush(inA, full, before), true);
  assert.ok(looked.includes(after), "a full push asks the new snapshot too");
});

test("the ambient index's policy push (incremental, naming AuthorizationPolicies) skips sidecars and gateways; the store's full push reaches them", () => {
  const current = push(sidecars);
  const policy = { kind: "security.istio.io/AuthorizationPolicy", namespace: "a", name: "allow" };
  const ambient = pushRequest({ full: false, push: current, configsUpdated: [policy], reasons: ["ambient"] });
  assert.equal(proxyNeedsPush(inA, ambient, current), false);
  assert.equal(proxyNeedsPush(proxy("router", "a"), ambient, current), false);
  assert.equal(proxyNeedsPush(proxy("ztunnel", "istio-system"), ambient, current), true);
  const store = pushRequest({ full: true, push: current, configsUpdated: [policy], reasons: ["config"] });
  assert.equal(proxyNeedsPush(inA, store, current), true);
  // Merged with an endpoint change, the push still reaches who sees the service.
  const merged = pushRequest({ full: false, push: current, configsUpdated: [policy, hostKey("a", "app")] });
  assert.equal(proxyNeedsPush(inA, merged, current), true);
  assert.equal(proxyNeedsPush(inB, merged, current), false);
});
