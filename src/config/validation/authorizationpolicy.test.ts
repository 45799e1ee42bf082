import assert from "node:assert/strict";
import { test } from "node:test";
import { runSemantic } from "../../../test/support/validation.ts";
import type { ValidationResult } from "../model.ts";
import { validateAuthorizationPolicy } from "./authorizationpolicy.ts";

const PREFIX = "invalid policy n.ns: ";

function check(spec: unknown): ValidationResult {
  return runSemantic(validateAuthorizationPolicy, spec, {
    apiVersion: "security.istio.io/v1",
    kind: "AuthorizationPolicy",
  });
}

test("errors carry the `invalid policy <name>.<namespace>:` prefix; selector warning does not", () => {
  const { errors, warnings } = check({ selector: {}, targetRef: { kind: "Service", name: "s" } });
  assert.deepEqual(errors, [
    { path: "spec", message: `${PREFIX}only one of targetRefs or workloadSelector can be set` },
  ]);
  assert.deepEqual(warnings, [{ path: "spec.selector", message: "workload selector specified without labels" }]);
});

test("unknown action name fails decoding", () => {
  assert.deepEqual(check({ action: "BLOCK" }).errors, [
    {
      path: "spec.action",
      message: `unknown value "\\"BLOCK\\"" for enum istio.security.v1beta1.AuthorizationPolicy.Action`,
    },
  ]);
});

test("CUSTOM needs rules and a provider name, and rejects identity matches", () => {
  assert.deepEqual(check({ action: "CUSTOM", provider: { name: "ext" }, rules: [] }).errors, [
    {
      path: "spec.rules",
      message: `${PREFIX}CUSTOM action without \`rules\` is meaningless as it will never be triggered, add an empty rule \`{}\` if you want it be triggered for every request`,
    },
  ]);
  assert.deepEqual(check({ action: "CUSTOM", rules: [{}] }).errors, [
    { path: "spec.provider.name", message: `${PREFIX}\`provider.name\` must not be empty` },
  ]);
  const rules = [
    {
      from: [{ source: { notRequestPrincipals: ["a"] } }],
      when: [null, { key: "request.auth.claims[x]", values: ["a"] }],
    },
  ];
  assert.deepEqual(
    check({ action: "CUSTOM", provider: { name: "e" }, rules })
      .errors.map((e) => e.message)
      .slice(0, 3),
    [
      `${PREFIX}From.NotRequestPrincipals is currently not supported with CUSTOM action`,
      `${PREFIX}when field cannot be nil`,
      `${PREFIX}request.auth.claims[x] is currently not supported with CUSTOM action`,
    ],
  );
});

test("provider only with CUSTOM; DENY needs rules", () => {
  assert.deepEqual(
    check({ action: "DENY", provider: { name: "x" } }).errors.map((e) => e.message),
    [
      `${PREFIX}\`provider\` must not be with non CUSTOM action, found DENY`,
      `${PREFIX}DENY action without \`rules\` is meaningless as it will never be triggered, add an empty rule \`{}\` if you want it be triggered for every request`,
    ],
  );
});

test("rule shapes: nil rule, nil from, missing and empty source, nil to, missing and empty operation", () => {
  const { errors } = check({
    rules: [null, { from: [null, {}, { source: {} }], to: [null, {}, { operation: {} }] }],
  });
  assert.deepEqual(errors, [
    { path: "spec.rules[0]", message: `${PREFIX}\`rule\` must not be nil, found at rule 0` },
    { path: "spec.rules[1].from[0]", message: `${PREFIX}\`from\` must not be nil, found at rule 1` },
    { path: "spec.rules[1].from[1].source", message: `${PREFIX}\`from.source\` must not be nil, found at rule 1` },
    { path: "spec.rules[1].from[2].source", message: `${PREFIX}\`from.source\` must not be empty, found at rule 1` },
    { path: "spec.rules[1].to[0]", message: `${PREFIX}\`to\` must not be nil, found at rule 1` },
    { path: "spec.rules[1].to[1].operation", message: `${PREFIX}\`to.operation\` must not be nil, found at rule 1` },
    { path: "spec.rules[1].to[2].operation", message: `${PREFIX}\`to.operation\` must not be empty, found at rule 1` },
  ]);
});

