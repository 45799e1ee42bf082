import assert from "node:assert/strict";
import { test } from "node:test";
import { collect, messages, runSemantic } from "../../../test/support/validation.ts";
import type { ObjectMeta } from "../model.ts";
import { validateGateway, validateServerTls } from "./gateway.ts";

const check = (spec: unknown, metadata?: ObjectMeta) =>
  runSemantic(validateGateway, spec, { kind: "Gateway", metadata });
const HTTP_PORT = { number: 80, name: "http", protocol: "HTTP" };
const server = (extra: Record<string, unknown> = {}) => ({ hosts: ["*/foo.com"], port: HTTP_PORT, ...extra });

test("Gateway: the name must be a DNS label unless it has gateway semantics", () => {
  assert.deepEqual(messages(check({ servers: [server()] }, { name: "my.gw" }).errors), [
    'invalid gateway name: "my.gw"',
  ]);
  const converted = { name: "my.gw", annotations: { "internal.istio.io/gateway-semantics": "gateway" } };
  assert.deepEqual(check({ servers: [server()] }, converted).errors, []);
});

test("Gateway: needs servers, each with hosts", () => {
  assert.deepEqual(check({}).errors, [{ path: "spec.servers", message: "gateway must have at least one server" }]);
  assert.deepEqual(messages(check({ servers: [server({ hosts: [] })] }).errors), [
    "server config must contain at least one host",
  ]);
  assert.deepEqual(messages(check({ servers: [null] }).errors), ["cannot have nil server", "server may not be nil"]);
});

test("Gateway: server hosts follow the namespace/host rules", () => {
  assert.deepEqual(check({ servers: [server({ hosts: ["foo.com", "./*.bar.com", "1.2.3.4"] })] }).errors, []);
  assert.deepEqual(messages(check({ servers: [server({ hosts: ["ns/foo"] })] }).errors), [
    "short names (non FQDN) are not allowed",
  ]);
});

test("Gateway: port is required, with a known protocol, valid number, a name and no targetPort", () => {
  assert.deepEqual(messages(check({ servers: [server({ port: undefined })] }).errors), ["port is required"]);
  const bad = { number: 0, protocol: "FTP", targetPort: 8080 };
  assert.deepEqual(check({ servers: [server({ port: bad })] }).errors, [
    {
      path: "spec.servers[0].port.protocol",
      message: 'invalid protocol "FTP", supported protocols are HTTP, HTTP2, GRPC, GRPC-WEB, MONGO, REDIS, MYSQL, TCP',
    },
    { path: "spec.servers[0].port.number", message: "port number 0 must be in the range 1..65535" },
    { path: "spec.servers[0].port.targetPort", message: "targetPort has no impact on Gateways" },
    { path: "spec.servers[0].port.name", message: 'port name must be set: protocol:"FTP" target_port:8080' },
  ]);
});

test("Gateway: unix binds need port 0; other binds are IPs", () => {
  const uds = { number: 0, name: "uds", protocol: "HTTP" };
  assert.deepEqual(check({ servers: [server({ port: uds, bind: "unix:///var/gw.sock" })] }).errors, []);
  assert.deepEqual(messages(check({ servers: [server({ bind: "unix:///var/gw.sock" })] }).errors), [
    'port number must be 0 for unix domain socket: number:80 protocol:"HTTP" name:"http"',
  ]);
  assert.deepEqual(messages(check({ servers: [server({ bind: "localhost" })] }).errors), [
    "localhost is not a valid IP",
  ]);
});

test("Gateway: HTTPS/TLS servers need TLS; plain servers only an httpsRedirect", () => {
  const https = { number: 443, name: "https", protocol: "HTTPS" };
  assert.deepEqual(messages(check({ servers: [server({ port: https })] }).errors), [
    "server must have TLS settings for HTTPS/TLS protocols",
  ]);
  assert.deepEqual(check({ servers: [server({ tls: { httpsRedirect: true } })] }).errors, []);
  assert.deepEqual(messages(check({ servers: [server({ tls: { mode: "SIMPLE", credentialName: "c" } })] }).errors), [
    "server cannot have TLS settings for plain text HTTP ports",
  ]);
  const tcp = { number: 9000, name: "tcp", protocol: "TCP" };
  const r = check({ servers: [server({ port: tcp, tls: { httpsRedirect: true } })] });
  assert.deepEqual(messages(r.errors), ["server cannot have TLS settings for non HTTPS/TLS ports"]);
  assert.deepEqual(messages(r.warnings), ["tls.httpsRedirect should only be used with http servers"]);
});

