import assert from "node:assert/strict";
import { test } from "node:test";
import { collect, messages } from "../../../../test/support/validation.ts";
import {
  validateClientTls,
  validateConnectionPool,
  validateLoadBalancer,
  validateLocalityLbSetting,
  validateOutlierDetection,
  validateTrafficPolicy,
  validateZoneAwareLbSetting,
} from "./trafficpolicy.ts";

test("connection pool: needs http or tcp", () => {
  assert.deepEqual(collect((out) => validateConnectionPool({}, out)).errors, [
    { path: "spec", message: "connection pool must have at least one field" },
  ]);
});

test("connection pool: negative HTTP limits", () => {
  const http = {
    http1MaxPendingRequests: -1,
    http2MaxRequests: -1,
    maxRequestsPerConnection: -1,
    maxRetries: -1,
    maxConcurrentStreams: -1,
  };
  assert.deepEqual(messages(collect((out) => validateConnectionPool({ http }, out)).errors), [
    "http1 max pending requests must be non-negative",
    "http2 max requests must be non-negative",
    "max requests per connection must be non-negative",
    "max retries must be non-negative",
    "max concurrent streams must be non-negative",
  ]);
});

test("connection pool: UPGRADE with useClientProtocol; http2 keepalive needs interval and timeout", () => {
  const r = collect((out) =>
    validateConnectionPool({ http: { h2UpgradePolicy: "UPGRADE", useClientProtocol: true, http2KeepAlive: {} } }, out),
  );
  assert.deepEqual(r.errors, [
    { path: "spec.http", message: "use client protocol must not be true when H2UpgradePolicy is UPGRADE" },
    { path: "spec.http.http2KeepAlive.interval", message: "http2 keepalive interval is required" },
    { path: "spec.http.http2KeepAlive.timeout", message: "http2 keepalive timeout is required" },
  ]);
});

test("connection pool: TCP limits and durations; an idle timeout of 0s disables it", () => {
  const r = collect((out) =>
    validateConnectionPool(
      { tcp: { maxConnections: -1, connectTimeout: "0.5ms", idleTimeout: "0s", tcpKeepalive: { time: "1us" } } },
      out,
    ),
  );
  assert.deepEqual(r.errors, [
    { path: "spec.tcp.maxConnections", message: "max connections must be non-negative" },
    { path: "spec.tcp.connectTimeout", message: "duration must be greater than 1ms" },
    { path: "spec.tcp.tcpKeepalive.time", message: "duration must be greater than 1ms" },
  ]);
  assert.deepEqual(messages(collect((out) => validateConnectionPool({ tcp: { idleTimeout: "1500us" } }, out)).errors), [
    "only durations to ms precision are supported",
  ]);
});

test("outlier detection: deprecated consecutiveErrors warns; local-origin failures need the split", () => {
  const r = collect((out) =>
    validateOutlierDetection({ consecutiveErrors: 5, consecutiveLocalOriginFailures: 3, maxEjectionPercent: 101 }, out),
  );
  assert.deepEqual(messages(r.warnings), [
    "outlier detection consecutive errors is deprecated, use consecutiveGatewayErrors or consecutive5xxErrors instead",
  ]);
  assert.deepEqual(messages(r.errors), [
    "outlier detection consecutive local origin failures is specified, but split external local origin errors is set to false",
    "percentage 101 is not in range 0..100",
  ]);
  const split = { consecutiveLocalOriginFailures: 3, splitExternalLocalOriginErrors: true, interval: "10s" };
  assert.deepEqual(collect((out) => validateOutlierDetection(split, out)).errors, []);
});

test("load balancer: cookie name and attributes", () => {
  const lb = { consistentHash: { httpCookie: { name: "", attributes: [{ name: "" }, { name: "a" }, { name: "a" }] } } };
  assert.deepEqual(messages(collect((out) => validateLoadBalancer(lb, false, out)).errors), [
    "name required for HttpCookie",
    "cookie attribute name cannot be empty",
    "duplicate cookie attribute name: a",
  ]);
});

test("load balancer: deprecated minimumRingSize warns and excludes ringHash/maglev", () => {
  const r = collect((out) =>
    validateLoadBalancer({ consistentHash: { useSourceIp: true, minimumRingSize: 10, ringHash: {} } }, false, out),
  );
  assert.deepEqual(messages(r.warnings), [
    "consistent hash MinimumRingSize is deprecated, use ConsistentHashLB's RingHash configuration instead",
  ]);
  assert.deepEqual(messages(r.errors), ["only one of MinimumRingSize or Maglev/Ringhash can be specified"]);
});

test("load balancer: maglev table size set, below 5000011 and prime", () => {
  const maglev = (tableSize: number) =>
    messages(collect((out) => validateLoadBalancer({ consistentHash: { maglev: { tableSize } } }, false, out)).errors);
  assert.deepEqual(maglev(0), ["tableSize must be set for maglev", "tableSize must be a prime number for maglev"]);
  assert.deepEqual(maglev(65537), []);
  assert.deepEqual(maglev(1), []);
  assert.deepEqual(maglev(100), ["tableSize must be a prime number for maglev"]);
  assert.deepEqual(maglev(5000011), ["tableSize must be less than 5000011 for maglev"]);
});

