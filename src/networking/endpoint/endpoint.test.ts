import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { makeMesh } from "../../../test/support/cluster-fixtures.ts";
import type { ServiceEndpoint } from "../../registry/index.ts";
import { canonicalService, localityLbSetting, localityMatch, localityPriority, selectEndpoints } from "./index.ts";

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
