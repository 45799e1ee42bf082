// The rules of the ambient conversion Istio's goldens (the ambient-authorization conformance corpus)
// leave out: status messages, unsupported actions, waypoint policies, dry-run, scopes, values Istio
// skips, and where Sluice differs (docs/DIFFERENCES.md).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toJson } from "@bufbuild/protobuf";
import { security } from "../api/index.ts";
import type {
  AuthorizationPolicy,
  AuthorizationPolicySpec,
  PeerAuthentication,
  PeerAuthenticationSpec,
} from "../config/types/index.ts";
import {
  convertAuthorizationPolicy,
  convertPeerAuthentication,
  peerAuthenticationPolicyKeys,
  STATIC_STRICT_POLICY_NAME,
  staticStrictPolicy,
} from "./authorization.ts";

const ROOT = "istio-system";
const OPTIONS = { dryRunPolicies: false };

function policy(spec: AuthorizationPolicySpec, namespace = "ns", annotations?: Record<string, string>) {
  const object: AuthorizationPolicy = {
    apiVersion: "security.istio.io/v1",
    kind: "AuthorizationPolicy",
    metadata: { name: "p", namespace, annotations },
    spec,
  };
  return object;
}

/** Protobuf JSON (defaults omitted), so an expectation shows only what is set. */
const json = (authorization: security.Authorization | undefined) =>
  authorization && (toJson(security.AuthorizationSchema, authorization) as Record<string, unknown>);

const L7_ALLOW_STATUS =
  "ztunnel does not support HTTP attributes (found: methods, request.auth.presenter, requestPrincipals). " +
  "In ambient mode you must use a waypoint proxy to enforce HTTP rules. " +
  "Within an ALLOW policy, rules matching HTTP attributes are omitted. " +
  "This will be more restrictive than requested.";

const L4_RULE = { from: [{ source: { namespaces: ["a"] } }] };
const L7_RULE = {
  from: [{ source: { requestPrincipals: ["example.com/sub-1"], namespaces: ["b"] } }],
  to: [{ operation: { methods: ["GET"], ports: ["80"] } }],
  when: [{ key: "request.auth.presenter", values: ["presenter.example.com"] }],
};

