import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { makeEndpoint, makeMesh, makeProxy, makeService } from "../../../test/support/cluster-fixtures.ts";
import { endpoint } from "../../api/index.ts";
import type { ServiceEndpoint } from "../../registry/index.ts";
import { envoyViolations } from "../httpfilter/index.ts";
import {
  buildClusterLoadAssignment,
  canonicalService,
  localityLbSetting,
  localityMatch,
  localityPriority,
  selectEndpoints,
} from "./index.ts";

const loc = (region: string, zone = "", subZone = "") => ({ region, zone, subZone });

describe("LbPriority", () => {
  it("0 same subzone, 1 same zone, 2 same region, 3 elsewhere", () => {
    const proxy = loc("r", "z", "s");
    assert.equal(localityPriority(proxy, loc("r", "z", "s")), 0);
    assert.equal(localityPriority(proxy, loc("r", "z", "t")), 1);
    assert.equal(localityPriority(proxy, loc("r", "y", "s")), 2);
    assert.equal(localityPriority(proxy, loc("q", "z", "s")), 3);
  });
});

describe("LocalityMatch", () => {
  it("`*` and missing parts below the region match anything; the region must match", () => {
    assert.ok(localityMatch(loc("us", "a", "1"), "us"));
    assert.ok(localityMatch(loc("us", "a", "1"), "us/*"));
    assert.ok(localityMatch(loc("us", "a", "1"), "*/a/1"));
    assert.ok(!localityMatch(loc("us", "a", "1"), "us/b"));
    assert.ok(!localityMatch(loc("eu", "a", "1"), "us/*"));
  });
});

describe("GetLocalityLbSetting", () => {
  it("the rule's setting wins unless it disables locality balancing", () => {
    const mesh = makeMesh();
    assert.deepEqual(localityLbSetting(mesh, { failover: [{ from: "a", to: "b" }] }), {
      failover: [{ from: "a", to: "b" }],
    });
    assert.equal(localityLbSetting(mesh, { enabled: false }), undefined);
    assert.deepEqual(localityLbSetting(mesh, undefined), { enabled: true });
    assert.equal(localityLbSetting(makeMesh({ localityLbSetting: { enabled: false } }), undefined), undefined);
  });
});

describe("subset label selection", () => {
  it("an endpoint must carry every subset label with the same value", () => {
    const endpoint = (name: string, labels: Record<string, string>) =>
      ({ address: name, servicePort: 80, health: "Healthy", labels }) as unknown as ServiceEndpoint;
    const endpoints = [endpoint("v1", { app: "a", version: "v1" }), endpoint("none", { app: "a" })];
    const selected = (subsetLabels?: Record<string, string>) =>
      selectEndpoints(endpoints, { port: 80, subsetLabels }).map((e) => e.address);
    assert.deepEqual(selected({ version: "v1" }), ["v1"]);
    assert.deepEqual(selected({ version: "v2" }), []);
    assert.deepEqual(selected(undefined), ["v1", "none"]);
  });
});

describe("CanonicalService", () => {
  it("canonical labels first, then app.kubernetes.io, then app/version, else workload name and latest", () => {
    assert.deepEqual(canonicalService({ "app.kubernetes.io/name": "n", app: "a", version: "v" }, "w"), {
      name: "n",
      revision: "v",
    });
    assert.deepEqual(canonicalService({}, "w"), { name: "w", revision: "latest" });
  });
});

describe("a waypoint's inbound VIP endpoints (buildEnvoyLbEndpoint with a tunnel)", () => {
  it("an endpoint taking HBONE is reached through connect_originate, its address kept as the original destination", () => {
    const service = makeService({ ports: [{ port: 80, targetPort: 8080 }] });
    const ambient = makeEndpoint(service, { address: "10.0.0.1", workloadName: "a", tlsMode: "" });
    const ipv6 = makeEndpoint(service, { address: "fd00::2", workloadName: "b", tlsMode: "" });
    const plain = makeEndpoint(service, { address: "10.0.0.3", workloadName: "c", tlsMode: "" });
    const cla = buildClusterLoadAssignment({
      clusterName: "inbound-vip|80|http|reviews.default.svc.cluster.local",
      port: 80,
      endpoints: [ambient, ipv6, plain],
      proxy: makeProxy({ type: "waypoint" }),
      mesh: makeMesh(),
      tunnel: (ep) => ep !== plain,
    });
    const hosts = cla.endpoints.flatMap((l) => l.lbEndpoints);
    const addressOf = (lb: endpoint.LbEndpoint) => {
      assert.equal(lb.hostIdentifier.case, "endpoint");
      return lb.hostIdentifier.value.address?.address;
    };
    assert.deepEqual(
      hosts.map((lb) => {
        const address = addressOf(lb);
        return address?.case === "envoyInternalAddress"
          ? `${address.value.addressNameSpecifier.value} ${address.value.endpointId}`
          : address?.case === "socketAddress"
            ? address.value.address
            : "";
      }),
      ["connect_originate 10.0.0.1:8080", "connect_originate [fd00::2]:8080", "10.0.0.3"],
    );
    assert.deepEqual(hosts[0].metadata?.filterMetadata["envoy.filters.listener.original_dst"], {
      local: "10.0.0.1:8080",
    });
    assert.equal(hosts[2].metadata?.filterMetadata["envoy.filters.listener.original_dst"], undefined);
    assert.deepEqual(envoyViolations(endpoint.ClusterLoadAssignmentSchema, cla), []);
  });
});
