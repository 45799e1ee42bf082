import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_MESH_CONFIG, loadMeshConfig } from "./mesh.ts";
import { goDurationString, proxyAddressError } from "./mesh-validate.ts";

/** The problems loadMeshConfig throws for `yaml`, one per line. */
function problems(yaml: string): string[] {
  try {
    loadMeshConfig(yaml);
  } catch (err) {
    return (err as Error).message
      .split("\n")
      .slice(1)
      .map((line) => line.trim());
  }
  assert.fail("expected the mesh config to be rejected");
}

test("no mesh config gives Istio's DefaultMeshConfig, which is valid and warning-free", () => {
  const { mesh, warnings } = loadMeshConfig();
  assert.deepEqual(warnings, []);
  assert.deepEqual(mesh, DEFAULT_MESH_CONFIG);
  assert.equal(mesh.rootNamespace, "istio-system");
  assert.equal(mesh.trustDomain, "cluster.local");
  assert.equal(mesh.connectTimeout, "10s");
  assert.equal(mesh.dnsRefreshRate, "60s");
  assert.equal(mesh.ingressControllerMode, "STRICT");
  assert.deepEqual(mesh.outboundTrafficPolicy, { mode: "ALLOW_ANY" });
  assert.deepEqual(mesh.defaultServiceExportTo, ["*"]);
  assert.equal(mesh.defaultConfig?.discoveryAddress, "istiod.istio-system.svc:15012");
  assert.equal(mesh.defaultConfig?.proxyAdminPort, 15000);
  assert.equal(mesh.defaultConfig?.statusPort, 15020);
  assert.equal(mesh.defaultConfig?.drainDuration, "45s");
  assert.deepEqual(
    mesh.extensionProviders?.map((p) => p.name),
    ["prometheus", "stackdriver", "envoy"],
  );
  assert.deepEqual(loadMeshConfig("").mesh, DEFAULT_MESH_CONFIG);
});

test("top-level fields replace the defaults; defaultConfig merges field by field", () => {
  const { mesh } = loadMeshConfig(
    [
      "ingressClass: foo",
      "enableTracing: false",
      "outboundTrafficPolicy: {mode: REGISTRY_ONLY}",
      "defaultServiceExportTo: [foo]",
      "defaultConfig:",
      "  concurrency: 4",
      "  configPath: /test/config/patch",
    ].join("\n"),
  );
  assert.equal(mesh.ingressClass, "foo");
  assert.equal(mesh.enableTracing, false);
  assert.deepEqual(mesh.outboundTrafficPolicy, { mode: "REGISTRY_ONLY" });
  assert.deepEqual(mesh.defaultServiceExportTo, ["foo"]);
  assert.equal(mesh.defaultConfig?.concurrency, 4);
  assert.equal(mesh.defaultConfig?.configPath, "/test/config/patch");
  assert.equal(mesh.defaultConfig?.discoveryAddress, "istiod.istio-system.svc:15012");
});

test("extension providers merge by name; trust domain aliases are sorted and unique; proto names accepted", () => {
  const { mesh } = loadMeshConfig(
    [
      "extensionProviders:",
      "- name: envoy",
      "  envoyFileAccessLog: {path: /tmp/log}",
      "- name: sd",
      "  stackdriver: {}",
      "trust_domain_aliases: [b, a, b]",
      "default_providers: {tracing: [foo]}",
    ].join("\n"),
  );
  assert.deepEqual(
    mesh.extensionProviders?.map((p) => p.name),
    ["prometheus", "stackdriver", "envoy", "sd"],
  );
  assert.deepEqual(mesh.extensionProviders?.[2].envoyFileAccessLog, { path: "/tmp/log" });
  assert.deepEqual(mesh.trustDomainAliases, ["a", "b"]);
  assert.deepEqual(mesh.defaultProviders, { tracing: ["foo"] });
});

test("proxyMetadata entries merge over the defaults; tracingServiceName replaces serviceCluster", () => {
  const { mesh } = loadMeshConfig("defaultConfig:\n  tracingServiceName: CANONICAL_NAME_ONLY\n  proxyMetadata: {A: b}");
  assert.deepEqual(mesh.defaultConfig?.proxyMetadata, { A: "b" });
  assert.equal(mesh.defaultConfig?.serviceCluster, undefined);
  assert.equal(mesh.defaultConfig?.tracingServiceName, "CANONICAL_NAME_ONLY");
});