describe("convertAuthorizationPolicy", () => {
  it("drops an ALLOW rule with HTTP attributes, so it allows nothing, and says so in Istio's words", () => {
    const converted = convertAuthorizationPolicy(policy({ rules: [L7_RULE, L4_RULE] }), ROOT, OPTIONS);
    assert.deepEqual(json(converted.authorization), {
      name: "p",
      namespace: "ns",
      scope: "NAMESPACE",
      groups: [{ rules: [{ matches: [{ namespaces: [{ exact: "a" }] }] }] }],
    });
    assert.deepEqual(converted.status, { reason: "UnsupportedValue", message: L7_ALLOW_STATUS });
  });

  it("keeps a DENY rule's L4 parts without its HTTP ones, so it denies more", () => {
    const converted = convertAuthorizationPolicy(policy({ action: "DENY", rules: [L7_RULE] }), ROOT, OPTIONS);
    assert.deepEqual(json(converted.authorization)?.groups, [
      {
        rules: [
          { matches: [{ destinationPorts: [80] }] },
          { matches: [{ namespaces: [{ exact: "b" }] }] },
          { matches: [{}] },
        ],
      },
    ]);
    assert.match(
      converted.status?.message ?? "",
      /DENY policy with HTTP attributes is enforced without the HTTP rules\./,
    );
  });

  it("refuses AUDIT and CUSTOM, which ztunnel cannot enforce", () => {
    for (const action of ["AUDIT", "CUSTOM"] as const) {
      const converted = convertAuthorizationPolicy(policy({ action, rules: [L4_RULE] }), ROOT, OPTIONS);
      assert.equal(converted.authorization, undefined);
      assert.deepEqual(converted.status, {
        reason: "UnsupportedValue",
        message: `ztunnel does not support the ${action} action`,
      });
    }
  });

  it("leaves a policy with a target reference to the waypoint, without a status", () => {
    const ref = { kind: "Service", name: "svc" };
    for (const spec of [{ targetRef: ref }, { targetRefs: [ref] }]) {
      const converted = convertAuthorizationPolicy(policy({ ...spec, action: "CUSTOM" }), ROOT, OPTIONS);
      assert.deepEqual(converted, { problems: [] });
    }
  });

  it("scopes by selector and namespace: the root namespace's policy without a selector is global", () => {
    const scope = (spec: AuthorizationPolicySpec, namespace: string) =>
      convertAuthorizationPolicy(policy(spec, namespace), ROOT, OPTIONS).authorization?.scope;
    assert.equal(scope({}, ROOT), security.Scope.GLOBAL);
    assert.equal(scope({}, "ns"), security.Scope.NAMESPACE);
    assert.equal(scope({ selector: { matchLabels: { app: "a" } } }, ROOT), security.Scope.WORKLOAD_SELECTOR);
    assert.equal(scope({ selector: {} }, "ns"), security.Scope.WORKLOAD_SELECTOR);
  });

  it("sends a dry-run policy only when ambient dry-run is enabled", () => {
    const dryRun = policy({ rules: [L4_RULE] }, "ns", { "istio.io/dry-run": "true" });
    const off = convertAuthorizationPolicy(dryRun, ROOT, OPTIONS);
    assert.equal(off.authorization, undefined);
    assert.equal(
      off.status?.message,
      `found policy "ns/p" using dry-run annotation, but support for ambient dry-run authorizationPolicies isn't enabled`,
    );
    const on = convertAuthorizationPolicy(dryRun, ROOT, { dryRunPolicies: true });
    assert.equal(on.authorization?.dryRun, true);
    assert.equal(on.status, undefined);
  });

  it("enforces a policy whose dry-run annotation is no boolean, and names the annotation", () => {
    const converted = convertAuthorizationPolicy(policy({}, "ns", { "istio.io/dry-run": "yes" }), ROOT, OPTIONS);
    assert.equal(converted.authorization?.dryRun, false);
    assert.deepEqual(converted.problems, [
      'AuthorizationPolicy ns/p: metadata.annotations[istio.io/dry-run]: "yes" is not a boolean',
    ]);
  });

  it("skips ports and IPs it cannot read, as Istio does, and splits service accounts at the first slash", () => {
    const spec: AuthorizationPolicySpec = {
      rules: [
        {
          from: [{ source: { ipBlocks: ["nope", "1.2.3.4/33", "2001:db8::/32"], serviceAccounts: ["a/b/c", "sa"] } }],
          to: [{ operation: { ports: ["http", "65536", "-1", "080"] } }],
        },
      ],
    };
    assert.deepEqual(json(convertAuthorizationPolicy(policy(spec), ROOT, OPTIONS).authorization)?.groups, [
      {
        rules: [
          { matches: [{ destinationPorts: [80] }] },
          {
            matches: [
              {
                sourceIps: [{ address: "IAENuAAAAAAAAAAAAAAAAA==", length: 32 }],
                serviceAccounts: [
                  { namespace: "a", serviceAccount: "b/c" },
                  { namespace: "ns", serviceAccount: "sa" },
                ],
              },
            ],
          },
        ],
      },
    ]);
  });

  it("gives an empty rule an empty group and a policy without rules none", () => {
    assert.deepEqual(json(convertAuthorizationPolicy(policy({ rules: [{}] }), ROOT, OPTIONS).authorization)?.groups, [
      {},
    ]);
    assert.equal(convertAuthorizationPolicy(policy({}), ROOT, OPTIONS).authorization?.groups.length, 0);
  });

  it("counts trust domains among what ztunnel cannot check (Istio ignores them, allowing any)", () => {
    const spec: AuthorizationPolicySpec = { rules: [{ from: [{ source: { trustDomains: ["td"] } }] }] };
    const converted = convertAuthorizationPolicy(policy(spec), ROOT, OPTIONS);
    assert.equal(converted.authorization?.groups.length, 0);
    assert.match(converted.status?.message ?? "", /\(found: trustDomains\)/);
  });
});

function peerAuthentication(name: string, namespace: string, spec: PeerAuthenticationSpec): PeerAuthentication {
  return { apiVersion: "security.istio.io/v1", kind: "PeerAuthentication", metadata: { name, namespace }, spec };
}

const SELECTOR = { matchLabels: { app: "a" } };
const strictMesh = peerAuthentication("mesh", ROOT, { mtls: { mode: "STRICT" } });
const WITHOUT_MTLS = { notPrincipals: [{ presence: {} }] };

