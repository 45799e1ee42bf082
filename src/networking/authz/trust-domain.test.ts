import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { expandTrustDomainAliases, replaceTrustDomainAliases, trustDomainBundle } from "./trust-domain.ts";

describe("authz trust domain aliases", () => {
  const bundle = trustDomainBundle("td1", ["cluster.local", "old-td"]);

  it("rewrites a principal of the trust domain or an alias for each of them", () => {
    assert.deepEqual(replaceTrustDomainAliases(bundle, ["old-td/ns/foo/sa/bar"]), [
      "td1/ns/foo/sa/bar",
      "cluster.local/ns/foo/sa/bar",
      "old-td/ns/foo/sa/bar",
    ]);
  });

  it("reads cluster.local as the local trust domain even when it is no alias", () => {
    assert.deepEqual(replaceTrustDomainAliases(trustDomainBundle("td1"), ["cluster.local/ns/a/sa/b"]), [
      "td1/ns/a/sa/b",
    ]);
    // Without any trust domain Istio has nothing to rewrite it to, so the principal disappears.
    assert.deepEqual(replaceTrustDomainAliases([], ["cluster.local/ns/a/sa/b"]), []);
  });

  it("keeps principals whose trust domain is not checked or not known", () => {
    const kept = ["*/ns/foo/sa/bar", "sa/bar", "principal", "other-td/ns/foo/sa/bar"];
    assert.deepEqual(replaceTrustDomainAliases(bundle, kept), kept);
  });

  it("keeps a *suffix trust domain once for every alias it covers", () => {
    assert.deepEqual(replaceTrustDomainAliases(trustDomainBundle("new-td", ["old-td"]), ["*-td/ns/foo/sa/bar"]), [
      "*-td/ns/foo/sa/bar",
    ]);
  });

  it("expands a trust domain value to the whole bundle without duplicates", () => {
    assert.deepEqual(expandTrustDomainAliases(bundle, ["old-td", "td1", "x"]), ["td1", "cluster.local", "old-td", "x"]);
  });
});