test("load balancer: warmup duration, minimumPercent and aggression", () => {
  assert.deepEqual(
    collect((out) => validateLoadBalancer({ warmup: { minimumPercent: 150, aggression: 0 } }, false, out)).errors,
    [
      { path: "spec.warmup.duration", message: "duration is required" },
      { path: "spec.warmup.minimumPercent", message: "minimumPercent value should be less than or equal to 100" },
      { path: "spec.warmup.aggression", message: "aggression should be greater than 0" },
    ],
  );
});

test("load balancer: locality and zone-aware settings exclude each other", () => {
  const lb = { localityLbSetting: { enabled: true }, zoneAwareLbSetting: { enabled: true } };
  assert.deepEqual(messages(collect((out) => validateLoadBalancer(lb, false, out)).errors), [
    "only one of localityLbSetting and zoneAwareLbSetting can be set",
  ]);
});

test("load balancer: unknown simple policy is a decode error", () => {
  assert.deepEqual(messages(collect((out) => validateLoadBalancer({ simple: "FASTEST" }, false, out)).errors), [
    'unknown value "\\"FASTEST\\"" for enum istio.networking.v1alpha3.LoadBalancerSettings.SimpleLB',
  ]);
});

function localityErrors(setting: unknown, outlier = true): string[] {
  return messages(collect((out) => validateLocalityLbSetting(setting, outlier, out)).errors);
}

test("locality LB: distribute and failover are exclusive; failover excludes topology priorities", () => {
  assert.deepEqual(
    localityErrors({ distribute: [{ from: "a", to: { b: 100 } }], failover: [{ from: "a", to: "b" }] }),
    ["can not simultaneously specify 'distribute' and 'failover'"],
  );
  assert.deepEqual(
    localityErrors({ failover: [{ from: "a", to: "b" }], failoverPriority: ["topology.kubernetes.io/zone"] }),
    ["can not simultaneously set 'failover' and topology label 'topology.kubernetes.io/zone' in 'failover_priority'"],
  );
});

test("locality LB: distribute weights in [1, 100] summing to 100", () => {
  assert.deepEqual(localityErrors({ distribute: [{ from: "a/*", to: { "b/*": 0 } }] }), [
    "locality weight must be in range [1, 100]",
  ]);
  assert.deepEqual(localityErrors({ distribute: [{ from: "a/*", to: { "b/*": 60, "c/*": 30 } }] }), [
    "total locality weight 90 != 100",
  ]);
});

test("locality LB: wildcards only at the end, no empty segments, no overlaps", () => {
  const one = (to: Record<string, number>) => localityErrors({ distribute: [{ from: "x", to }] });
  assert.deepEqual(one({ "a/*/c": 100 }), [
    "locality a/*/c wildcard '*' number can not exceed 1 and must be in the end",
  ]);
  assert.deepEqual(one({ "a//c": 100 }), ["locality a//c must not contain empty region/zone/subzone info"]);
  assert.deepEqual(one({ a: 50, "a/b": 50 }), ["locality a/b overlap with previous specified ones"]);
  assert.deepEqual(one({ "*": 50, b: 50 }), ["locality b overlap with previous specified ones"]);
  assert.deepEqual(one({ "a/b/c": 50, "a/b/d": 50 }), []);
  assert.deepEqual(
    localityErrors({
      distribute: [
        { from: "a", to: { b: 100 } },
        { from: "a", to: { b: 100 } },
      ],
    }),
    ["locality a overlap with previous specified ones"],
  );
});

test("locality LB: failover needs outlier detection and distinct regions without / or *", () => {
  const r = collect((out) =>
    validateLocalityLbSetting(
      {
        failover: [
          { from: "a", to: "a" },
          { from: "a/b", to: "c" },
          { from: "a*", to: "c" },
        ],
      },
      false,
      out,
    ),
  );
  assert.deepEqual(messages(r.warnings), ["outlier detection policy must be provided for failover"]);
  assert.deepEqual(messages(r.errors), [
    "locality lb failover settings must specify different regions",
    "locality lb failover only specify region",
    "locality lb failover region should not contain '*' wildcard",
  ]);
});

test("zone-aware LB: no topology priorities; failover rules", () => {
  const r = collect((out) =>
    validateZoneAwareLbSetting(
      {
        failoverPriority: ["topology.istio.io/subzone"],
        failover: [
          { from: "a", to: "a" },
          { from: "a/b", to: "*" },
        ],
      },
      true,
      out,
    ),
  );
  assert.deepEqual(r.warnings, []);
  assert.deepEqual(messages(r.errors), [
    "'failover_priority' for zone aware lb must not use topology label 'topology.istio.io/subzone'; region- and zone-level routing are handled automatically",
    "zone aware lb failover settings must specify different regions",
    "zone aware lb failover only specifies region; zone and subzone failover are handled automatically",
    "zone aware lb failover region should not contain '*' wildcard",
  ]);
});

