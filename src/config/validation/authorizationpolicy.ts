// AuthorizationPolicy (security.istio.io): Istio's ValidateAuthorizationPolicy. Every error is
// prefixed `invalid policy <name>.<namespace>: `; warnings are not.
import type { ConfigObject } from "../model.ts";
import { readEnum } from "./common/enums.ts";
import {
  asObject,
  field,
  type JsonObject,
  listField,
  objectField,
  stringField,
  stringListField,
} from "./common/json.ts";
import { forEachMessage } from "./common/report.ts";
import { validatePolicyTargets } from "./common/selectors.ts";
import { type Findings, type SemanticValidator, withErrorPrefix } from "./findings.ts";
import {
  checkEmptyValues,
  checkPathTemplates,
  checkServiceAccounts,
  checkTrustDomainValues,
  validateAttribute,
  validateIPs,
  validatePorts,
} from "./security.ts";
import { AUTHORIZATION_ACTION } from "./security-decode.ts";

// Source fields in the order Istio checks them, with the Go field name its messages use.
const SOURCE_FIELDS: readonly (readonly [json: string, goName: string])[] = [
  ["principals", "Principals"],
  ["requestPrincipals", "RequestPrincipals"],
  ["namespaces", "Namespaces"],
  ["serviceAccounts", "ServiceAccounts"],
  ["trustDomains", "TrustDomains"],
  ["ipBlocks", "IpBlocks"],
  ["remoteIpBlocks", "RemoteIpBlocks"],
  ["notPrincipals", "NotPrincipals"],
  ["notRequestPrincipals", "NotRequestPrincipals"],
  ["notNamespaces", "NotNamespaces"],
  ["notServiceAccounts", "NotServiceAccounts"],
  ["notTrustDomains", "NotTrustDomains"],
  ["notIpBlocks", "NotIpBlocks"],
  ["notRemoteIpBlocks", "NotRemoteIpBlocks"],
];
const IP_FIELDS = ["ipBlocks", "notIpBlocks", "remoteIpBlocks", "notRemoteIpBlocks"];
// Source fields a TCP connection can match on; trustDomains are left out, as in Istio.
const TCP_SOURCE_FIELDS = [
  "principals",
  "notPrincipals",
  "ipBlocks",
  "notIpBlocks",
  "namespaces",
  "notNamespaces",
  "remoteIpBlocks",
  "notRemoteIpBlocks",
  "serviceAccounts",
  "notServiceAccounts",
];
// The source fields a CUSTOM action cannot use, with the names its messages give them.
const CUSTOM_UNSUPPORTED_SOURCE: readonly (readonly [json: string, label: string])[] = [
  ["namespaces", "From.Namespaces"],
  ["notNamespaces", "From.NotNamespaces"],
  ["serviceAccounts", "From.ServiceAccounts"],
  ["notServiceAccounts", "From.NotServiceAccounts"],
  ["trustDomains", "From.TrustDomains"],
  ["notTrustDomains", "From.NotTrustDomains"],
  ["principals", "From.Principals"],
  ["notPrincipals", "From.NotPrincipals"],
  ["requestPrincipals", "From.RequestPrincipals"],
  ["notRequestPrincipals", "From.NotRequestPrincipals"],
];
const CUSTOM_UNSUPPORTED_KEYS = new Set([
  "source.namespace",
  "source.serviceAccount",
  "source.trustDomain",
  "source.principal",
]);
const OPERATION_FIELDS: readonly (readonly [json: string, goName: string])[] = [
  ["ports", "Ports"],
  ["methods", "Methods"],
  ["paths", "Paths"],
  ["hosts", "Hosts"],
  ["notPorts", "NotPorts"],
  ["notMethods", "NotMethods"],
  ["notPaths", "NotPaths"],
  ["notHosts", "NotHosts"],
];
const NEVER_TRIGGERED =
  "action without `rules` is meaningless as it will never be triggered, add an empty rule `{}` if you want it be triggered for every request";
const DENY_TCP_WARNING =
  "configured AuthorizationPolicy will deny all traffic to TCP ports under its scope due to the use of only HTTP attributes in a DENY rule; it is recommended to explicitly specify the port";

export const validateAuthorizationPolicy: SemanticValidator = (obj, _ctx, out) => {
  const spec = asObject(obj.spec) ?? {};
  const action = readEnum(field(spec, "action"), AUTHORIZATION_ACTION, out.at("action"));
  if (action === undefined) return;
  withErrorPrefix(out, `invalid policy ${policyName(obj)}:`, (found) => {
    validatePolicyTargets(spec, found);
    validatePolicy(spec, action, found);
  });
};

function policyName(obj: ConfigObject): string {
  return `${obj.metadata?.name ?? ""}.${obj.metadata?.namespace ?? ""}`;
}

function validatePolicy(spec: JsonObject, action: string, out: Findings): void {
  const rules = listField(spec, "rules");
  const provider = objectField(spec, "provider");
  if (action === "CUSTOM") {
    if (!rules) out.at("rules").error(`CUSTOM ${NEVER_TRIGGERED}`);
    else if (stringField(provider ?? {}, "name") === "")
      out.at("provider.name").error("`provider.name` must not be empty");
    rules?.forEach((rule, i) => {
      checkCustomRule(asObject(rule), out.at("rules", i));
    });
  }
  if (provider && action !== "CUSTOM") {
    out.at("provider").error(`\`provider\` must not be with non CUSTOM action, found ${action}`);
  }
  if (action === "DENY" && !rules) out.at("rules").error(`DENY ${NEVER_TRIGGERED}`);
  rules?.forEach((rule, i) => {
    checkRule(rule, i, action, out.at("rules", i));
  });
}

