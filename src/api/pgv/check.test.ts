import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  create,
  type DescMessage,
  equals,
  fromBinary,
  type Message,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import * as fixtures from "../gen/sluice/testing/pgv_pb.ts";
import {
  cluster,
  core,
  cors,
  discovery,
  endpoint,
  extAuthz,
  fault,
  fileAccessLog,
  grpcStats,
  hcm,
  httpInspector,
  httpProtocolOptions,
  httpRbac,
  istioCa,
  jwtAuthn,
  listener,
  nds,
  networkRbac,
  originalDst,
  packAny,
  rbac,
  route,
  router,
  tcpProxy,
  tls,
  tlsInspector,
  typeUrl,
  udpaType,
  xdsType,
} from "../index.ts";
import { checkMessage, type Violation } from "./index.ts";

/** A plain init object (never an already-built message), so tests can spread and override it. */
type Init<Desc extends DescMessage> = Exclude<MessageInitShape<Desc>, MessageShape<Desc>>;

const ads = { configSourceSpecifier: { case: "ads", value: {} }, resourceApiVersion: core.ApiVersion.V3 } as const;

function socketAddress(address: string, port: number): MessageInitShape<typeof core.AddressSchema> {
  return { address: { case: "socketAddress", value: { address, portSpecifier: { case: "portValue", value: port } } } };
}

function any<Desc extends DescMessage>(schema: Desc, init: MessageInitShape<Desc>) {
  return packAny(schema, create(schema, init));
}

const routerFilter = {
  name: "envoy.filters.http.router",
  configType: { case: "typedConfig", value: any(router.RouterSchema, {}) },
} as const;

function hcmInit(statPrefix: string): Init<typeof hcm.HttpConnectionManagerSchema> {
  return {
    statPrefix,
    routeSpecifier: { case: "rds", value: { configSource: ads, routeConfigName: "80" } },
    httpFilters: [routerFilter],
  };
}

function listenerWith(hcmConfig: MessageInitShape<typeof hcm.HttpConnectionManagerSchema>) {
  return create(listener.ListenerSchema, {
    name: "0.0.0.0_8080",
    address: socketAddress("0.0.0.0", 8080),
    filterChains: [
      {
        filters: [
          {
            name: "envoy.filters.network.http_connection_manager",
            configType: { case: "typedConfig", value: any(hcm.HttpConnectionManagerSchema, hcmConfig) },
          },
        ],
      },
    ],
  });
}

const clusterInit: Init<typeof cluster.ClusterSchema> = {
  name: "outbound|80||reviews.default.svc.cluster.local",
  clusterDiscoveryType: { case: "type", value: cluster.Cluster_DiscoveryType.EDS },
  connectTimeout: { seconds: 10n },
  edsClusterConfig: { edsConfig: ads },
};

const allowAny: Init<typeof rbac.PolicySchema> = {
  permissions: [{ rule: { case: "any", value: true } }],
  principals: [{ identifier: { case: "any", value: true } }],
};

function sample<Desc extends DescMessage>(name: string, schema: Desc, init: MessageInitShape<Desc>) {
  return { name, schema: schema as DescMessage, message: create(schema, init) as Message };
}

