import assert from "node:assert/strict";
import { test } from "node:test";
import { cfg, snapshot } from "../../test/support/model-fixtures.ts";
import type { VirtualServiceSpec } from "../config/types/index.ts";

const vs = (namespace: string, name: string, spec: VirtualServiceSpec, created = 0) =>
  cfg("VirtualService", namespace, name, spec, { created });
const names = (list: readonly { metadata: { namespace?: string; name?: string } }[]) =>
  list.map((v) => `${v.metadata.namespace}/${v.metadata.name}`);

test("short names expand in the VirtualService's namespace: hosts, destinations, gateways", () => {
  const snap = snapshot([
    vs("bookinfo", "reviews", {
      hosts: ["reviews", "reviews.other", "*"],
      gateways: ["gw", "./gw2", "istio-system/ingress", "legacy.ns2.svc.cluster.local", "mesh"],
      http: [{ route: [{ destination: { host: "reviews", subset: "v1" } }], mirror: { host: "ratings" } }],
      tcp: [{ route: [{ destination: { host: "db" } }] }],
    }),
  ]);
  const [resolved] = snap.virtualServicesForGateway("bookinfo", "mesh");
  assert.deepEqual(resolved.spec?.hosts, ["reviews.bookinfo.svc.cluster.local", "reviews.other", "*"]);
  assert.deepEqual(resolved.spec?.gateways, [
    "bookinfo/gw",
    "bookinfo/gw2",
    "istio-system/ingress",
    "ns2/legacy",
    "mesh",
  ]);
  assert.equal(resolved.spec?.http?.[0].route?.[0].destination.host, "reviews.bookinfo.svc.cluster.local");
  assert.equal(resolved.spec?.http?.[0].mirror?.host, "ratings.bookinfo.svc.cluster.local");
  assert.equal(resolved.spec?.tcp?.[0].route?.[0].destination.host, "db.bookinfo.svc.cluster.local");
  assert.deepEqual(names(snap.virtualServicesForGateway("other", "bookinfo/gw")), ["bookinfo/reviews"]);
});

test("a VirtualService without gateways binds to mesh only", () => {
  const snap = snapshot([vs("a", "x", { hosts: ["x"] })]);
  assert.deepEqual(names(snap.virtualServicesForGateway("a", "mesh")), ["a/x"]);
  assert.deepEqual(snap.virtualServicesForGateway("a", "a/gw"), []);
});

test("VirtualService exportTo: private, named, public, none; mesh default applies when unset", () => {
  const configs = [
    vs("a", "private", { hosts: ["p"], exportTo: ["."] }, 1),
    vs("a", "named", { hosts: ["n"], exportTo: ["b"] }, 2),
    vs("a", "public", { hosts: ["q"], exportTo: ["*"] }, 3),
    vs("a", "none", { hosts: ["z"], exportTo: ["~"] }, 4),
    vs("a", "unset", { hosts: ["u"] }, 5),
  ];
  const snap = snapshot(configs);
  assert.deepEqual(names(snap.virtualServicesForGateway("a", "mesh")), ["a/private", "a/public", "a/unset"]);
  assert.deepEqual(names(snap.virtualServicesForGateway("b", "mesh")), ["a/named", "a/public", "a/unset"]);
  assert.deepEqual(names(snap.virtualServicesForGateway("c", "mesh")), ["a/public", "a/unset"]);
  const privateByDefault = snapshot(configs, [], { defaultVirtualServiceExportTo: ["."] });
  assert.deepEqual(names(privateByDefault.virtualServicesForGateway("c", "mesh")), ["a/public"]);
  assert.deepEqual(names(privateByDefault.virtualServicesForGateway("a", "mesh")), [
    "a/private",
    "a/unset",
    "a/public",
  ]);
});

