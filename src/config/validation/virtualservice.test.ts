import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { parseAllDocuments } from "yaml";
import { runSemantic } from "../../../test/support/validation.ts";
import type { ConfigObject, Issue } from "../model.ts";
import { validateVirtualService } from "./virtualservice.ts";

const route = [{ destination: { host: "reviews" } }];

function vs(spec: Record<string, unknown>, annotations?: Record<string, string>) {
  return runSemantic(validateVirtualService, spec, {
    kind: "VirtualService",
    metadata: { name: "n", namespace: "ns", annotations },
  });
}

function messages(issues: Issue[]): string[] {
  return issues.map((i) => i.message);
}

describe("VirtualService top level", () => {
  test("VirtualService: a delegate (no hosts) has no gateways, tls or tcp routes", () => {
    const r = vs({ gateways: ["ns/gw"], http: [{ route }], tls: [{}], tcp: [{ route }] });
    assert.deepEqual(messages(r.errors).slice(0, 3), [
      "delegate virtual service must have no gateways specified",
      "delegate virtual service must have no tls route specified",
      "delegate virtual service must have no tcp route specified",
    ]);
  });

  test("VirtualService: gateway references (legacy format warning, namespace/name labels)", () => {
    const legacy = vs({ hosts: ["a.com"], gateways: ["gw.ns"], http: [{ route }] });
    assert.deepEqual(legacy.errors, []);
    assert.deepEqual(messages(legacy.warnings), [
      'using legacy gatewayName format "gw.ns"; prefer the <namespace>/<name> format: "ns/gw"',
    ]);
    assert.deepEqual(vs({ hosts: ["a.com"], gateways: ["ns/gw~x"], http: [{ route }] }).errors, [
      { path: "spec.gateways", message: 'invalid value for gateway name: "gw~x"' },
    ]);
  });

  test("VirtualService: route-semantics=gateway skips gateway-name and destination checks", () => {
    const r = vs(
      { hosts: ["a.com"], gateways: ["ns/gw~x"], http: [{ route: [{ destination: { host: "*" } }] }] },
      { "internal.istio.io/route-semantics": "gateway" },
    );
    assert.deepEqual(r.errors, []);
  });

  test("VirtualService: JWT claim routing is only for gateways", () => {
    const spec = {
      hosts: ["a.com"],
      http: [{ match: [{ headers: { "@request.auth.claims.sub": { exact: "x" } } }], route }],
    };
    assert.deepEqual(vs(spec).errors, [
      {
        path: "spec.http[0].match[0].headers.@request.auth.claims.sub",
        message:
          "JWT claim based routing (key: @request.auth.claims.sub) is only supported for gateway, found no gateways: []",
      },
    ]);
    assert.deepEqual(messages(vs({ ...spec, gateways: ["mesh"] }).errors), [
      "JWT claim based routing (key: @request.auth.claims.sub) is only supported for gateway, found no gateways: [mesh]",
    ]);
    assert.deepEqual(vs({ ...spec, gateways: ["ns/gw"] }).errors, []);
  });

  test("VirtualService: hosts are wildcard domains or IPs; * is not allowed for the mesh", () => {
    assert.deepEqual(vs({ hosts: ["foo.*.com", "10.0.0.1", "*.a.com"], http: [{ route }] }).errors, [
      { path: "spec.hosts[0]", message: 'domain name "*.com" invalid (label "*" invalid)' },
    ]);
    assert.deepEqual(vs({ hosts: ["*"], http: [{ route }] }).errors, [
      {
        path: "spec.hosts[0]",
        message: "wildcard host * is not allowed for virtual services bound to the mesh gateway",
      },
    ]);
    assert.deepEqual(vs({ hosts: ["*"], gateways: ["ns/gw"], http: [{ route }] }).errors, []);
  });

  test("VirtualService: overlapping hosts are duplicates", () => {
    assert.deepEqual(vs({ hosts: ["*.a.com", "b.a.com", "c.com"], http: [{ route }] }).errors, [
      { path: "spec.hosts[1]", message: "duplicate hosts in virtual service: *.a.com & b.a.com" },
    ]);
  });

  test("VirtualService: http, tcp or tls must be provided; an http route may not be null", () => {
    assert.deepEqual(messages(vs({ hosts: ["a.com"], http: [] }).errors), [
      "http, tcp or tls must be provided in virtual service",
    ]);
    assert.deepEqual(vs({ hosts: ["a.com"], http: [null] }).errors, [
      { path: "spec.http[0]", message: "http route may not be null" },
    ]);
  });

  test("VirtualService: exportTo entries", () => {
    assert.deepEqual(vs({ hosts: ["a.com"], http: [{ route }], exportTo: ["ns", "."] }).errors, [
      { path: "spec.exportTo", message: "duplicate entries in exportTo: . and current namespace ns" },
    ]);
  });
});