// One minimal valid message of every type the generators will build.
const valid = [
  sample("Listener", listener.ListenerSchema, listenerWith(hcmInit("inbound_0.0.0.0_8080"))),
  sample("Cluster", cluster.ClusterSchema, clusterInit),
  sample("ClusterLoadAssignment", endpoint.ClusterLoadAssignmentSchema, {
    clusterName: "outbound|80||reviews.default.svc.cluster.local",
    endpoints: [
      {
        lbEndpoints: [{ hostIdentifier: { case: "endpoint", value: { address: socketAddress("10.0.0.1", 9080) } } }],
        loadBalancingWeight: 1,
      },
    ],
  }),
  sample("RouteConfiguration", route.RouteConfigurationSchema, {
    name: "80",
    virtualHosts: [
      {
        name: "reviews:80",
        domains: ["reviews", "reviews:80"],
        routes: [
          {
            match: { pathSpecifier: { case: "prefix", value: "/" } },
            action: { case: "route", value: { clusterSpecifier: { case: "cluster", value: "outbound|80||reviews" } } },
          },
        ],
      },
    ],
  }),
  sample("Secret", tls.SecretSchema, {
    name: "default",
    type: {
      case: "tlsCertificate",
      value: {
        certificateChain: { specifier: { case: "inlineBytes", value: new TextEncoder().encode("cert") } },
        privateKey: { specifier: { case: "inlineBytes", value: new TextEncoder().encode("key") } },
      },
    },
  }),
  sample("HttpConnectionManager", hcm.HttpConnectionManagerSchema, hcmInit("inbound_0.0.0.0_8080")),
  sample("TcpProxy", tcpProxy.TcpProxySchema, { statPrefix: "tcp", clusterSpecifier: { case: "cluster", value: "c" } }),
  sample("Router", router.RouterSchema, { suppressEnvoyHeaders: true }),
  sample("HTTPFault", fault.HTTPFaultSchema, {
    delay: { faultDelaySecifier: { case: "fixedDelay", value: { seconds: 1n } }, percentage: { numerator: 50 } },
  }),
  sample("Cors", cors.CorsSchema, {}),
  sample("CorsPolicy", cors.CorsPolicySchema, {
    allowOriginStringMatch: [{ matchPattern: { case: "exact", value: "a.io" } }],
  }),
  sample("http RBAC", httpRbac.RBACSchema, {
    rules: { action: rbac.RBAC_Action.ALLOW, policies: { "ns[a]-policy[b]": allowAny } },
  }),
  sample("network RBAC", networkRbac.RBACSchema, { statPrefix: "tcp.", rules: { policies: { p: allowAny } } }),
  sample("JwtAuthentication", jwtAuthn.JwtAuthenticationSchema, {
    providers: {
      "origins-0": {
        issuer: "https://issuer.example",
        jwksSourceSpecifier: { case: "localJwks", value: { specifier: { case: "inlineString", value: "{}" } } },
      },
    },
  }),
  sample("ExtAuthz", extAuthz.ExtAuthzSchema, {
    services: {
      case: "grpcService",
      value: { targetSpecifier: { case: "envoyGrpc", value: { clusterName: "authz" } } },
    },
    transportApiVersion: core.ApiVersion.V3,
  }),
  sample("GrpcStats", grpcStats.FilterConfigSchema, { emitFilterState: true }),
  sample("OriginalDst", originalDst.OriginalDstSchema, {}),
  sample("TlsInspector", tlsInspector.TlsInspectorSchema, { initialReadBufferSize: 1024 }),
  sample("HttpInspector", httpInspector.HttpInspectorSchema, {}),
  sample("HttpProtocolOptions", httpProtocolOptions.HttpProtocolOptionsSchema, {
    upstreamProtocolOptions: {
      case: "explicitHttpConfig",
      value: { protocolConfig: { case: "http2ProtocolOptions", value: {} } },
    },
  }),
  sample("FileAccessLog", fileAccessLog.FileAccessLogSchema, { path: "/dev/stdout" }),
  sample("DiscoveryRequest", discovery.DiscoveryRequestSchema, {
    node: { id: "sidecar~10.0.0.1~a.ns~ns.svc.cluster.local" },
    typeUrl: typeUrl(cluster.ClusterSchema),
  }),
  sample("DiscoveryResponse", discovery.DiscoveryResponseSchema, {
    versionInfo: "2026-01-01T00:00:00Z/1",
    resources: [any(cluster.ClusterSchema, clusterInit)],
    typeUrl: typeUrl(cluster.ClusterSchema),
    nonce: "n1",
  }),
  sample("DeltaDiscoveryRequest", discovery.DeltaDiscoveryRequestSchema, {
    typeUrl: typeUrl(cluster.ClusterSchema),
    resourceNamesSubscribe: ["*"],
  }),
  sample("DeltaDiscoveryResponse", discovery.DeltaDiscoveryResponseSchema, {
    typeUrl: typeUrl(cluster.ClusterSchema),
    resources: [{ name: "c", version: "1", resource: any(cluster.ClusterSchema, clusterInit) }],
    removedResources: ["old"],
    nonce: "n2",
  }),
  sample("IstioCertificateRequest", istioCa.IstioCertificateRequestSchema, {
    csr: "-----BEGIN CERTIFICATE REQUEST-----",
    validityDuration: 86400n,
    metadata: { ClusterID: "Kubernetes" },
  }),
  sample("NameTable", nds.NameTableSchema, {
    table: {
      "reviews.default.svc.cluster.local": {
        ips: ["10.0.0.1"],
        registry: "Kubernetes",
        shortname: "reviews",
        namespace: "default",
      },
    },
  }),
];

