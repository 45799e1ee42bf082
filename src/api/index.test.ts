import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, getOption, toBinary } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { generatedFiles } from "./gen/files.ts";
import {
  cluster,
  core,
  istioCa,
  nds,
  packAny,
  registry,
  router,
  schemaForTypeUrl,
  TYPE_URL_PREFIX,
  typeUrl,
  unpackAny,
  validate,
} from "./index.ts";

// The type URLs Sluice serves or packs into typed_config.
const neededTypes = [
  "envoy.config.listener.v3.Listener",
  "envoy.config.cluster.v3.Cluster",
  "envoy.config.endpoint.v3.ClusterLoadAssignment",
  "envoy.config.endpoint.v3.LbEndpoint",
  "envoy.config.route.v3.RouteConfiguration",
  "envoy.config.route.v3.VirtualHost",
  "envoy.config.core.v3.Node",
  "envoy.config.rbac.v3.RBAC",
  "envoy.extensions.transport_sockets.tls.v3.Secret",
  "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
  "envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext",
  "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
  "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
  "envoy.extensions.filters.network.rbac.v3.RBAC",
  "envoy.extensions.filters.http.router.v3.Router",
  "envoy.extensions.filters.http.fault.v3.HTTPFault",
  "envoy.extensions.filters.http.cors.v3.Cors",
  "envoy.extensions.filters.http.cors.v3.CorsPolicy",
  "envoy.extensions.filters.http.rbac.v3.RBAC",
  "envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication",
  "envoy.extensions.filters.http.ext_authz.v3.ExtAuthz",
  "envoy.extensions.filters.http.grpc_stats.v3.FilterConfig",
  "envoy.extensions.filters.http.wasm.v3.Wasm",
  "envoy.extensions.filters.listener.original_dst.v3.OriginalDst",
  "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector",
  "envoy.extensions.filters.listener.http_inspector.v3.HttpInspector",
  "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
  "envoy.extensions.access_loggers.file.v3.FileAccessLog",
  "envoy.extensions.access_loggers.grpc.v3.HttpGrpcAccessLogConfig",
  "envoy.extensions.access_loggers.stream.v3.StdoutAccessLog",
  "envoy.admin.v3.ConfigDump",
  "envoy.admin.v3.ClustersConfigDump",
  "envoy.service.discovery.v3.DiscoveryRequest",
  "envoy.service.discovery.v3.DiscoveryResponse",
  "envoy.service.discovery.v3.DeltaDiscoveryRequest",
  "envoy.service.discovery.v3.DeltaDiscoveryResponse",
  "envoy.service.status.v3.ClientStatusResponse",
  "envoy.type.matcher.v3.StringMatcher",
  "envoy.type.v3.Percent",
  "xds.type.v3.TypedStruct",
  "google.rpc.Status",
  "google.protobuf.Struct",
  "istio.v1.auth.IstioCertificateRequest",
  "istio.networking.nds.v1.NameTable",
];

describe("api registry", () => {
  it("resolves the type URL of every resource and extension Sluice generates", () => {
    for (const name of neededTypes) {
      const schema = schemaForTypeUrl(TYPE_URL_PREFIX + name);
      assert.ok(schema, name);
      assert.equal(typeUrl(schema), TYPE_URL_PREFIX + name);
    }
  });

  it("holds every message of every generated file", () => {
    assert.ok(generatedFiles.length > 100);
    for (const file of generatedFiles) {
      for (const message of file.messages) assert.equal(registry.getMessage(message.typeName), message);
    }
  });

  it("registers the xDS services under their gRPC names", () => {
    for (const name of [
      "envoy.service.discovery.v3.AggregatedDiscoveryService",
      "envoy.service.cluster.v3.ClusterDiscoveryService",
      "envoy.service.listener.v3.ListenerDiscoveryService",
      "envoy.service.route.v3.RouteDiscoveryService",
      "envoy.service.endpoint.v3.EndpointDiscoveryService",
      "envoy.service.secret.v3.SecretDiscoveryService",
      "istio.v1.auth.IstioCertificateService",
    ]) {
      assert.ok(registry.getService(name), name);
    }
    const ads = registry.getService("envoy.service.discovery.v3.AggregatedDiscoveryService")!;
    assert.deepEqual(
      ads.methods.map((m) => [m.name, m.methodKind]),
      [
        ["StreamAggregatedResources", "bidi_streaming"],
        ["DeltaAggregatedResources", "bidi_streaming"],
      ],
    );
  });
});

