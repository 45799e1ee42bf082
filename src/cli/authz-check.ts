// What `sluice x authz check` prints (authz-command.ts has its flags): the AuthorizationPolicies in
// a proxy's listeners, read back from the RBAC filters' policy names
// (`ns[<ns>]-policy[<name>]-rule[<n>]`), counted by action and rule.
import type { JsonObject } from "@bufbuild/protobuf";
import { alignTabs } from "./proxy-config-tabwriter.ts";
import { type ConfigDump, dumpListeners, field, list, obj, text } from "./proxy-config-writer.ts";

const POLICY_NAME = /(?:istio-ext-authz-)?ns\[(.+)\]-policy\[(.+)\]-rule\[(.+)\]/;
const ANONYMOUS = "_anonymous_match_nothing_";
const RBAC_ACTIONS = ["ALLOW", "DENY", "LOG"];

/** The RBAC configs of every filter chain: HTTP RBAC filters inside HCMs, and network RBAC filters. */
function rbacConfigs(dump: ConfigDump): JsonObject[] {
  const configs: JsonObject[] = [];
  for (const listener of dumpListeners(dump)) {
    for (const chain of list(listener, "filter_chains")) {
      for (const filter of list(chain, "filters")) {
        const name = text(filter, "name");
        const typed = obj(filter, "typed_config");
        if (name === "envoy.filters.network.http_connection_manager" || name === "envoy.http_connection_manager") {
          for (const http of list(typed, "http_filters")) {
            const rbac = obj(http, "typed_config");
            if (text(http, "name") === "envoy.filters.http.rbac" && rbac) configs.push(rbac);
          }
        } else if (name === "envoy.filters.network.rbac" && typed) {
          configs.push(typed);
        }
      }
    }
  }
  return configs;
}

/** istioctl's authz table: ACTION, AuthorizationPolicy (name.namespace), RULES. */
export function authzSummary(dump: ConfigDump): string {
  const byAction = new Map<string, Set<string>>();
  const rulesOf = new Map<string, Set<string>>();
  const add = (action: string, policy: string, rule: string) => {
    byAction.set(action, (byAction.get(action) ?? new Set()).add(policy));
    rulesOf.set(policy, (rulesOf.get(policy) ?? new Set()).add(rule));
  };
  const parsed = (name: string): [string, string] => {
    const m = POLICY_NAME.exec(name);
    return m ? [`${m[2]}.${m[1]}`, m[3]] : ["", ""];
  };
  for (const rbac of rbacConfigs(dump)) {
    const rules = obj(rbac, "rules");
    const action = field(rules, "action");
    const actionName = typeof action === "string" ? action : (RBAC_ACTIONS[Number(action ?? 0)] ?? String(action));
    const policies = Object.keys(obj(rules, "policies") ?? {});
    for (const name of policies) add(actionName, ...parsed(name));
    for (const name of Object.keys(obj(obj(rbac, "shadow_rules"), "policies") ?? {})) {
      if (name.startsWith("istio-ext-authz-")) add("CUSTOM", ...parsed(name));
    }
    if (policies.length === 0) add(actionName, ANONYMOUS, "0");
  }
  const rows = [["ACTION", "AuthorizationPolicy", "RULES"]];
  for (const action of ["DENY", "ALLOW", "LOG", "CUSTOM"]) {
    for (const policy of [...(byAction.get(action) ?? [])].sort()) {
      rows.push([action, policy, String(rulesOf.get(policy)?.size ?? 0)]);
    }
  }
  return alignTabs(rows.map((r) => `${r.join("\t")}\n`).join(""), { minWidth: 0, padding: 3 });
}
