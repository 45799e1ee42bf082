import assert from "node:assert/strict";
import { test } from "node:test";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { core } from "../api/index.ts";
import { parseIstioVersion, parseProxy, versionAtLeast } from "./proxy.ts";

function node(id: string, metadata?: JsonObject, locality?: { region: string; zone: string }) {
  return create(core.NodeSchema, {
    id,
    metadata,
    locality: locality ? create(core.LocalitySchema, locality) : undefined,
  });
}

test("sidecar node id type~ip~id~domain with metadata", () => {
  const { proxy, error } = parseProxy(
    node(
      "sidecar~10.1.1.1~reviews-v1-abc.bookinfo~bookinfo.svc.cluster.local",
      {
        NAMESPACE: "bookinfo",
        LABELS: { app: "reviews", version: "v1" },
        STATIC_LABELS: { version: "static" },
        INSTANCE_IPS: "10.1.1.1,fd00::1",
        CLUSTER_ID: "Kubernetes",
        ISTIO_VERSION: "1.24.3",
        GENERATOR: "grpc",
        DNS_CAPTURE: "true",
        PILOT_SAN: ["istiod.istio-system.svc"],
        CUSTOM: { nested: 1 },
      },
      { region: "us-east", zone: "a" },
    ),
  );
  assert.equal(error, undefined);
  assert.ok(proxy);
  assert.equal(proxy.type, "sidecar");
  assert.equal(proxy.id, "reviews-v1-abc.bookinfo");
  assert.equal(proxy.dnsDomain, "bookinfo.svc.cluster.local");
  assert.deepEqual(proxy.ipAddresses, ["10.1.1.1", "fd00::1"]);
  assert.equal(proxy.configNamespace, "bookinfo");
  assert.deepEqual(proxy.labels, { app: "reviews", version: "static" });
  assert.equal(proxy.clusterId, "Kubernetes");
  assert.deepEqual(proxy.istioVersion, { major: 1, minor: 24, patch: 3 });
  assert.equal(proxy.generator, "grpc");
  assert.equal(proxy.metadata.DNS_CAPTURE, true);
  // The agent writes PILOT_SAN as a JSON array (Go []string), not a comma-separated string.
  assert.deepEqual(proxy.metadata.PILOT_SAN, ["istiod.istio-system.svc"]);
  assert.deepEqual(proxy.locality, { region: "us-east", zone: "a", subZone: "" });
  assert.deepEqual(proxy.metadata.raw.CUSTOM, { nested: 1 });
});

test("IPs fall back to the node id; namespace falls back to the DNS domain", () => {
  const { proxy } = parseProxy(node("router~10.0.0.9~gw.istio-system~istio-system.svc.cluster.local"));
  assert.ok(proxy);
  assert.equal(proxy.type, "router");
  assert.deepEqual(proxy.ipAddresses, ["10.0.0.9"]);
  assert.equal(proxy.configNamespace, "istio-system");
  assert.equal(proxy.generator, undefined);
});

test("invalid nodes give an error naming the problem", () => {
  assert.equal(parseProxy(undefined).error, "missing node information");
  assert.equal(parseProxy(node("")).error, "missing node information");
  assert.match(parseProxy(node("sidecar~10.0.0.1~x")).error ?? "", /missing parts in the service node/);
  assert.match(
    parseProxy(node("gateway~10.0.0.1~x.ns~ns.svc.cluster.local")).error ?? "",
    /invalid node type \(valid types: sidecar, router, waypoint, ztunnel\)/,
  );
  assert.match(
    parseProxy(node("sidecar~not-an-ip~x.ns~ns.svc.cluster.local")).error ?? "",
    /no valid IP address in the service node id or metadata/,
  );
  assert.match(
    parseProxy(node("sidecar~10.0.0.1~x.ns~ns.svc", { LABELS: "app=x" })).error ?? "",
    /LABELS must be an object of strings/,
  );
  assert.match(
    parseProxy(node("sidecar~10.0.0.1~x.ns~ns.svc", { PILOT_SAN: "istiod" })).error ?? "",
    /PILOT_SAN must be an array of strings/,
  );
});

test("ztunnel and waypoint are node types", () => {
  assert.equal(parseProxy(node("ztunnel~10.0.0.1~zt.istio-system~istio-system.svc"))?.proxy?.type, "ztunnel");
  assert.equal(parseProxy(node("waypoint~10.0.0.1~wp.ns~ns.svc"))?.proxy?.type, "waypoint");
});

test("Istio versions compare as VersionGreaterOrEqual: a missing patch is the newest, no version the newest of all", () => {
  const at = (version: string | undefined) => ({ istioVersion: parseIstioVersion(version) });
  assert.equal(versionAtLeast(at("1.29.2"), 1, 29, 2), true);
  assert.equal(versionAtLeast(at("1.29.1"), 1, 29, 2), false);
  assert.equal(versionAtLeast(at("1.29"), 1, 29, 2), true);
  assert.equal(versionAtLeast(at("1.30.0"), 1, 29, 2), true);
  assert.equal(versionAtLeast(at("1.28.9"), 1, 29), false);
  assert.equal(versionAtLeast(at(undefined), 1, 29, 2), true);
});