test("delegation: the root route's match narrows each delegate route; unset fields come from the root", () => {
  const snap = snapshot([
    vs("gw", "root", {
      hosts: ["bookinfo.example.com"],
      gateways: ["ingress"],
      http: [
        {
          name: "reviews",
          match: [{ uri: { prefix: "/reviews" } }],
          timeout: "5s",
          delegate: { name: "reviews", namespace: "bookinfo" },
        },
        { route: [{ destination: { host: "productpage.bookinfo.svc.cluster.local" } }] },
      ],
    }),
    vs("bookinfo", "reviews", {
      http: [
        {
          name: "v2",
          match: [{ uri: { prefix: "/reviews/v2" }, headers: { user: { exact: "jason" } } }],
          route: [{ destination: { host: "reviews", subset: "v2" } }],
        },
        { name: "conflict", match: [{ uri: { prefix: "/ratings" } }], route: [{ destination: { host: "ratings" } }] },
        { name: "rest", timeout: "1s", route: [{ destination: { host: "reviews", subset: "v1" } }] },
      ],
    }),
  ]);
  const [root] = snap.virtualServicesForGateway("gw", "gw/ingress");
  const http = root.spec?.http ?? [];
  assert.deepEqual(
    http.map((r) => r.name),
    ["reviews-v2", "reviews-rest", undefined],
  );
  assert.deepEqual(http[0].match, [{ uri: { prefix: "/reviews/v2" }, headers: { user: { exact: "jason" } } }]);
  assert.equal(http[0].timeout, "5s");
  assert.equal(http[0].route?.[0].destination.host, "reviews.bookinfo.svc.cluster.local");
  assert.deepEqual(http[1].match, [{ uri: { prefix: "/reviews" } }]);
  assert.equal(http[1].timeout, "1s");
  assert.equal(
    http.some((r) => "delegate" in r),
    false,
  );
  // Delegates are not VirtualServices of their own.
  assert.deepEqual(snap.virtualServicesForGateway("bookinfo", "mesh"), []);
});

test("delegation: a delegate not exported to the root's namespace, or missing, drops the route", () => {
  const root = vs("gw", "root", {
    hosts: ["h.example.com"],
    http: [{ delegate: { name: "d", namespace: "team" } }, { delegate: { name: "missing" } }],
  });
  const hidden = snapshot([
    root,
    vs("team", "d", { exportTo: ["."], http: [{ route: [{ destination: { host: "x" } }] }] }),
  ]);
  assert.deepEqual(hidden.virtualServicesForGateway("gw", "mesh")[0].spec?.http, []);
  const shared = snapshot([
    root,
    vs("team", "d", { exportTo: ["gw"], http: [{ route: [{ destination: { host: "x" } }] }] }),
  ]);
  assert.equal(
    shared.virtualServicesForGateway("gw", "mesh")[0].spec?.http?.[0].route?.[0].destination.host,
    "x.team.svc.cluster.local",
  );
});

test("VirtualServices for a host: exact and wildcard hosts on either side overlap", () => {
  const snap = snapshot([
    vs("a", "exact", { hosts: ["api.example.com"] }, 1),
    vs("a", "wild", { hosts: ["*.example.com"] }, 2),
    vs("a", "other", { hosts: ["other.org"] }, 3),
  ]);
  assert.deepEqual(names(snap.virtualServicesForHost("a", "mesh", "api.example.com")), ["a/exact", "a/wild"]);
  assert.deepEqual(names(snap.virtualServicesForHost("a", "mesh", "*.example.com")), ["a/exact", "a/wild"]);
  assert.deepEqual(names(snap.virtualServicesForHost("a", "mesh", "www.example.com")), ["a/wild"]);
});

test("a gateway's public Gateway API routes of the asking namespace come first; private ones before all", () => {
  const route = (namespace: string, name: string, created: number) =>
    cfg(
      "VirtualService",
      namespace,
      name,
      { hosts: ["a.example.com"], gateways: ["gw/gw"] },
      { created, annotations: { "internal.istio.io/route-semantics": "gateway" } },
    );
  const snap = snapshot([
    vs("ns1", "istio", { hosts: ["a.example.com"], gateways: ["gw/gw"] }, 0),
    route("ns2", "route", 1),
    vs("ns2", "private", { hosts: ["a.example.com"], gateways: ["gw/gw"], exportTo: ["."] }, 2),
    vs("ns1", "other-gw", { hosts: ["a.example.com"], gateways: ["gw/other"] }, 3),
  ]);
  assert.deepEqual(names(snap.virtualServicesForGateway("ns2", "gw/gw")), ["ns2/private", "ns2/route", "ns1/istio"]);
  assert.deepEqual(names(snap.virtualServicesForGateway("ns1", "gw/gw")), ["ns1/istio", "ns2/route"]);
  assert.deepEqual(names(snap.virtualServicesForGateway("ns3", "gw/other")), ["ns1/other-gw"]);
  // Asked again: the same answer.
  assert.deepEqual(names(snap.virtualServicesForGateway("ns2", "gw/gw")), ["ns2/private", "ns2/route", "ns1/istio"]);
});