describe("VirtualService delegation (Istio's chaining cases)", () => {
  const delegate = { name: "test", namespace: "test" };
  const cases: [string, Record<string, unknown>, boolean][] = [
    ["root simple", { hosts: ["foo.bar"], gateways: ["test-gateway"], http: [{ delegate }] }, true],
    ["root applies to sidecar with delegate", { hosts: ["foo.bar"], http: [{ delegate }] }, true],
    ["root with delegate and destination in one route", { hosts: ["foo.bar"], http: [{ delegate, route }] }, false],
    ["delegate with no destination", { hosts: [], http: [{}] }, false],
    ["delegate with delegate", { hosts: [], http: [{ delegate }] }, false],
    ["delegate with TCP route", { hosts: [], tcp: [{ route }] }, false],
    ["delegate with gateway", { hosts: [], gateways: ["test"], http: [{ route }] }, false],
    ["delegate with sourceNamespace", { hosts: [], http: [{ match: [{ sourceNamespace: "test" }], route }] }, true],
  ];
  for (const [name, spec, valid] of cases) {
    test(`VirtualService: ${name} is ${valid ? "valid" : "invalid"}`, () => {
      assert.equal(vs(spec).errors.length === 0, valid);
    });
  }
});

describe("VirtualService TLS and TCP routes", () => {
  const tlsRoute = (match: unknown[], extra: Record<string, unknown> = {}) =>
    vs({ hosts: ["a.com", "*.b.com"], gateways: ["ns/gw"], tls: [{ match, route }], ...extra });

  test("VirtualService: TLS routes need matches, non-null matches with SNI hosts, and a route", () => {
    assert.deepEqual(messages(vs({ hosts: ["a.com"], tls: [{}] }).errors), [
      "TLS route must have at least one match condition",
      "TLS route is required",
    ]);
    assert.deepEqual(tlsRoute([null, {}]).errors, [
      { path: "spec.tls[0].match[0]", message: "TLS match may not be null" },
      { path: "spec.tls[0].match[1]", message: "TLS match must have at least one SNI host" },
    ]);
  });

  test("VirtualService: SNI hosts must be subsets of the hosts; IPs only warn", () => {
    const r = tlsRoute([{ sniHosts: ["a.com", "x.b.com", "c.com", "10.1.1.1"] }]);
    assert.deepEqual(r.errors, [
      {
        path: "spec.tls[0].match[0].sniHosts[2]",
        message: 'SNI host "c.com" is not a compatible subset of any of the virtual service hosts: [a.com, *.b.com]',
      },
    ]);
    assert.deepEqual(messages(r.warnings), [
      'using an IP address ("10.1.1.1") goes against SNI spec and most clients do not support this',
    ]);
  });

  test("VirtualService: without gateways SNI hosts are still checked as gateway-bound (outbound_ form)", () => {
    const spec = {
      hosts: ["outbound_.80_._.a.com"],
      tls: [{ match: [{ sniHosts: ["outbound_.80_._.a.com"] }], route }],
    };
    assert.deepEqual(vs(spec).errors, [
      { path: "spec.hosts[0]", message: 'domain name "outbound_.80_._.a.com" invalid (label "outbound_" invalid)' },
    ]);
    assert.deepEqual(vs({ ...spec, gateways: ["ns/gw"] }).errors, []);
  });

  test("VirtualService: L4 match fields (destination subnets, port, source labels, gateways)", () => {
    const r = tlsRoute([{ sniHosts: ["a.com"], destinationSubnets: ["1.2.3.0/33"], port: 0 }]);
    assert.deepEqual(messages(r.errors), ["1.2.3.0/33 is not a valid CIDR block"]);
    const tcp = vs({ hosts: ["a.com"], tcp: [{ match: [null, { port: 99999 }], route }] });
    assert.deepEqual(tcp.errors, [
      { path: "spec.tcp[0].match[0]", message: "tcp match may not be nil" },
      { path: "spec.tcp[0].match[1].port", message: "port number 99999 must be in the range 1..65535" },
    ]);
  });

  test("VirtualService: TCP routes need a route", () => {
    assert.deepEqual(vs({ hosts: ["a.com"], tcp: [{ match: [{ port: 80 }] }] }).errors, [
      { path: "spec.tcp[0]", message: "TCP route is required" },
    ]);
  });
});

