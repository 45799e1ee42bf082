import assert from "node:assert/strict";
import { test } from "node:test";
import { messages, runSemantic } from "../../../test/support/validation.ts";
import { validateSidecar } from "./sidecar.ts";

const check = (spec: unknown) => runSemantic(validateSidecar, spec, { kind: "Sidecar" });
const EGRESS = { egress: [{ hosts: ["./*"] }] };
const ingress = (extra: Record<string, unknown> = {}) => ({
  ingress: [{ port: { number: 9080, name: "http", protocol: "HTTP" }, defaultEndpoint: "127.0.0.1:8080", ...extra }],
});

test("Sidecar: selector label errors are returned alone", () => {
  assert.deepEqual(messages(check({ workloadSelector: { labels: { "a*": "b" } } }).errors), [
    'wildcard is not supported in selector: "a*=b"',
  ]);
});

test("Sidecar: an empty configuration is an error and drops the selector warning", () => {
  const r = check({ workloadSelector: {} });
  assert.deepEqual(messages(r.errors), ["sidecar: empty configuration provided"]);
  assert.deepEqual(r.warnings, []);
  assert.deepEqual(messages(check({ ...EGRESS, workloadSelector: {} }).warnings), [
    "sidecar: workload selector specified without labels, will be applied to all services in namespace",
  ]);
});

test("Sidecar ingress: null entries, missing ports and targetPort", () => {
  assert.deepEqual(messages(check({ ingress: [null, { defaultEndpoint: "x" }] }).errors), [
    "sidecar: ingress may not be null",
    "sidecar: port is required for ingress listeners",
  ]);
  assert.deepEqual(
    messages(check({ ingress: [{ port: { number: 80, protocol: "HTTP", name: "a_b", targetPort: 8080 } }] }).errors),
    ["targetPort has no impact on Sidecars", "invalid port name: a_b"],
  );
});

test("Sidecar ingress: bind is an IP and port numbers are unique", () => {
  const port = { number: 80, protocol: "HTTP" };
  assert.deepEqual(messages(check({ ingress: [{ port, bind: "host" }, { port }] }).errors), [
    "host is not a valid IP",
    "sidecar: ports on IP bound listeners must be unique",
  ]);
});

test("Sidecar ingress: defaultEndpoint is a loopback/any address with a port, or a unix socket", () => {
  for (const ok of ["127.0.0.1:8080", "0.0.0.0:80", "[::1]:80", "[::]:80", ":80", "unix:///var/app.sock"]) {
    assert.deepEqual(check(ingress({ defaultEndpoint: ok })).errors, [], ok);
  }
  assert.deepEqual(messages(check(ingress({ defaultEndpoint: "10.0.0.1:80" })).errors), [
    "sidecar: defaultEndpoint must be of form 127.0.0.1:<port>,0.0.0.0:<port>,[::1]:port,[::]:port,unix://filepath or unset",
  ]);
  assert.deepEqual(messages(check(ingress({ defaultEndpoint: "127.0.0.1" })).errors), [
    "address 127.0.0.1: missing port in address",
    'sidecar: defaultEndpoint port () is not a number: strconv.Atoi: parsing "": invalid syntax',
  ]);
  assert.deepEqual(messages(check(ingress({ defaultEndpoint: "127.0.0.1:http" })).errors), [
    'sidecar: defaultEndpoint port (http) is not a number: strconv.Atoi: parsing "http": invalid syntax',
  ]);
  assert.deepEqual(messages(check(ingress({ defaultEndpoint: "127.0.0.1:0" })).errors), [
    "port number 0 must be in the range 1..65535",
  ]);
  assert.deepEqual(messages(check(ingress({ defaultEndpoint: "unix://rel" })).errors), [
    "rel is not an absolute path to a file",
  ]);
});

test("Sidecar ingress TLS: unsupported fields and modes", () => {
  const https = { port: { number: 443, name: "https", protocol: "HTTPS" } };
  const tls = {
    mode: "ISTIO_MUTUAL",
    subjectAltNames: ["a"],
    httpsRedirect: true,
    credentialName: "c",
    credentialNames: ["d"],
    tlsCertificates: [{}],
  };
  assert.deepEqual(messages(check({ ingress: [{ ...https, tls }] }).errors), [
    "sidecar: subjectAltNames is not supported in ingress tls",
    "sidecar: httpsRedirect is not supported",
    "sidecar: credentialName is not currently supported",
    "sidecar: credentialNames is not currently supported",
    "sidecar: tls_certificates is not currently supported",
    "ISTIO_MUTUAL TLS cannot have associated tlsCertificates",
    "ISTIO_MUTUAL TLS cannot have associated credentialName",
    "ISTIO_MUTUAL TLS cannot have associated credentialNames",
    "configuration is invalid: cannot set mode to ISTIO_MUTUAL in sidecar ingress tls",
  ]);
  assert.deepEqual(
    messages(check(ingress({ tls: { mode: "SIMPLE", serverCertificate: "c", privateKey: "k" } })).errors),
    ["server cannot have TLS settings for non HTTPS/TLS ports"],
  );
});