const byPath = (a: Violation, b: Violation) => a.path.localeCompare(b.path) || a.rule.localeCompare(b.rule);
function violations<Desc extends DescMessage>(schema: Desc, init: MessageInitShape<Desc>, now?: Date): Violation[] {
  return checkMessage(schema, create(schema, init), { now }).sort(byPath);
}
const rules = (found: Violation[]) => found.map((v) => `${v.path} ${v.rule}`);

describe("PGV checker on minimal valid Envoy and Istio resources", () => {
  for (const { name, schema, message } of valid) {
    it(`${name} survives an encode/decode round trip and has no violations`, () => {
      const decoded = fromBinary(schema, toBinary(schema, message));
      assert.ok(equals(schema, message, decoded));
      assert.deepEqual(checkMessage(schema, decoded), []);
    });
  }
});

describe("PGV checker on broken Envoy resources", () => {
  it("reports a cluster without name, with a zero connect timeout and an unknown lb_policy", () => {
    const found = violations(cluster.ClusterSchema, {
      ...clusterInit,
      name: "",
      connectTimeout: {},
      lbPolicy: 99 as cluster.Cluster_LbPolicy,
    });
    assert.deepEqual(found, [
      { path: "connect_timeout", rule: "duration.gt", message: "value must be greater than 0s" },
      { path: "lb_policy", rule: "enum.defined_only", message: "value must be one of the defined enum values, got 99" },
      { path: "name", rule: "string.min_len", message: "value length must be at least 1 runes" },
    ]);
  });

  it("reports a port above 65535 and a missing address oneof", () => {
    const found = violations(endpoint.ClusterLoadAssignmentSchema, {
      clusterName: "c",
      endpoints: [
        {
          lbEndpoints: [
            { hostIdentifier: { case: "endpoint", value: { address: socketAddress("10.0.0.1", 70000) } } },
            { hostIdentifier: { case: "endpoint", value: { address: {} } } },
          ],
        },
      ],
    });
    assert.deepEqual(found, [
      {
        path: "endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value",
        rule: "uint32.lte",
        message: "value must be less than or equal to 65535",
      },
      {
        path: "endpoints[0].lb_endpoints[1].endpoint.address.address",
        rule: "oneof.required",
        message: "value is required",
      },
    ]);
  });

  it("reports a virtual host without domains and a route without match or action", () => {
    const found = violations(route.RouteConfigurationSchema, {
      name: "80",
      virtualHosts: [{ name: "vh", domains: [], routes: [{}] }],
    });
    assert.deepEqual(rules(found), [
      "virtual_hosts[0].domains repeated.min_items",
      "virtual_hosts[0].routes[0].action oneof.required",
      "virtual_hosts[0].routes[0].match message.required",
    ]);
    assert.equal(found[0].message, "value must contain at least 1 item(s)");
  });

  it("follows Any payloads: an HCM inside a listener, and a router inside the HCM's http_filters", () => {
    const badRouter = {
      name: "envoy.filters.http.router",
      configType: { case: "typedConfig", value: any(router.RouterSchema, { strictCheckHeaders: ["x-bogus"] }) },
    } as const;
    const found = checkMessage(listener.ListenerSchema, listenerWith({ ...hcmInit(""), httpFilters: [badRouter] }));
    assert.deepEqual(rules(found), [
      "filter_chains[0].filters[0].typed_config.stat_prefix string.min_len",
      "filter_chains[0].filters[0].typed_config.http_filters[0].typed_config.strict_check_headers[0] string.in",
    ]);
  });

  it("reports an Any whose type is unknown and one whose bytes do not decode", () => {
    const unknown = create(AnySchema, { typeUrl: "type.googleapis.com/istio.unknown.Filter", value: new Uint8Array() });
    const corrupt = create(AnySchema, { typeUrl: typeUrl(router.RouterSchema), value: new Uint8Array([0xff, 0xff]) });
    const found = violations(hcm.HttpConnectionManagerSchema, {
      ...hcmInit("x"),
      httpFilters: [
        { name: "a", configType: { case: "typedConfig", value: unknown } },
        { name: "b", configType: { case: "typedConfig", value: corrupt } },
      ],
    });
    assert.deepEqual(rules(found), [
      "http_filters[0].typed_config any.known_type",
      "http_filters[1].typed_config any.decode",
    ]);
  });

  it("checks resources packed in a DiscoveryResponse", () => {
    const found = violations(discovery.DiscoveryResponseSchema, {
      typeUrl: typeUrl(cluster.ClusterSchema),
      resources: [any(cluster.ClusterSchema, { ...clusterInit, name: "" })],
    });
    assert.deepEqual(rules(found), ["resources[0].name string.min_len"]);
  });

  it("reports durations out of bounds: a JWKS fetch timeout of 2^32 s and a negative fault delay", () => {
    const found = violations(jwtAuthn.JwtAuthenticationSchema, {
      providers: {
        p: {
          jwksSourceSpecifier: {
            case: "remoteJwks",
            value: {
              httpUri: {
                uri: "https://x/jwks",
                httpUpstreamType: { case: "cluster", value: "c" },
                timeout: { seconds: 4294967296n },
              },
            },
          },
        },
      },
    });
    assert.deepEqual(found, [
      {
        path: 'providers["p"].remote_jwks.http_uri.timeout',
        rule: "duration.gte_lt",
        message: "value must be inside range [0s, 4294967296s)",
      },
    ]);
    const negative = violations(fault.HTTPFaultSchema, {
      delay: { faultDelaySecifier: { case: "fixedDelay", value: { seconds: -1n } } },
    });
    assert.deepEqual(rules(negative), ["delay.fixed_delay duration.valid"]);
  });

  it("reports an RBAC policy without permissions and a principal with any=false", () => {
    const found = violations(networkRbac.RBACSchema, {
      statPrefix: "",
      rules: { policies: { p: { permissions: [], principals: [{ identifier: { case: "any", value: false } }] } } },
    });
    assert.deepEqual(rules(found), [
      'rules.policies["p"].permissions repeated.min_items',
      'rules.policies["p"].principals[0].any bool.const',
      "stat_prefix string.min_len",
    ]);
  });

  it("applies wrapper rules to the wrapped value (tls_inspector buffer size in (255, 65537))", () => {
    const found = violations(tlsInspector.TlsInspectorSchema, { initialReadBufferSize: 100 });
    assert.deepEqual(found, [
      {
        path: "initial_read_buffer_size",
        rule: "uint32.gt_lt",
        message: "value must be inside range (255, 65537)",
      },
    ]);
  });

  it("reports required oneofs left empty (TcpProxy cluster, upstream protocol options, secret data source)", () => {
    assert.deepEqual(rules(violations(tcpProxy.TcpProxySchema, {})), [
      "cluster_specifier oneof.required",
      "stat_prefix string.min_len",
    ]);
    assert.deepEqual(rules(violations(httpProtocolOptions.HttpProtocolOptionsSchema, {})), [
      "upstream_protocol_options oneof.required",
    ]);
    const secret = violations(tls.SecretSchema, {
      name: "default",
      type: { case: "tlsCertificate", value: { certificateChain: {} } },
    });
    assert.deepEqual(rules(secret), ["tls_certificate.certificate_chain.specifier oneof.required"]);
  });

  it("checks header names loosely where Envoy sets strict=false, refusing only NUL, CR and LF", () => {
    const found = violations(route.RouteConfigurationSchema, {
      requestHeadersToAdd: [{ header: { key: "x-ok header", value: "v" } }, { header: { key: "x-bad\nheader" } }],
    });
    assert.deepEqual(rules(found), ["request_headers_to_add[1].header.key string.well_known_regex"]);
  });

  it("honours ignore_empty on Envoy rules (override_auto_sni_header)", () => {
    assert.deepEqual(violations(core.UpstreamHttpProtocolOptionsSchema, { overrideAutoSniHeader: "" }), []);
    assert.deepEqual(rules(violations(core.UpstreamHttpProtocolOptionsSchema, { overrideAutoSniHeader: "a\nb" })), [
      "override_auto_sni_header string.well_known_regex",
    ]);
  });

  it("converts a TypedStruct to its named type and checks it, and reports an unknown one", () => {
    const typedStruct = (typeUrl: string) =>
      any(xdsType.TypedStructSchema, { typeUrl, value: { strict_check_headers: ["x-bogus"] } });
    const found = violations(hcm.HttpConnectionManagerSchema, {
      ...hcmInit("x"),
      httpFilters: [
        { name: "a", configType: { case: "typedConfig", value: typedStruct(typeUrl(router.RouterSchema)) } },
        {
          name: "b",
          configType: {
            case: "typedConfig",
            value: typedStruct("type.googleapis.com/io.istio.http.peer_metadata.Config"),
          },
        },
      ],
    });
    assert.deepEqual(rules(found), [
      "http_filters[0].typed_config.value.strict_check_headers[0] string.in",
      "http_filters[1].typed_config.type_url any.known_type",
    ]);
  });

  it("reads istiod's older udpa.type.v1.TypedStruct the same way", () => {
    const found = violations(hcm.HttpConnectionManagerSchema, {
      ...hcmInit("x"),
      httpFilters: [
        {
          name: "a",
          configType: {
            case: "typedConfig",
            value: any(udpaType.TypedStructSchema, {
              typeUrl: typeUrl(router.RouterSchema),
              value: { strict_check_headers: ["x-bogus"] },
            }),
          },
        },
      ],
    });
    assert.deepEqual(rules(found), ["http_filters[0].typed_config.value.strict_check_headers[0] string.in"]);
  });

  it("reports durations Envoy refuses whatever the field's rules: negative or beyond 10000 years", () => {
    const found = violations(cluster.ClusterSchema, {
      ...clusterInit,
      connectTimeout: { seconds: 1n, nanos: -1 },
      commonLbConfig: { updateMergeWindow: { seconds: 315_576_000_001n } },
    });
    assert.deepEqual(found, [
      {
        path: "common_lb_config.update_merge_window",
        rule: "duration.valid",
        message: "duration out of range (at most 315576000000s)",
      },
      { path: "connect_timeout", rule: "duration.valid", message: "duration must not be negative" },
    ]);
  });

  it("reports an empty access log path", () => {
    assert.deepEqual(rules(violations(fileAccessLog.FileAccessLogSchema, {})), ["path string.min_len"]);
  });
});