describe("VirtualService unreachable-rule warnings", () => {
  test("VirtualService: only the last rule can have no matches; later matches are unreachable", () => {
    const r = vs({ hosts: ["a.com"], http: [{ route }, { name: "second", route }, { match: [{ port: 80 }], route }] });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.warnings, [
      {
        path: "spec.http[1]",
        message: 'virtualService rule "second" not used (only the last rule can have no matches)',
      },
      { path: "spec.http[2]", message: "virtualService rule #2 not used (route without matches defined before)" },
    ]);
  });

  test("VirtualService: a match repeated from an earlier rule is not used (names ignored)", () => {
    const match = { uri: { exact: "/a" } };
    const r = vs({
      hosts: ["a.com"],
      http: [
        { match: [match], route },
        { match: [{ ...match, name: "again" }], route },
      ],
    });
    assert.deepEqual(r.warnings, [
      {
        path: "spec.http[1].match[0]",
        message: 'virtualService rule #1 match "again" is not used (duplicate/overlapping match in rule #0)',
      },
      { path: "spec.http[1]", message: "virtualService rule #1 not used (all matches used by prior rules)" },
    ]);
  });

  test("VirtualService: a prefix covered by an earlier shorter prefix is not used", () => {
    const r = vs({
      hosts: ["a.com"],
      http: [
        { name: "short", match: [{ uri: { prefix: "/api" } }], route },
        { match: [{ uri: { prefix: "/api/v1" } }], route },
        { match: [{ uri: { prefix: "/api/v2" }, method: { exact: "POST" } }], route },
      ],
    });
    assert.deepEqual(r.warnings, [
      {
        path: "spec.http[1].match[0]",
        message:
          'virtualService rule #1 match #0 of prefix /api/v1 is not used (duplicate/overlapping match in rule #0 of prefix /api on "short")',
      },
    ]);
  });

  test("VirtualService: TCP rules repeat-match warnings", () => {
    const r = vs({
      hosts: ["a.com"],
      tcp: [
        { match: [{ port: 80 }], route },
        { match: [{ port: 80 }], route },
      ],
    });
    assert.deepEqual(messages(r.warnings), [
      "virtualService rule #1 match #0 is not used (duplicate/overlapping match in rule #0)",
      "virtualService rule #1 not used (all matches used by prior rules)",
    ]);
  });
});

// The analyzer fixtures include VirtualServices the webhook rejects on purpose; these are the exact errors.
const KNOWN_INVALID: Record<string, string[]> = {
  "deprecation.yaml productpage": ["HTTP route, redirect or direct_response is required"],
  "virtualservice_destinationhosts.yaml reviews-bogushost": ["destination is required", "total destination weight = 0"],
  "virtualservice_gateways.yaml httpbin": ["http, tcp or tls must be provided in virtual service"],
  "virtualservice_gateways.yaml httpbin-bogus": ["http, tcp or tls must be provided in virtual service"],
  "virtualservice_gateways.yaml httpbin-mesh": [
    "wildcard host * is not allowed for virtual services bound to the mesh gateway",
    "http, tcp or tls must be provided in virtual service",
  ],
  "virtualservice_gateways.yaml cross-test": ["http, tcp or tls must be provided in virtual service"],
  "virtualservice_internal_gateway_ref.yaml httpbin": [
    'invalid value for gateway name: "gateway~istio-autogenerated-k8s-gateway~foo"',
  ],
};

const CONFORMANCE = new URL("../../../../shared/conformance/istio/", import.meta.url);

function corpusVirtualServices(dir: string): [string, ConfigObject][] {
  const base = new URL(`${dir}/`, CONFORMANCE);
  return readdirSync(base)
    .filter((file) => file.endsWith(".yaml"))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(new URL(file, base), "utf8"))
        .map((doc) => doc.toJS() as ConfigObject | null)
        .filter((obj): obj is ConfigObject => obj?.kind === "VirtualService")
        .map((obj): [string, ConfigObject] => [`${file} ${obj.metadata?.name}`, obj]),
    );
}

describe("VirtualService: Istio's sample configs", () => {
  for (const dir of ["inputs", "analysis/testdata"]) {
    test(`VirtualService: the VirtualServices of ${dir}/*.yaml pass the webhook (except known-invalid analyzer fixtures)`, () => {
      const docs = corpusVirtualServices(dir);
      assert.ok(docs.length > 10);
      for (const [key, obj] of docs) {
        const result = runSemantic(validateVirtualService, obj.spec, {
          kind: "VirtualService",
          metadata: obj.metadata,
        });
        assert.deepEqual(messages(result.errors), KNOWN_INVALID[key] ?? [], key);
      }
    });
  }
});