test("decoding: unknown fields, bad durations, enum names and types are errors naming the field", () => {
  assert.deepEqual(problems("foo: 1\ndefaultConfig: {bar: 2}"), [
    `foo: unknown field "foo" in istio.mesh.v1alpha1.MeshConfig`,
    `defaultConfig.bar: unknown field "bar" in istio.mesh.v1alpha1.ProxyConfig`,
  ]);
  assert.deepEqual(problems("connectTimeout: 1x"), [
    `connectTimeout: bad Duration: time: unknown unit "x" in duration "1x"`,
  ]);
  assert.deepEqual(problems("accessLogEncoding: XML"), [
    `accessLogEncoding: unknown value "\\"XML\\"" for enum istio.mesh.v1alpha1.MeshConfig.AccessLogEncoding`,
  ]);
  assert.deepEqual(problems("proxyListenPort: abc"), [`proxyListenPort: invalid value for int32 field: "abc"`]);
  assert.deepEqual(problems("- a"), [`expected an object for MeshConfig, found ["a"]`]);
});

test("ports, connect timeout range and protocol detection precision", () => {
  assert.deepEqual(problems("proxyListenPort: 70000"), [
    "proxyListenPort: invalid proxy listen port: port number 70000 must be in the range 1..65535",
  ]);
  assert.deepEqual(problems("connectTimeout: 2h"), [
    "connectTimeout: invalid connect timeout: time 2h0m0s must be >1ms and <1h0m0s",
  ]);
  assert.deepEqual(problems("connectTimeout: 0s"), [
    "connectTimeout: invalid connect timeout: duration must be greater than 1ms",
  ]);
  assert.deepEqual(problems("protocolDetectionTimeout: 1.5ms"), [
    "protocolDetectionTimeout: invalid protocol detection timeout: only durations to ms precision are supported",
  ]);
});

test("trust domain and aliases; service settings hosts", () => {
  assert.deepEqual(problems("trustDomain: a..b\ntrustDomainAliases: [ok.com, 'bad_domain']"), [
    `trustDomain: trustDomain: trust domain name "a..b" invalid`,
    'trustDomainAliases[0]: trustDomainAliases[0], domain `bad_domain` : trust domain name "bad_domain" invalid',
  ]);
  assert.deepEqual(problems("serviceSettings:\n- hosts: ['foo.*.com']"), [
    'serviceSettings[0].hosts: serviceSettings[0], host `foo.*.com`: domain name "*.com" invalid (label "*" invalid)',
  ]);
});

test("defaultConfig: paths, drain duration, discovery address, ports, auth policy", () => {
  assert.deepEqual(
    problems(
      [
        "defaultConfig:",
        "  configPath: ''",
        "  drainDuration: 1.5s",
        "  discoveryAddress: istiod:99999",
        "  proxyAdminPort: 0",
        "  controlPlaneAuthPolicy: INHERIT",
        "  serviceCluster: ''",
      ].join("\n"),
    ),
    [
      "defaultConfig.configPath: config path must be set",
      "defaultConfig.serviceCluster: service cluster must be specified",
      "defaultConfig.drainDuration: drain time only supports durations to seconds precision",
      "defaultConfig.discoveryAddress: invalid discovery address: port number 99999 must be in the range 1..65535",
      "defaultConfig.proxyAdminPort: invalid proxy admin port: port number 0 must be in the range 1..65535",
      'defaultConfig.controlPlaneAuthPolicy: invalid authentication policy: unrecognized control plane auth policy "INHERIT"',
    ],
  );
});

test("defaultConfig: tracing collectors, connection settings, private key provider", () => {
  assert.deepEqual(
    problems(
      [
        "defaultConfig:",
        "  tracing:",
        "    lightstep: {address: 'ls:8080'}",
        "  connectionSettings: {httpMaxConcurrentStreams: 0, http2InitialStreamWindowSize: 100}",
        "  privateKeyProvider: {cryptomb: {pollDelay: 0s}}",
      ].join("\n"),
    ),
    [
      "defaultConfig.tracing.lightstep: invalid lightstep config: access token is required",
      "defaultConfig.privateKeyProvider: invalid private key provider configuration: pollDelay must be non zero",
      "defaultConfig.connectionSettings: invalid connection settings: http_max_concurrent_streams must be positive",
      "defaultConfig.connectionSettings: invalid connection settings: http2_initial_stream_window_size must be at least 65535",
    ],
  );
  assert.deepEqual(problems("defaultConfig: {tracing: {zipkin: {address: 'bad host:9411'}}}"), [
    'defaultConfig.tracing.zipkin.address: invalid zipkin config: "bad host" is not a valid hostname or an IP address',
  ]);
  assert.deepEqual(loadMeshConfig("defaultConfig: {tracing: {datadog: {address: '$(HOST_IP):8126'}}}").warnings, []);
});