describe("convertPeerAuthentication", () => {
  it("converts only workload policies with port-level modes outside the root namespace", () => {
    const ports = { portLevelMtls: { "9090": { mode: "STRICT" as const } } };
    assert.equal(
      convertPeerAuthentication(peerAuthentication("w", "ns", ports), undefined, undefined, ROOT),
      undefined,
    );
    const inRoot = peerAuthentication("w", ROOT, { ...ports, selector: SELECTOR });
    assert.equal(convertPeerAuthentication(inRoot, undefined, undefined, ROOT), undefined);
    const noPorts = peerAuthentication("w", "ns", { selector: SELECTOR, mtls: { mode: "PERMISSIVE" } });
    assert.equal(convertPeerAuthentication(noPorts, undefined, undefined, ROOT), undefined);
  });

  it("repeats the inherited STRICT rule after a STRICT workload's own, as Istio does", () => {
    const workload = peerAuthentication("w", "ns", {
      selector: SELECTOR,
      mtls: { mode: "STRICT" },
      portLevelMtls: { "8080": { mode: "PERMISSIVE" } },
    });
    assert.deepEqual(json(convertPeerAuthentication(workload, undefined, strictMesh, ROOT))?.groups, [
      {
        rules: [
          { matches: [WITHOUT_MTLS] },
          { matches: [{ notDestinationPorts: [8080] }] },
          { matches: [WITHOUT_MTLS] },
        ],
      },
    ]);
  });

  it("keeps a STRICT port of a PERMISSIVE workload in a STRICT mesh (Istio drops it)", () => {
    const workload = peerAuthentication("w", "ns", {
      selector: SELECTOR,
      mtls: { mode: "PERMISSIVE" },
      portLevelMtls: { "9090": { mode: "STRICT" } },
    });
    assert.deepEqual(json(convertPeerAuthentication(workload, undefined, strictMesh, ROOT)), {
      name: "converted_peer_authentication_w",
      namespace: "ns",
      scope: "WORKLOAD_SELECTOR",
      action: "DENY",
      groups: [{ rules: [{ matches: [{ ...WITHOUT_MTLS, destinationPorts: [9090] }] }] }],
    });
  });

  it("lets a namespace policy of mode UNSET inherit the mesh's STRICT for port exceptions (Istio drops them)", () => {
    const unsetNamespace = peerAuthentication("default", "ns", { mtls: { mode: "UNSET" } });
    const workload = peerAuthentication("w", "ns", {
      selector: SELECTOR,
      portLevelMtls: { "8080": { mode: "PERMISSIVE" } },
    });
    assert.deepEqual(json(convertPeerAuthentication(workload, unsetNamespace, strictMesh, ROOT))?.groups, [
      { rules: [{ matches: [{ notDestinationPorts: [8080] }] }, { matches: [WITHOUT_MTLS] }] },
    ]);
  });

  it("the static STRICT policy denies connections without a peer identity", () => {
    assert.deepEqual(json(staticStrictPolicy(ROOT)), {
      name: STATIC_STRICT_POLICY_NAME,
      namespace: ROOT,
      scope: "WORKLOAD_SELECTOR",
      action: "DENY",
      groups: [{ rules: [{ matches: [WITHOUT_MTLS] }] }],
    });
  });
});

describe("peerAuthenticationPolicyKeys", () => {
  const STRICT_KEY = `${ROOT}/${STATIC_STRICT_POLICY_NAME}`;
  const keys = (...applying: PeerAuthentication[]) => peerAuthenticationPolicyKeys(ROOT, applying);
  const workload = (spec: PeerAuthenticationSpec) => peerAuthentication("w", "ns", { selector: SELECTOR, ...spec });
  const permissiveNamespace = peerAuthentication("ns-wide", "ns", { mtls: { mode: "PERMISSIVE" } });

  it("references the static STRICT policy where the effective mode is STRICT: mesh, namespace, workload in that order", () => {
    assert.deepEqual(keys(), []);
    assert.deepEqual(keys(strictMesh), [STRICT_KEY]);
    assert.deepEqual(keys(strictMesh, permissiveNamespace), []);
    assert.deepEqual(keys(strictMesh, peerAuthentication("ns-wide", "ns", { mtls: { mode: "UNSET" } })), [STRICT_KEY]);
    assert.deepEqual(keys(permissiveNamespace, workload({ mtls: { mode: "STRICT" } })), [STRICT_KEY]);
    assert.deepEqual(keys(strictMesh, workload({ mtls: { mode: "DISABLE" } })), []);
    // A root namespace policy with a selector is no mesh policy.
    assert.deepEqual(keys(peerAuthentication("sel", ROOT, { selector: SELECTOR, mtls: { mode: "STRICT" } })), []);
  });

  it("the oldest policy of a level wins", () => {
    const at = (p: PeerAuthentication, creationTimestamp: string) => ({
      ...p,
      metadata: { ...p.metadata, creationTimestamp },
    });
    const strictNamespace = peerAuthentication("strict", "ns", { mtls: { mode: "STRICT" } });
    assert.deepEqual(
      keys(at(strictNamespace, "2026-02-01T00:00:00Z"), at(permissiveNamespace, "2026-01-01T00:00:00Z")),
      [],
    );
    assert.deepEqual(
      keys(at(strictNamespace, "2025-02-01T00:00:00Z"), at(permissiveNamespace, "2026-01-01T00:00:00Z")),
      [STRICT_KEY],
    );
  });

  it("references the workload's converted policy, in place of the static one, when its ports are exceptions to its mode", () => {
    const converted = "ns/converted_peer_authentication_w";
    const ports = (mode: "STRICT" | "PERMISSIVE" | "DISABLE") => ({ portLevelMtls: { "8080": { mode } } });
    assert.deepEqual(keys(workload({ mtls: { mode: "STRICT" }, ...ports("DISABLE") })), [converted]);
    assert.deepEqual(keys(workload({ mtls: { mode: "STRICT" }, ...ports("STRICT") })), [STRICT_KEY]);
    assert.deepEqual(keys(strictMesh, workload({ mtls: { mode: "PERMISSIVE" }, ...ports("STRICT") })), [converted]);
    assert.deepEqual(keys(strictMesh, workload(ports("PERMISSIVE"))), [converted]);
    assert.deepEqual(keys(permissiveNamespace, workload(ports("STRICT"))), [converted]);
    assert.deepEqual(keys(permissiveNamespace, workload(ports("PERMISSIVE"))), []);
    // Istio's quirk: under an inherited STRICT, a DISABLE port is no exception (the port stays STRICT).
    assert.deepEqual(keys(strictMesh, workload(ports("DISABLE"))), [STRICT_KEY]);
  });
});