// CUSTOM (external authorization) cannot match on peer or request identities.
function checkCustomRule(rule: JsonObject | undefined, out: Findings): void {
  if (!rule) return;
  (listField(rule, "from") ?? []).forEach((from, j) => {
    const source = objectField(asObject(from) ?? {}, "source");
    if (!source) return;
    for (const [field, label] of CUSTOM_UNSUPPORTED_SOURCE) {
      if (listField(source, field)) {
        out.at("from", j).at(`source.${field}`).error(`${label} is currently not supported with CUSTOM action`);
      }
    }
  });
  forEachMessage(listField(rule, "when"), out.at("when"), "when field cannot be nil", (condition, at) => {
    const key = stringField(condition, "key");
    if (CUSTOM_UNSUPPORTED_KEYS.has(key) || key.startsWith("request.auth.")) {
      at.at("key").error(`${key} is currently not supported with CUSTOM action`);
    }
  });
}

function checkRule(value: unknown, i: number, action: string, out: Findings): void {
  const rule = asObject(value);
  if (!rule) {
    out.error(`\`rule\` must not be nil, found at rule ${i}`);
    return;
  }
  let hasSource = false;
  let hasTcpSource = false;
  forEachClause(rule, "from", "source", i, out, (source, at) => {
    hasSource = true;
    checkSource(source, i, at);
    if (TCP_SOURCE_FIELDS.some((field) => listField(source, field))) hasTcpSource = true;
  });
  let hasOperation = false;
  let hasPorts = false;
  forEachClause(rule, "to", "operation", i, out, (operation, at) => {
    hasOperation = true;
    checkOperation(operation, i, at);
    if (listField(operation, "ports") || listField(operation, "notPorts")) hasPorts = true;
  });
  (listField(rule, "when") ?? []).forEach((when, k) => {
    checkCondition(asObject(when) ?? {}, out.at("when", k));
  });
  const httpOnly = (hasSource && !hasOperation && !hasTcpSource) || (hasOperation && !hasPorts);
  if (action === "DENY" && httpOnly) out.warn(DENY_TCP_WARNING);
}

/**
 * Each `from` (`to`) entry of rule `i` must carry its `source` (`operation`); `check` gets each one
 * that does, with a collector positioned at it.
 */
function forEachClause(
  rule: JsonObject,
  list: "from" | "to",
  inner: "source" | "operation",
  i: number,
  out: Findings,
  check: (clause: JsonObject, at: Findings) => void,
): void {
  forEachMessage(
    listField(rule, list),
    out.at(list),
    `\`${list}\` must not be nil, found at rule ${i}`,
    (entry, at) => {
      const clause = objectField(entry, inner);
      if (!clause) {
        at.at(inner).error(`\`${list}.${inner}\` must not be nil, found at rule ${i}`);
        return;
      }
      check(clause, at.at(inner));
    },
  );
}

function checkSource(source: JsonObject, i: number, out: Findings): void {
  const has = (field: string) => listField(source, field) !== undefined;
  if (
    ["principals", "notPrincipals", "namespaces", "notNamespaces"].some(has) &&
    ["serviceAccounts", "notServiceAccounts"].some(has)
  ) {
    out.error(`cannot set serviceAccounts with namespaces or principals, found at rule ${i}`);
  }
  if (!SOURCE_FIELDS.some(([field]) => has(field))) {
    out.error(`\`from.source\` must not be empty, found at rule ${i}`);
  }
  for (const field of IP_FIELDS) {
    for (const message of validateIPs(stringListField(source, field))) out.at(field).error(message);
  }
  for (const [field, goName] of SOURCE_FIELDS) {
    const values = stringListField(source, field);
    const at = out.at(field);
    if (field === "serviceAccounts" || field === "notServiceAccounts") {
      for (const message of checkServiceAccounts(goName, values)) at.error(message);
    } else if (field === "trustDomains" || field === "notTrustDomains") {
      for (const message of checkTrustDomainValues(goName, values)) at.error(message);
    } else {
      for (const message of checkEmptyValues(goName, values)) at.error(message);
    }
  }
}

function checkOperation(operation: JsonObject, i: number, out: Findings): void {
  if (!OPERATION_FIELDS.some(([field]) => listField(operation, field))) {
    out.error(`\`to.operation\` must not be empty, found at rule ${i}`);
  }
  for (const field of ["ports", "notPorts"]) {
    for (const message of validatePorts(stringListField(operation, field))) out.at(field).error(message);
  }
  for (const [field, goName] of OPERATION_FIELDS) {
    for (const message of checkEmptyValues(goName, stringListField(operation, field))) out.at(field).error(message);
  }
  for (const [field, goName] of [
    ["paths", "Paths"],
    ["notPaths", "NotPaths"],
  ]) {
    for (const message of checkPathTemplates(goName, stringListField(operation, field))) out.at(field).error(message);
  }
}

function checkCondition(condition: JsonObject, out: Findings): void {
  const key = stringField(condition, "key");
  if (key === "") {
    out.at("key").error("`key` must not be empty");
    return;
  }
  const values = stringListField(condition, "values");
  const notValues = stringListField(condition, "notValues");
  if (values.length === 0 && notValues.length === 0) {
    out.error(`at least one of \`values\` or \`notValues\` must be set for key ${key}`);
    return;
  }
  const valueError = validateAttribute(key, values);
  if (valueError !== undefined) out.at("values").error(`invalid \`value\` for \`key\` ${key}: ${valueError}`);
  const notValueError = validateAttribute(key, notValues);
  if (notValueError !== undefined) {
    out.at("notValues").error(`invalid \`notValue\` for \`key\` ${key}: ${notValueError}`);
  }
}