test("warnings: unknown and duplicate ECDH curves, deprecated DNS auto allocation, ignored inbound retry fields", () => {
  const { warnings } = loadMeshConfig(
    [
      "tlsDefaults: {ecdhCurves: [P-256, P-256, X1]}",
      "defaultConfig: {proxyMetadata: {ISTIO_META_DNS_AUTO_ALLOCATE: 'true'}}",
      "defaultInboundHttpRetryPolicy: {attempts: 2, perTryTimeout: 1s}",
    ].join("\n"),
  );
  assert.deepEqual(warnings, [
    "defaultConfig.proxyMetadata: 'ISTIO_META_DNS_AUTO_ALLOCATE' is deprecated; review https://istio.io/latest/docs/ops/configuration/traffic-management/dns-proxy/#dns-auto-allocation-v2 for information about replacement functionality",
    "tlsDefaults.ecdhCurves: detected unrecognized ECDH curves: [X1]",
    "tlsDefaults.ecdhCurves: detected duplicate ECDH curves: [P-256]",
    "defaultInboundHttpRetryPolicy.perTryTimeout: perTryTimeout is ignored by the default inbound http retry policy",
  ]);
});

test("meshMTLS ECDH curves, default traffic policy and inbound retry policy errors", () => {
  assert.deepEqual(
    problems(
      [
        "meshMTLS: {ecdhCurves: [P-256]}",
        "defaultTrafficPolicy: {connectionPool: {}}",
        "defaultInboundHttpRetryPolicy: {attempts: 0, backoff: 1s, retryOn: 'bogus'}",
      ].join("\n"),
    ),
    [
      "meshMTLS.ecdhCurves: mesh TLS does not support ECDH curves configuration",
      "defaultTrafficPolicy.connectionPool: connection pool must have at least one field",
      "defaultInboundHttpRetryPolicy: invalid default inbound http retry policy: http retry policy configured when attempts are set to 0 (disabled)",
      'defaultInboundHttpRetryPolicy.retryOn: invalid default inbound http retry policy: "bogus" is not a valid retryOn policy',
      "defaultInboundHttpRetryPolicy: invalid default inbound http retry policy: backoff configured when attempts are set to 0 (disabled)",
    ],
  );
});

test("locality LB settings are validated with outlier detection assumed present", () => {
  assert.deepEqual(problems("localityLbSetting: {distribute: [{from: a/b/*, to: {'a/b/*': 50}}]}"), [
    "localityLbSetting.distribute[0]: total locality weight 50 != 100",
  ]);
});

test("Go formatting helpers: duration strings and proxy address errors", () => {
  assert.equal(goDurationString(3_600_000_000_000n), "1h0m0s");
  assert.equal(goDurationString(1_500_000_000n), "1.5s");
  assert.equal(goDurationString(100_000_000n), "100ms");
  assert.equal(goDurationString(90_000_000_000n), "1m30s");
  assert.equal(proxyAddressError("istiod.istio-system.svc:15012"), undefined);
  assert.equal(proxyAddressError("10.0.0.1:80"), undefined);
  assert.equal(proxyAddressError("[::1]:80"), undefined);
  assert.equal(proxyAddressError("istiod"), `unable to split "istiod": address istiod: missing port in address`);
  assert.equal(proxyAddressError("a:b:1"), `unable to split "a:b:1": address a:b:1: too many colons in address`);
  assert.equal(
    proxyAddressError("istiod:http"),
    `port (http) is not a number: strconv.Atoi: parsing "http": invalid syntax`,
  );
});

test("extension provider problems are warnings (Istio only logs them), prefixed with the provider name", () => {
  // Same-named providers merge, so the list the checks see has unique names.
  const { warnings } = loadMeshConfig(
    [
      "extensionProviders:",
      "- name: authz",
      "  envoyExtAuthzHttp: {service: authz.foo.svc.cluster.local, port: 0, statusOnError: '999', pathPrefix: check}",
      "- name: ''",
      "  zipkin: {service: zipkin.svc, port: 9411}",
      "- name: otel",
      "  opentelemetry: {service: otel/collector.svc, port: 4317, grpc: {}, http: {path: /v1}}",
      "- name: ls",
      "  lightstep: {service: ls.com, port: 80}",
    ].join("\n"),
  );
  assert.deepEqual(
    warnings.map((w) => w.replace(/supported values: map\[.*\]$/, "supported values: map[...]")),
    [
      "extensionProviders[3]: invalid extension provider authz: port number 0 must be in the range 1..65535",
      "extensionProviders[3]: invalid extension provider authz: unsupported statusOnError value 999, supported values: map[...]",
      'extensionProviders[3]: invalid extension provider authz: pathPrefix should begin with `/` but found "check"',
      "extensionProviders[4]: invalid extension provider : empty extension provider name",
      "extensionProviders[5]: invalid extension provider otel: OpenTelemetryTracingProvider cannot specify both grpc and http",
      "extensionProviders[6]: invalid extension provider ls: access token is required",
    ],
  );
});

test("decoding: at most one field of a proto oneof", () => {
  assert.deepEqual(problems("defaultConfig: {tracing: {zipkin: {address: 'z:9411'}, datadog: {address: 'd:8126'}}}"), [
    "defaultConfig.tracing.datadog: only one of zipkin, lightstep, datadog, stackdriver, openCensusAgent may be set; zipkin is already set",
  ]);
});