function tlsErrors(tls: unknown, namespace = "ns"): string[] {
  return messages(collect((out) => validateClientTls(namespace, tls, out)).errors);
}

test("client TLS: configmap:// credentials name a namespace and name in the config namespace", () => {
  assert.deepEqual(tlsErrors({ mode: "SIMPLE", credentialName: "configmap://ns/ca" }), []);
  assert.deepEqual(tlsErrors({ mode: "SIMPLE", credentialName: "configmap://ca" }), [
    'invalid configmap:// credentialName: invalid resource name "configmap://ca". Expected namespace and name',
  ]);
  assert.deepEqual(tlsErrors({ mode: "SIMPLE", credentialName: "configmap:///ca" }), [
    'invalid configmap:// credentialName: invalid resource name "configmap:///ca". Expected namespace',
  ]);
  assert.deepEqual(tlsErrors({ mode: "SIMPLE", credentialName: "configmap://other/ca" }), [
    'invalid configmap:// credentialName: namespace must match the configuration namespace "ns"',
  ]);
  assert.deepEqual(tlsErrors({ mode: "SIMPLE", credentialName: "configmap://ns/ca" }, ""), [
    'invalid configmap:// credentialName: namespace must match the configuration namespace ""',
  ]);
});

test("client TLS: insecureSkipVerify excludes CA settings", () => {
  assert.deepEqual(tlsErrors({ mode: "SIMPLE", insecureSkipVerify: true, subjectAltNames: ["a"] }), [
    "cannot specify CaCertificates or CredentialName or SubjectAltNames when InsecureSkipVerify is set true",
  ]);
  assert.deepEqual(
    tlsErrors({
      mode: "MUTUAL",
      insecureSkipVerify: true,
      caCertificates: "ca",
      clientCertificate: "c",
      privateKey: "k",
    }),
    ["cannot specify CaCertificates or SubjectAltNames when InsecureSkipVerify is set true"],
  );
});

test("client TLS: credentialName excludes file certificates; MUTUAL needs a client certificate and key", () => {
  assert.deepEqual(tlsErrors({ mode: "MUTUAL", credentialName: "c", privateKey: "k" }), [
    "cannot specify client certificates or CA certificate or CA CRL If credentialName is set",
  ]);
  assert.deepEqual(tlsErrors({ mode: "MUTUAL" }), [
    "client certificate required for mutual tls",
    "private key required for mutual tls",
  ]);
});

function policyErrors(policy: unknown): string[] {
  return messages(collect((out) => validateTrafficPolicy("ns", policy, out)).errors);
}

test("traffic policy: must set a field; tunnel and proxyProtocol exclude each other", () => {
  assert.deepEqual(policyErrors({}), ["traffic policy must have at least one field"]);
  assert.deepEqual(policyErrors({ portLevelSettings: [] }), ["traffic policy must have at least one field"]);
  assert.deepEqual(policyErrors({ retryBudget: {} }), []);
  assert.deepEqual(policyErrors({ tunnel: { targetHost: "a.com", targetPort: 80 }, proxyProtocol: {} }), [
    "tunnel and proxyProtocol must not be set together",
  ]);
});

test("traffic policy: proxy protocol version V1/V2 only", () => {
  assert.deepEqual(policyErrors({ proxyProtocol: { version: "V2" } }), []);
  assert.deepEqual(policyErrors({ proxyProtocol: { version: 7 } }), ["proxy protocol version is invalid: 7"]);
});

test("traffic policy: tunnel protocol, target host and port", () => {
  assert.deepEqual(policyErrors({ tunnel: { protocol: "GET", targetHost: "*.foo", targetPort: 0 } }), [
    'tunnel protocol must be "CONNECT" or "POST"',
    'tunnel target host must be valid FQDN or IP address: domain name "*.foo" invalid (label "*" invalid); *.foo is not a valid IP',
    "tunnel target port is invalid: port number 0 must be in the range 1..65535",
  ]);
  assert.deepEqual(policyErrors({ tunnel: { protocol: "POST", targetHost: "10.0.0.1", targetPort: 8080 } }), []);
});

test("traffic policy: port-level settings need a port and a field", () => {
  const r = collect((out) =>
    validateTrafficPolicy(
      "ns",
      { portLevelSettings: [null, { tls: { mode: "SIMPLE" } }, { port: { number: 0 } }] },
      out,
    ),
  );
  assert.deepEqual(r.errors, [
    { path: "spec.portLevelSettings[0]", message: "traffic policy may not be null" },
    { path: "spec.portLevelSettings[1]", message: "portTrafficPolicy must have valid port" },
    { path: "spec.portLevelSettings[2]", message: "port traffic policy must have at least one field" },
  ]);
});

test("traffic policy: failover without outlier detection warns, with it does not", () => {
  const lb = { localityLbSetting: { failover: [{ from: "a", to: "b" }] } };
  assert.equal(collect((out) => validateTrafficPolicy("ns", { loadBalancer: lb }, out)).warnings.length, 1);
  assert.equal(
    collect((out) => validateTrafficPolicy("ns", { loadBalancer: lb, outlierDetection: {} }, out)).warnings.length,
    0,
  );
});