describe("Any helpers", () => {
  it("packs with the type.googleapis.com URL and unpacks through the registry", () => {
    const message = create(router.RouterSchema, { suppressEnvoyHeaders: true });
    const any = packAny(router.RouterSchema, message);
    assert.equal(any.typeUrl, "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router");
    const unpacked = unpackAny(any);
    assert.equal(unpacked?.$typeName, "envoy.extensions.filters.http.router.v3.Router");
    assert.equal(unpackAny(any, router.RouterSchema)?.suppressEnvoyHeaders, true);
  });

  it("returns undefined for a type the registry lacks or a different requested type", () => {
    const any = packAny(router.RouterSchema, create(router.RouterSchema));
    assert.equal(unpackAny(any, cluster.ClusterSchema), undefined);
    assert.equal(unpackAny({ ...any, typeUrl: "type.googleapis.com/istio.nope.Filter" }), undefined);
  });
});

describe("corrected validate.proto", () => {
  it("has the rules the shipped PGV copy lacks, at the published field numbers", () => {
    const numberOf = (schema: { fields: readonly { name: string; number: number }[] }, name: string) =>
      schema.fields.find((f) => f.name === name)?.number;
    assert.equal(numberOf(validate.StringRulesSchema, "ignore_empty"), 26);
    assert.equal(numberOf(validate.BytesRulesSchema, "ignore_empty"), 14);
    assert.equal(numberOf(validate.UInt32RulesSchema, "ignore_empty"), 8);
    assert.equal(numberOf(validate.RepeatedRulesSchema, "ignore_empty"), 5);
    assert.equal(numberOf(validate.MapRulesSchema, "ignore_empty"), 6);
    assert.equal(validate.ignored.number, 1072);
    assert.equal(validate.rules.number, 1071);
  });

  it("decodes Envoy's ignore_empty option from the generated descriptors", () => {
    const field = core.UpstreamHttpProtocolOptionsSchema.field.overrideAutoSniHeader;
    const rules = getOption(field, validate.rules);
    assert.equal(rules.type.case, "string");
    assert.equal(rules.type.case === "string" && rules.type.value.ignoreEmpty, true);
  });

  it("treats an unset StringRules.strict as true (RFC-strict header checks), as PGV does", () => {
    assert.equal(create(validate.StringRulesSchema).strict, true);
  });
});

describe("Istio protos", () => {
  it("encodes IstioCertificateRequest with Istio's field numbers (csr=1, validity_duration=3, metadata=4)", () => {
    const request = create(istioCa.IstioCertificateRequestSchema, {
      csr: "c",
      validityDuration: 5n,
      metadata: { k: "v" },
    });
    const hex = Buffer.from(toBinary(istioCa.IstioCertificateRequestSchema, request)).toString("hex");
    // csr (1) "c" | validity_duration (3) 5 | metadata (4) Struct{fields (1): {key "k", value (2) {string_value (3) "v"}}}
    assert.equal(hex, "0a0163" + "1805" + "220a" + "0a08" + "0a016b" + "1203" + "1a0176");
  });

  it("encodes NameTable with Istio's field numbers", () => {
    const table = create(nds.NameTableSchema, {
      table: { h: { ips: ["1"], registry: "K", shortname: "s", namespace: "n" } },
    });
    const hex = Buffer.from(toBinary(nds.NameTableSchema, table)).toString("hex");
    // table=1: map entry {key=1 "h", value=2 NameInfo{ips=1 "1", registry=2 "K", shortname=3 "s", namespace=4 "n"}}
    assert.equal(hex, "0a11" + "0a0168" + "120c" + "0a0131" + "12014b" + "1a0173" + "22016e");
    const fields = nds.NameTable_NameInfoSchema.fields.map((f) => [f.name, f.number]);
    assert.deepEqual(fields, [
      ["ips", 1],
      ["registry", 2],
      ["shortname", 3],
      ["namespace", 4],
      ["alt_hosts", 5],
    ]);
  });

  it("keeps well-known types usable inside generated messages", () => {
    assert.equal(registry.getMessage("google.protobuf.Duration"), DurationSchema);
  });
});
