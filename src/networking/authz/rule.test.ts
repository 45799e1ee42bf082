import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toJson } from "@bufbuild/protobuf";
import { rbac } from "../../api/index.ts";
import type { AuthorizationPolicyRules } from "../../config/types/index.ts";
import { NotGenerated } from "./generator.ts";
import { matchNothingPolicy, type RuleOptions, rulePolicy } from "./rule.ts";

const ALLOW_HTTP: RuleOptions = {
  policyNamespace: "foo",
  trustDomains: [],
  action: rbac.RBAC_Action.ALLOW,
  forTcp: false,
  useAuthenticated: true,
};

function policy(rule: AuthorizationPolicyRules, options: Partial<RuleOptions> = {}): unknown {
  const generated = rulePolicy(rule, { ...ALLOW_HTTP, ...options });
  return generated instanceof NotGenerated ? generated : toJson(rbac.PolicySchema, generated);
}

const any = { andIds: { ids: [{ any: true }] } };
const anyPermission = { andRules: { rules: [{ any: true }] } };

describe("authz rule model", () => {
  it("an empty rule matches everything", () => {
    assert.deepEqual(policy({}), { permissions: [anyPermission], principals: [any] });
  });

  it("a policy without rules matches nothing", () => {
    assert.deepEqual(toJson(rbac.PolicySchema, matchNothingPolicy()), {
      permissions: [{ notRule: { any: true } }],
      principals: [{ notId: { any: true } }],
    });
  });

  it("values are or-ed, not-values negated, fields and-ed in Istio's order", () => {
    const got = policy({ to: [{ operation: { ports: ["80"], notPorts: ["81"], methods: ["GET"] } }] }) as {
      permissions: unknown[];
    };
    assert.deepEqual(got.permissions, [
      {
        andRules: {
          rules: [
            { orRules: { rules: [{ header: { name: ":method", stringMatch: { exact: "GET" } } }] } },
            { orRules: { rules: [{ destinationPort: 80 }] } },
            { notRule: { orRules: { rules: [{ destinationPort: 81 }] } } },
          ],
        },
      },
    ]);
  });

  it("when conditions join every from entry and every to entry", () => {
    const got = policy({
      from: [{ source: { namespaces: ["a"] } }, { source: { namespaces: ["b"] } }],
      to: [{ operation: { ports: ["80"] } }],
      when: [
        { key: "source.ip", values: ["1.2.3.4"] },
        { key: "destination.port", values: ["90"] },
      ],
    }) as { principals: { andIds: { ids: unknown[] } }[]; permissions: { andRules: { rules: unknown[] } }[] };
    assert.equal(got.principals.length, 2);
    for (const p of got.principals) {
      assert.deepEqual(p.andIds.ids[1], {
        orIds: { ids: [{ directRemoteIp: { addressPrefix: "1.2.3.4", prefixLen: 32 } }] },
      });
    }
    assert.deepEqual(got.permissions[0].andRules.rules[1], { orRules: { rules: [{ destinationPort: 90 }] } });
  });

  it("an unknown when key leaves the rule out", () => {
    assert.ok(policy({ when: [{ key: "request.unknown", values: ["x"] }] }) instanceof NotGenerated);
  });

  it("an HTTP-only field on TCP leaves an ALLOW rule out", () => {
    assert.ok(
      policy({ to: [{ operation: { methods: ["GET"], ports: ["80"] } }] }, { forTcp: true }) instanceof NotGenerated,
    );
  });

  it("an HTTP-only field on TCP is only dropped from a DENY rule, which then matches more", () => {
    const got = policy(
      { to: [{ operation: { methods: ["GET"], ports: ["80"] } }] },
      { forTcp: true, action: rbac.RBAC_Action.DENY },
    );
    assert.deepEqual((got as { permissions: unknown }).permissions, [
      { andRules: { rules: [{ orRules: { rules: [{ destinationPort: 80 }] } }] } },
    ]);
  });

  it("source principals are rewritten for the trust domain aliases", () => {
    const got = policy(
      { from: [{ source: { principals: ["cluster.local/ns/a/sa/b"] } }] },
      { trustDomains: ["td1", "cluster.local"] },
    );
    assert.deepEqual((got as { principals: unknown }).principals, [
      {
        andIds: {
          ids: [
            {
              orIds: {
                ids: [
                  { authenticated: { principalName: { exact: "spiffe://td1/ns/a/sa/b" } } },
                  { authenticated: { principalName: { exact: "spiffe://cluster.local/ns/a/sa/b" } } },
                ],
              },
            },
          ],
        },
      },
    ]);
  });

  it("a when source.principal shared by several from entries is rewritten once per entry, as Istio does", () => {
    const got = policy(
      {
        from: [{ source: { namespaces: ["a"] } }, { source: { namespaces: ["b"] } }],
        when: [{ key: "source.principal", values: ["cluster.local/ns/a/sa/b"] }],
      },
      { trustDomains: ["td1", "cluster.local"] },
    ) as { principals: { andIds: { ids: { orIds?: { ids: unknown[] } }[] } }[] };
    // Two rewrites of [td1, cluster.local] give each principal twice.
    assert.equal(got.principals[0].andIds.ids[1].orIds?.ids.length, 4);
  });
});