test("Sidecar ingress: connection pool is validated; HTTP settings on a non-HTTP port warn", () => {
  const tcpPort = { port: { number: 9000, name: "tcp", protocol: "TCP" } };
  const r = check({ ingress: [{ ...tcpPort, connectionPool: { http: { maxRetries: -1 } } }] });
  assert.deepEqual(messages(r.errors), ["max retries must be non-negative"]);
  assert.deepEqual(messages(r.warnings), [
    'sidecar: HTTP connection pool settings are configured for port 9000 ("tcp") but its protocol is not HTTP (TCP); only TCP settings will apply',
  ]);
});

test("Sidecar: the inbound connection pool alone is a configuration", () => {
  assert.deepEqual(check({ inboundConnectionPool: { tcp: { maxConnections: 10 } } }).errors, []);
  assert.deepEqual(messages(check({ inboundConnectionPool: {} }).errors), [
    "connection pool must have at least one field",
  ]);
});

test("Sidecar egress: the listener without a port must be last", () => {
  const r = check({ egress: [{ hosts: ["*/*"] }, { port: { number: 80, protocol: "HTTP" }, hosts: ["ns/a.com"] }] });
  assert.deepEqual(r.errors, [
    {
      path: "spec.egress[0]",
      message: "sidecar: the egress listener with empty port should be the last listener in the list",
    },
  ]);
  assert.deepEqual(messages(check({ egress: [null] }).errors), ["egress listener may not be null"]);
});

test("Sidecar egress: port 0 is a unix socket listener with DEFAULT/NONE capture", () => {
  const uds = { number: 0, protocol: "HTTP" };
  assert.deepEqual(check({ egress: [{ port: uds, bind: "unix:///sock", hosts: ["*/*"] }] }).errors, []);
  assert.deepEqual(
    messages(
      check({
        egress: [
          { port: uds, bind: "1.2.3.4", captureMode: "IPTABLES", hosts: ["*/*"] },
          { port: uds, bind: "1.2.3.4", hosts: ["*/*"] },
        ],
      }).errors,
    ),
    [
      "sidecar: ports with 0 value must have a unix domain socket bind address",
      "sidecar: captureMode must be DEFAULT/NONE for unix domain socket listeners",
      "sidecar: ports with 0 value must have a unix domain socket bind address",
      "sidecar: unix domain socket values for listeners must be unique",
    ],
  );
});

test("Sidecar egress: IP listeners need valid, unique ports and IP binds", () => {
  const port = { number: 80, protocol: "HTTP" };
  assert.deepEqual(
    messages(
      check({
        egress: [
          { port, bind: "x", hosts: ["*/*"] },
          { port, hosts: ["*/*"] },
        ],
      }).errors,
    ),
    ["x is not a valid IP", "sidecar: ports on IP bound listeners must be unique"],
  );
});

test("Sidecar egress: hosts are required and namespace/host formed", () => {
  assert.deepEqual(check({ egress: [{}] }).errors, [
    { path: "spec.egress[0].hosts", message: "sidecar: egress listener must contain at least one host" },
  ]);
  assert.deepEqual(check({ egress: [{ hosts: ["a.com"] }] }).errors, [
    { path: "spec.egress[0].hosts[0]", message: "host must be of form namespace/dnsName" },
  ]);
});

test("Sidecar egress: duplicated hosts and */* with other namespaces warn", () => {
  const r = check({ egress: [{ hosts: ["ns/a.com", "ns/a.com", "ns/*", "./b.com", "*/*", "~ns/c.com"] }] });
  assert.deepEqual(r.errors, []);
  assert.deepEqual(messages(r.warnings), [
    "duplicated egress host: ns/a.com",
    "duplicated egress host: ns/*",
    "duplicated egress host: ./b.com",
    "`*/*` host select all resources, no other hosts can be added",
  ]);
});

test("Sidecar outbound policy: egressProxy only with ALLOW_ANY, an FQDN host and a port", () => {
  const policy = (p: unknown) => messages(check({ outboundTrafficPolicy: p }).errors);
  assert.deepEqual(policy({ mode: "REGISTRY_ONLY" }), []);
  assert.deepEqual(policy({ egressProxy: { host: "proxy.com", port: { number: 80 } } }), [
    "sidecar: egress_proxy must be set only with ALLOW_ANY outbound_traffic_policy mode",
  ]);
  assert.deepEqual(policy({ mode: "ALLOW_ANY", egressProxy: { host: "proxy.com" } }), [
    "sidecar: egress_proxy port must be non-nil",
  ]);
  assert.deepEqual(
    policy({ mode: "ALLOW_ANY", egressProxy: { host: "proxy.com", subset: "a_b", port: { number: 80 } } }),
    ["subset name is invalid: a_b"],
  );
  assert.deepEqual(policy({ mode: 3 }), [
    "sidecar: ALLOW_ANY_DYNAMIC_DNS mode is only supported in MeshConfig, not in Sidecar resource",
  ]);
});

test("Sidecar egress: an unknown capture mode is a decode error, on any listener", () => {
  assert.deepEqual(check({ egress: [{ captureMode: "TPROXY", hosts: ["*/*"] }] }).errors, [
    {
      path: "spec.egress[0].captureMode",
      message: 'unknown value "\\"TPROXY\\"" for enum istio.networking.v1alpha3.CaptureMode',
    },
  ]);
});