test("source: serviceAccounts exclude principals/namespaces; bad IPs; empty values named by Go field", () => {
  const { errors } = check({
    rules: [
      {
        from: [
          {
            source: {
              serviceAccounts: ["ns/sa"],
              namespaces: ["x"],
              notIpBlocks: ["1.2.3.4/40"],
              requestPrincipals: [""],
            },
          },
        ],
      },
    ],
  });
  assert.deepEqual(
    errors.map((e) => e.message),
    [
      `${PREFIX}cannot set serviceAccounts with namespaces or principals, found at rule 0`,
      `${PREFIX}bad CIDR range (1.2.3.4/40): netip.ParsePrefix("1.2.3.4/40"): prefix length out of range`,
      `${PREFIX}empty value not allowed, found in RequestPrincipals`,
    ],
  );
  assert.equal(errors[1].path, "spec.rules[0].from[0].source.notIpBlocks");
});

test("operation: bad ports, empty values, path templates", () => {
  const { errors } = check({
    rules: [{ to: [{ operation: { ports: ["x"], methods: [""], notPaths: ["/{**}/{*}"] } }] }],
  });
  assert.deepEqual(
    errors.map((e) => e.message),
    [
      `${PREFIX}bad port (x): strconv.ParseUint: parsing "x": invalid syntax`,
      `${PREFIX}empty value not allowed, found in Methods`,
      `${PREFIX}invalid or unsupported path {**}/{*}, found in NotPaths. {**} is not the last operator`,
    ],
  );
});

test("when: key required, values or notValues required, attribute checked on both lists", () => {
  const { errors } = check({
    rules: [{ when: [{ values: ["a"] }, { key: "source.ip" }, { key: "foo", values: ["a"], notValues: ["b"] }] }],
  });
  assert.deepEqual(errors, [
    { path: "spec.rules[0].when[0].key", message: `${PREFIX}\`key\` must not be empty` },
    {
      path: "spec.rules[0].when[1]",
      message: `${PREFIX}at least one of \`values\` or \`notValues\` must be set for key source.ip`,
    },
    {
      path: "spec.rules[0].when[2].values",
      message: `${PREFIX}invalid \`value\` for \`key\` foo: unknown attribute: foo`,
    },
    {
      path: "spec.rules[0].when[2].notValues",
      message: `${PREFIX}invalid \`notValue\` for \`key\` foo: unknown attribute: foo`,
    },
  ]);
});

test("DENY with only HTTP attributes warns that TCP traffic is denied", () => {
  const warning =
    "configured AuthorizationPolicy will deny all traffic to TCP ports under its scope due to the use of only HTTP attributes in a DENY rule; it is recommended to explicitly specify the port";
  assert.deepEqual(check({ action: "DENY", rules: [{ to: [{ operation: { methods: ["GET"] } }] }] }).warnings, [
    { path: "spec.rules[0]", message: warning },
  ]);
  assert.deepEqual(check({ action: "DENY", rules: [{ from: [{ source: { requestPrincipals: ["*"] } }] }] }).warnings, [
    { path: "spec.rules[0]", message: warning },
  ]);
  assert.deepEqual(
    check({ action: "DENY", rules: [{ from: [{ source: { trustDomains: ["td"] } }] }] }).warnings.length,
    1,
  );
  assert.deepEqual(
    check({ action: "DENY", rules: [{ to: [{ operation: { ports: ["80"], methods: ["GET"] } }] }] }).warnings,
    [],
  );
  assert.deepEqual(check({ action: "ALLOW", rules: [{ to: [{ operation: { methods: ["GET"] } }] }] }).warnings, []);
});