describe("PGV rule kinds (fixture messages)", () => {
  const validStrings: MessageInitShape<typeof fixtures.StringsSchema> = { bounded: "abc" };

  it("accepts a valid message and every well-known format in its valid form", () => {
    const found = violations(fixtures.StringsSchema, {
      ...validStrings,
      exact: "abc",
      len: "äöü",
      bytesBounded: "ä",
      affixes: "amz",
      member: "a",
      hostname: "reviews.default.svc.cluster.local.",
      ip: "::1",
      ipv4: "10.0.0.1",
      ipv6: "fe80::1",
      uri: "https://a.io/x?y",
      uriRef: "/relative/path",
      address: "10.0.0.1",
      uuid: "123e4567-e89b-12d3-a456-426614174000",
      email: "a@b.io",
      headerName: ":authority",
      headerValue: "text/html; q=1",
      looseHeaderValue: "\u0001",
      lenBytes: "ä",
    });
    assert.deepEqual(found, []);
  });

  it("reports every string rule", () => {
    const found = violations(fixtures.StringsSchema, {
      exact: "abd",
      len: "ab",
      bounded: "a",
      bytesBounded: "ääa",
      pattern: "ABC",
      affixes: "bx",
      member: "c",
      nonMember: "bad",
      hostname: "-bad.host",
      ip: "10.0.0",
      ipv4: "::1",
      ipv6: "10.0.0.1",
      uri: "/relative",
      uriRef: "a b",
      address: "bad_host",
      uuid: "123",
      email: "no-at",
      headerName: "bad header",
      headerValue: "a\u0001b",
      looseHeaderValue: "a\rb",
      lenBytes: "abc",
    });
    assert.deepEqual(rules(found), [
      "address string.address",
      "affixes string.contains",
      "affixes string.not_contains",
      "affixes string.prefix",
      "affixes string.suffix",
      "bounded string.min_len",
      "bytes_bounded string.max_bytes",
      "email string.email",
      "exact string.const",
      "header_name string.well_known_regex",
      "header_value string.well_known_regex",
      "hostname string.hostname",
      "ip string.ip",
      "ipv4 string.ipv4",
      "ipv6 string.ipv6",
      "len string.len",
      "len_bytes string.len_bytes",
      "loose_header_value string.well_known_regex",
      "member string.in",
      "non_member string.not_in",
      "pattern string.pattern",
      "uri string.uri",
      "uri_ref string.uri_ref",
      "uuid string.uuid",
    ]);
    assert.equal(
      found.find((v) => v.path === "hostname")?.message,
      "value must be a valid hostname: hostname parts cannot begin with hyphens",
    );
  });

  it("reports hostnames with long labels, bad characters and empty labels", () => {
    for (const hostname of [`${"a".repeat(64)}.io`, "under_score.io", "a..b", "trailing-.io"]) {
      assert.deepEqual(rules(violations(fixtures.StringsSchema, { ...validStrings, hostname })), [
        "hostname string.hostname",
      ]);
    }
  });

  it("checks numeric bounds, exclusive ranges, lists, optional scalars, bools, wrappers, enums and bytes", () => {
    const ok = violations(fixtures.NumbersSchema, { port: 1, outside: 11, ratio: 0.5, nonMember: 1 });
    assert.deepEqual(ok, []);
    const found = violations(fixtures.NumbersSchema, {
      port: 0,
      outside: 5,
      big: 5n,
      ratio: 1,
      member: 3n,
      nonMember: 7,
      exact: 8,
      positive: 0,
      flag: true,
      wrapped: 101,
      color: 7 as fixtures.Color,
      data: new Uint8Array([2, 0, 0, 0, 0]),
      ipv4: new Uint8Array([10, 0, 0]),
    });
    assert.deepEqual(found, [
      { path: "big", rule: "int64.gt", message: "value must be greater than 5" },
      { path: "color", rule: "enum.defined_only", message: "value must be one of the defined enum values, got 7" },
      { path: "data", rule: "bytes.max_len", message: "value length must be at most 4 bytes" },
      { path: "data", rule: "bytes.prefix", message: "value does not have the required prefix" },
      { path: "exact", rule: "fixed32.const", message: "value must equal 9" },
      { path: "flag", rule: "bool.const", message: "value must equal false" },
      { path: "ipv4", rule: "bytes.ipv4", message: "value must be a valid IPv4 address" },
      { path: "member", rule: "uint64.in", message: "value must be in list [1, 2]" },
      { path: "non_member", rule: "sint32.not_in", message: "value must not be in list [7]" },
      { path: "outside", rule: "int32.gt_lt", message: "value must be outside range [0, 10]" },
      { path: "port", rule: "uint32.gte_lte", message: "value must be inside range [1, 65535]" },
      { path: "positive", rule: "float.gt", message: "value must be greater than 0" },
      { path: "ratio", rule: "double.gte_lt", message: "value must be inside range [0, 1)" },
      { path: "wrapped", rule: "uint32.lte", message: "value must be less than or equal to 100" },
    ]);
    const blue = violations(fixtures.NumbersSchema, { port: 1, outside: 11, color: fixtures.Color.BLUE });
    assert.deepEqual(rules(blue), ["color enum.not_in"]);
  });

  it("checks repeated and map rules, including item and key rules and skipped items", () => {
    const found = violations(fixtures.CollectionsSchema, {
      tags: ["a", "a", "", "b"],
      items: { "": { name: "x" }, k: { name: "" }, z: { name: "y" } },
      skipped: [{ name: "" }],
      colors: [fixtures.Color.RED, 9 as fixtures.Color],
      timeouts: { t: {} },
    });
    assert.deepEqual(rules(found), [
      "colors[1] enum.defined_only",
      "items map.max_pairs",
      'items[""] string.min_len',
      'items["k"].name string.min_len',
      "tags repeated.max_items",
      "tags[1] repeated.unique",
      "tags[2] string.min_len",
      'timeouts["t"] duration.gt',
    ]);
    assert.deepEqual(rules(violations(fixtures.CollectionsSchema, {})), ["tags repeated.min_items"]);
  });

  it("checks duration and timestamp rules against the given clock", () => {
    const now = new Date("2026-01-01T00:00:00Z");
    const nowSeconds = BigInt(now.getTime() / 1000);
    assert.deepEqual(rules(violations(fixtures.TimesSchema, {}, now)), ["timeout duration.required"]);
    const ok = violations(
      fixtures.TimesSchema,
      {
        timeout: { seconds: 60n },
        choice: { seconds: 2n },
        past: { seconds: nowSeconds - 1n },
        recent: { seconds: nowSeconds + 3600n },
        after: { seconds: 1000n },
      },
      now,
    );
    assert.deepEqual(ok, []);
    const found = violations(
      fixtures.TimesSchema,
      {
        timeout: { seconds: 60n, nanos: 1 },
        choice: { nanos: 500_000_000 },
        past: { seconds: nowSeconds },
        recent: { seconds: nowSeconds - 3601n },
        after: { seconds: 999n },
      },
      now,
    );
    assert.deepEqual(found, [
      {
        path: "after",
        rule: "timestamp.gte",
        message: "value must be greater than or equal to 1970-01-01T00:16:40.000Z",
      },
      { path: "choice", rule: "duration.in", message: "value must be in list [1s, 2s]" },
      { path: "past", rule: "timestamp.lt_now", message: "value must be less than now" },
      { path: "recent", rule: "timestamp.within", message: "value must be within 3600s of now" },
      { path: "timeout", rule: "duration.gt_lte", message: "value must be inside range (0s, 60s]" },
    ]);
  });

  it("checks required and skipped messages, Any type lists and required oneofs", () => {
    const ok = violations(fixtures.EnvelopeSchema, {
      requiredItem: { name: "a" },
      skippedItem: { name: "" },
      payload: any(fixtures.ItemSchema, { name: "p" }),
      choice: { case: "a", value: "" },
    });
    assert.deepEqual(ok, []);
    assert.deepEqual(rules(violations(fixtures.EnvelopeSchema, {})), [
      "choice oneof.required",
      "payload any.required",
      "required_item message.required",
    ]);
    const found = violations(fixtures.EnvelopeSchema, {
      requiredItem: { name: "" },
      payload: any(fixtures.NumbersSchema, {}),
      choice: { case: "b", value: { name: "" } },
    });
    assert.deepEqual(rules(found), [
      "b.name string.min_len",
      "payload any.in",
      "payload.outside int32.gt_lt",
      "payload.port uint32.gte_lte",
      "required_item.name string.min_len",
    ]);
  });

  it("skips every rule of a message marked validate.disabled", () => {
    assert.deepEqual(violations(fixtures.DisabledSchema, { name: "" }), []);
  });
});
