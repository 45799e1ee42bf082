// `x authz check`'s table from a config dump: HTTP RBAC filters inside an HCM and a network RBAC
// filter, policy names parsed back to name.namespace with their rule counts, DENY before ALLOW,
// CUSTOM from ext-authz shadow rules, and a policy-less RBAC filter as the anonymous match-nothing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { authzSummary } from "../../src/cli/authz-check.ts";
import { parseConfigDump } from "../../src/cli/proxy-config-writer.ts";

const httpRbac = (rules: object, shadow?: object) => ({
  name: "envoy.filters.http.rbac",
  typed_config: {
    "@type": "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC",
    rules,
    shadow_rules: shadow,
  },
});

const dump = {
  configs: [
    {
      "@type": "type.googleapis.com/envoy.admin.v3.ListenersConfigDump",
      dynamic_listeners: [
        {
          active_state: {
            listener: {
              name: "virtualInbound",
              filter_chains: [
                {
                  filters: [
                    {
                      name: "envoy.filters.network.http_connection_manager",
                      typed_config: {
                        http_filters: [
                          httpRbac({ action: "DENY", policies: { "ns[foo]-policy[deny-all]-rule[0]": {} } }),
                          httpRbac(
                            {
                              policies: {
                                "ns[foo]-policy[allow-get]-rule[0]": {},
                                "ns[foo]-policy[allow-get]-rule[1]": {},
                              },
                            },
                            { policies: { "istio-ext-authz-ns[foo]-policy[ext]-rule[0]": {} } },
                          ),
                          { name: "envoy.filters.http.router", typed_config: {} },
                        ],
                      },
                    },
                  ],
                },
                {
                  filters: [
                    { name: "envoy.filters.network.rbac", typed_config: { rules: { action: "ALLOW" } } },
                    { name: "envoy.filters.network.tcp_proxy", typed_config: { cluster: "x" } },
                  ],
                },
              ],
            },
          },
        },
      ],
    },
  ],
};

test("authz check lists the policies of a proxy's RBAC filters by action", () => {
  assert.equal(
    authzSummary(parseConfigDump(JSON.stringify(dump))),
    [
      "ACTION   AuthorizationPolicy         RULES",
      "DENY     deny-all.foo                1",
      "ALLOW    _anonymous_match_nothing_   1",
      "ALLOW    allow-get.foo               2",
      "CUSTOM   ext.foo                     1",
      "",
    ].join("\n"),
  );
});
