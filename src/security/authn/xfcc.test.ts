import assert from "node:assert/strict";
import { test } from "node:test";
import type { AuthContext } from "./authenticator.ts";
import { parseTrustedGatewayCidrs, parseXfcc, XfccAuthenticator } from "./xfcc.ts";

const MULTI_HOP =
  'Hash=hash;Cert="-----BEGIN%20CERTIFICATE-----%0cert%0A-----END%20CERTIFICATE-----%0A";Subject="CN=hello,OU=hello,O=Acme\\, Inc.";URI=spiffe://mesh.example.com/ns/firstns/sa/firstsa;DNS=hello.west.example.com;DNS=hello.east.example.com,By=spiffe://mesh.example.com/ns/hellons/sa/hellosa;Hash=again;Subject="";URI=spiffe://mesh.example.com/ns/otherns/sa/othersa';

function call(remoteAddress: string, xfcc?: string): AuthContext {
  return {
    transport: "grpc",
    header: (name) => (name === "x-forwarded-client-cert" ? xfcc : undefined),
    remoteAddress,
  };
}

test("a trusted gateway's header: URIs, DNS names and subject CNs of every hop", () => {
  const auth = new XfccAuthenticator(parseTrustedGatewayCidrs("172.17.0.0/16,192.17.0.0/16"));
  assert.deepEqual(auth.authenticate(call("172.17.0.2:9901", MULTI_HOP)), {
    identities: [
      "spiffe://mesh.example.com/ns/firstns/sa/firstsa",
      "hello.west.example.com",
      "hello.east.example.com",
      "hello",
      "spiffe://mesh.example.com/ns/otherns/sa/othersa",
    ],
    authenticator: "XfccAuthenticator",
  });
  const single = auth.authenticate(
    call("172.17.0.2:9901", 'Hash=meshclient;Subject="";URI=spiffe://mesh.example.com/ns/otherns/sa/othersa'),
  );
  assert.deepEqual(single, {
    identities: ["spiffe://mesh.example.com/ns/otherns/sa/othersa"],
    authenticator: "XfccAuthenticator",
  });
});

test("an untrusted peer's header is ignored", () => {
  const auth = new XfccAuthenticator(["172.17.0.0/16"]);
  const result = auth.authenticate(call("110.17.0.2:80", MULTI_HOP));
  assert.ok(result instanceof Error);
  assert.equal(
    result.message,
    "caller from 110.17.0.2:80 is not in the trusted network. XfccAuthenticator can not be used",
  );
});

test("no header", () => {
  const result = new XfccAuthenticator(["172.17.0.0/16"]).authenticate(call("127.0.0.1:2301"));
  assert.ok(result instanceof Error);
  assert.equal(result.message, "caller from 127.0.0.1:2301 does not have Xfcc header");
});

test("a malformed header", () => {
  const result = new XfccAuthenticator([]).authenticate(call("127.0.0.1:2301", "junk xfcc header"));
  assert.ok(result instanceof Error);
  assert.match(result.message, /^error in parsing xfcc header: invalid header format/);
});

test("trusted addresses as Istio's isTrustedAddress", () => {
  const trusted = (cidr: string, peer: string) => new XfccAuthenticator(cidr.split(",")).isTrusted(peer);
  assert.equal(trusted("", "127.0.0.1:9901"), true, "loopback always");
  assert.equal(trusted("", "[::1]:9901"), true);
  assert.equal(trusted("", "127.0.0.1"), false, "no port");
  assert.equal(trusted("", "172.0.0.1"), false);
  assert.equal(trusted("172.17.0.0/16,192.17.0.0/16", "172.17.0.2:9901"), true);
  assert.equal(trusted("172.17.0.0/16,2001:db8:1234:1a00::/56", "[2001:0db8:1234:1a00:0000:0000:0000:0000]:80"), true);
  // grpc-js writes IPv6 peers without brackets.
  assert.equal(trusted("2001:db8:1234:1a00::/56", "2001:db8:1234:1a00::7:80"), true);
  assert.equal(trusted("172.17.0.0/16", "110.17.0.2:80"), false);
  assert.equal(trusted("172.17.0.1", "172.17.0.1:80"), false, "an address without /bits matches nothing");
  assert.equal(trusted(" 172.17.0.0/16", "172.17.0.1:80"), false, "entries are not trimmed");
  // Node reports IPv4 peers of a dual-stack listener IPv4-mapped, where Go reports them as IPv4.
  assert.equal(trusted("10.0.0.0/8", "[::ffff:10.0.0.1]:80"), true);
  assert.deepEqual(parseTrustedGatewayCidrs(""), []);
  assert.deepEqual(parseTrustedGatewayCidrs(undefined), []);
});

test("the header grammar", () => {
  assert.deepEqual(parseXfcc(""), []);
  assert.deepEqual(parseXfcc('By=a\\;b;URI="x,y";DNS=d'), [{ by: "a;b", uri: ["x,y"], dns: ["d"] }]);
  assert.deepEqual(parseXfcc('Subject="CN=a\\,b"'), [{ uri: [], dns: [], subjectCommonName: "a,b" }]);
  // An escaped quote is a quote again when the subject is parsed: unterminated.
  assert.ok(parseXfcc('Subject="CN=a\\"b"') instanceof Error);
  assert.deepEqual(parseXfcc('Subject="O=x"'), [{ uri: [], dns: [], subjectCommonName: "" }]);
  for (const bad of [
    "Hash",
    "Hash=;Hash",
    "unknown=hello",
    'Subject="random"',
    'Subject="random=hello"',
    "URI=a,",
    ",URI=a",
    "URI=a;",
    "URI=",
    'URI="a',
    "URI=\\x",
  ]) {
    assert.ok(parseXfcc(bad) instanceof Error, bad);
  }
});
