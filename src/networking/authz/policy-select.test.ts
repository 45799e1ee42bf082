import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ConfigObject } from "../../config/index.ts";
import type { AuthorizationPolicySpec } from "../../config/types/index.ts";
import { selectPolicies } from "./policy-select.ts";

function ap(namespace: string, name: string, spec: AuthorizationPolicySpec): ConfigObject<AuthorizationPolicySpec> {
  return { apiVersion: "security.istio.io/v1", kind: "AuthorizationPolicy", metadata: { name, namespace }, spec };
}

const workload = { namespace: "foo", labels: { app: "httpbin", version: "v1" } };
const names = (list: { name: string }[]) => list.map((p) => p.name);

describe("authz policy selection", () => {
  it("applies policies whose selector labels are a subset of the workload's", () => {
    const got = selectPolicies(
      [
        ap("foo", "all", {}),
        ap("foo", "subset", { selector: { matchLabels: { app: "httpbin" } } }),
        ap("foo", "other", { selector: { matchLabels: { app: "other" } } }),
        ap("foo", "superset", { selector: { matchLabels: { app: "httpbin", version: "v1", x: "y" } } }),
      ],
      workload,
      "",
    );
    assert.deepEqual(names(got.allow), ["all", "subset"]);
  });

  it("ignores policies with targetRef(s) for a sidecar", () => {
    const got = selectPolicies(
      [
        ap("foo", "ref", { targetRef: { kind: "Gateway", name: "gw" } }),
        ap("foo", "refs", { targetRefs: [{ kind: "Service", name: "s" }] }),
      ],
      workload,
      "",
    );
    assert.deepEqual(names(got.allow), []);
  });

  it("takes the root namespace's policies first, then the workload namespace's, never others", () => {
    const got = selectPolicies(
      [ap("foo", "local", {}), ap("istio-system", "mesh", {}), ap("bar", "elsewhere", {})],
      workload,
      "istio-system",
    );
    assert.deepEqual(names(got.allow), ["mesh", "local"]);
  });

  it("groups by action, ALLOW when absent, keeping order within a group", () => {
    const got = selectPolicies(
      [
        ap("foo", "d1", { action: "DENY" }),
        ap("foo", "a1", {}),
        ap("foo", "c1", { action: "CUSTOM", provider: { name: "p" } }),
        ap("foo", "d2", { action: "DENY" }),
        ap("foo", "au", { action: "AUDIT" }),
      ],
      workload,
      "",
    );
    assert.deepEqual(
      [names(got.deny), names(got.allow), names(got.custom), names(got.audit)],
      [["d1", "d2"], ["a1"], ["c1"], ["au"]],
    );
  });
});
