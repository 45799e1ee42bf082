import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveGatewayName, resolveShortname, resolveShortnames } from "./shortnames.ts";
import type { VirtualService } from "./types.ts";

test("short host names resolve in the VirtualService's namespace; FQDNs, '*' and IPs stay", () => {
  assert.equal(resolveShortname("reviews", "default", "cluster.local"), "reviews.default.svc.cluster.local");
  assert.equal(resolveShortname("reviews.other", "default", "cluster.local"), "reviews.other");
  assert.equal(resolveShortname("*", "default", "cluster.local"), "*");
  assert.equal(resolveShortname("10.0.0.1", "default", "cluster.local"), "10.0.0.1");
});

test("gateway names: short and ./name in the VirtualService's namespace, legacy FQDN → ns/name, mesh kept", () => {
  assert.equal(resolveGatewayName("ingress", "default"), "default/ingress");
  assert.equal(resolveGatewayName("./ingress", "default"), "default/ingress");
  assert.equal(resolveGatewayName("istio-system/ingress", "default"), "istio-system/ingress");
  assert.equal(resolveGatewayName("ingress.istio-system.svc.cluster.local", "default"), "istio-system/ingress");
  assert.equal(resolveGatewayName("ingress.istio-system", "default"), "istio-system/ingress");
  assert.equal(resolveGatewayName("mesh", "default"), "mesh");
});

test("resolveShortnames resolves hosts, gateways, destinations and mirrors in a copy", () => {
  const vs: VirtualService = {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "r", namespace: "ns" },
    spec: {
      hosts: ["reviews"],
      gateways: ["gw", "mesh"],
      http: [
        {
          match: [{ gateways: ["gw"] }],
          route: [{ destination: { host: "reviews", subset: "v1" } }],
          mirror: { host: "shadow" },
          mirrors: [{ destination: { host: "other" } }],
        },
      ],
    },
  };
  const before = JSON.stringify(vs);
  const out = resolveShortnames(vs, "cluster.local");
  assert.deepEqual(out.spec?.hosts, ["reviews.ns.svc.cluster.local"]);
  assert.deepEqual(out.spec?.gateways, ["ns/gw", "mesh"]);
  const http = out.spec?.http?.[0];
  assert.deepEqual(http?.match?.[0].gateways, ["ns/gw"]);
  assert.deepEqual(http?.route?.[0].destination, { host: "reviews.ns.svc.cluster.local", subset: "v1" });
  assert.equal(http?.mirror?.host, "shadow.ns.svc.cluster.local");
  assert.equal(http?.mirrors?.[0].destination.host, "other.ns.svc.cluster.local");
  assert.equal(JSON.stringify(vs), before);
});