test("Gateway: port names must be unique across servers", () => {
  assert.deepEqual(check({ servers: [server(), server()] }).errors, [
    { path: "spec.servers[1].port.name", message: "port names in servers must be unique: duplicate name http" },
  ]);
});

function tls(settings: Record<string, unknown>) {
  return collect((out) => validateServerTls(settings, out));
}

test("server TLS: old minimum versions need ciphers; invalid and duplicate ciphers warn", () => {
  assert.deepEqual(messages(tls({ mode: "PASSTHROUGH", minProtocolVersion: "TLSV1_1" }).warnings), [
    "TLS version below TLSV1_2 require setting compatible ciphers as by default they no longer include compatible ciphers.",
  ]);
  const ciphers = ["ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES128-SHA", "BOGUS", "-AES", "ALL", "AAA"];
  assert.deepEqual(messages(tls({ mode: "PASSTHROUGH", cipherSuites: ciphers }).warnings), [
    "ignoring invalid cipher suites: [AAA BOGUS]",
    "ignoring duplicate cipher suites: [ECDHE-RSA-AES128-SHA]",
  ]);
});

test("server TLS: ISTIO_MUTUAL takes no certificates", () => {
  const r = tls({
    mode: "ISTIO_MUTUAL",
    serverCertificate: "c",
    privateKey: "k",
    caCertificates: "ca",
    credentialName: "x",
    credentialNames: ["y"],
    tlsCertificates: [{}],
  });
  assert.deepEqual(messages(r.errors), [
    "ISTIO_MUTUAL TLS cannot have associated server certificate",
    "ISTIO_MUTUAL TLS cannot have associated private key",
    "ISTIO_MUTUAL TLS cannot have associated CA bundle",
    "ISTIO_MUTUAL TLS cannot have associated tlsCertificates",
    "ISTIO_MUTUAL TLS cannot have associated credentialName",
    "ISTIO_MUTUAL TLS cannot have associated credentialNames",
  ]);
});

test("server TLS: passthrough ignores certificates with a warning", () => {
  assert.deepEqual(messages(tls({ mode: "AUTO_PASSTHROUGH", credentialName: "c" }).warnings), [
    "AUTO_PASSTHROUGH mode does not use certificates, they will be ignored",
  ]);
  assert.deepEqual(messages(tls({ credentialName: "c" }).warnings), [
    "PASSTHROUGH mode does not use certificates, they will be ignored",
  ]);
});

test("server TLS: one certificate source only", () => {
  assert.deepEqual(
    messages(tls({ mode: "SIMPLE", credentialName: "a", serverCertificate: "c", privateKey: "k" }).errors),
    [
      "only one of credential_name, credential_names, server_certificate/private_key, tls_certificates should be specified",
    ],
  );
});

test("server TLS: SIMPLE/MUTUAL need certificates, keys and (mutual) a CA bundle", () => {
  assert.deepEqual(messages(tls({ mode: "SIMPLE" }).errors), [
    "SIMPLE TLS requires a server certificate",
    "SIMPLE TLS requires a private key",
  ]);
  assert.deepEqual(messages(tls({ mode: "OPTIONAL_MUTUAL", serverCertificate: "c", privateKey: "k" }).errors), [
    "MUTUAL TLS requires a client CA bundle",
  ]);
  const three = {
    mode: "SIMPLE",
    tlsCertificates: [{ serverCertificate: "c", privateKey: "k" }, { serverCertificate: "c" }, { privateKey: "k" }],
  };
  const r = tls(three);
  assert.deepEqual(messages(r.warnings), ["SIMPLE TLS can support up to 2 server certificates"]);
  assert.deepEqual(messages(r.errors), [
    "SIMPLE TLS requires a private key",
    "SIMPLE TLS requires a server certificate",
  ]);
  assert.deepEqual(tls({ mode: "MUTUAL", credentialNames: ["a", "b"] }).errors, []);
});

test("server TLS: CRLs not with credentialName nor SIMPLE", () => {
  assert.deepEqual(messages(tls({ mode: "SIMPLE", serverCertificate: "c", privateKey: "k", caCrl: "crl" }).errors), [
    "CRL is not supported with SIMPLE TLS",
  ]);
  assert.deepEqual(messages(tls({ mode: "PASSTHROUGH", credentialName: "x", caCrl: "crl" }).errors), [
    "CRL is not supported with credentialName. CRL has to be specified in the credential",
  ]);
});
