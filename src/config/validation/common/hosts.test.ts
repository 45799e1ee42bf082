import assert from "node:assert/strict";
import { test } from "node:test";
import { collect, messages } from "../../../../test/support/validation.ts";
import {
  fqdnError,
  gatewayBoundVirtualServiceHostError,
  isDns1123Label,
  isWildcardLabel,
  partialWildcardError,
  validateNamespaceHost,
  wildcardDomainError,
} from "./hosts.ts";

test("DNS-1123 labels allow uppercase and at most 63 characters", () => {
  assert.ok(isDns1123Label("Foo-1"));
  assert.ok(isDns1123Label("a".repeat(63)));
  assert.ok(!isDns1123Label("a".repeat(64)));
  assert.ok(!isDns1123Label("-a"));
  assert.ok(!isDns1123Label("a_b"));
  assert.ok(!isDns1123Label(""));
});

test("wildcard labels: *, *foo, *-foo and plain labels; not foo*", () => {
  for (const ok of ["*", "*foo", "*-foo", "foo"]) assert.ok(isWildcardLabel(ok), ok);
  for (const bad of ["foo*", "**", "*.", ""]) assert.ok(!isWildcardLabel(bad), bad);
});

test("FQDN: length, empty, numeric TLD and bad labels", () => {
  assert.equal(fqdnError("foo.com"), undefined);
  assert.equal(fqdnError("foo"), undefined);
  assert.equal(fqdnError("foo.com."), undefined);
  assert.equal(fqdnError(""), "empty domain name not allowed");
  const long = `${"a".repeat(63)}.`.repeat(5);
  assert.equal(fqdnError(long), `domain name "${long}" too long (max 255)`);
  assert.equal(fqdnError("foo.123"), 'domain name "foo.123" invalid (top level domain "123" cannot be all-numeric)');
  assert.equal(fqdnError("foo.-1"), 'domain name "foo.-1" invalid (top level domain "-1" cannot be all-numeric)');
  assert.equal(fqdnError("*.foo.com"), 'domain name "*.foo.com" invalid (label "*" invalid)');
  assert.equal(fqdnError("a..b"), 'domain name "a..b" invalid (label "" invalid)');
});

test("wildcard domain: errors in the remainder quote only the remainder", () => {
  for (const ok of ["*", "*.foo.com", "foo.com", "123", "*foo.bar", "short"]) {
    assert.equal(wildcardDomainError(ok), undefined, ok);
  }
  assert.equal(wildcardDomainError("foo.*.com"), 'domain name "*.com" invalid (label "*" invalid)');
  assert.equal(
    wildcardDomainError("1.2.3.4"),
    'domain name "2.3.4" invalid (top level domain "4" cannot be all-numeric)',
  );
  assert.equal(wildcardDomainError("foo*.com"), 'domain name "foo*.com" invalid (label "foo*" invalid)');
  assert.equal(wildcardDomainError(""), "empty domain name not allowed");
});

test("partial wildcards are only allowed as a *. prefix", () => {
  assert.equal(partialWildcardError("*"), undefined);
  assert.equal(partialWildcardError("*.foo.com"), undefined);
  assert.equal(partialWildcardError("*foo.com"), 'partial wildcard "*foo.com" not allowed');
});

test("gateway-bound VirtualService hosts accept outbound_ SNI names when matching SNI", () => {
  assert.equal(gatewayBoundVirtualServiceHostError(true, "outbound_.80_._.foo.com"), undefined);
  assert.equal(
    gatewayBoundVirtualServiceHostError(true, "outbound_.80_.foo"),
    "domain name outbound_.80_.foo invalid, should follow 'outbound_.<PORT>_._.<HOSTNAME>' format",
  );
  assert.equal(
    gatewayBoundVirtualServiceHostError(true, "outbound_.x_._.foo.com"),
    'domain name "outbound_.x_._.foo.com" invalid (label "x" invalid). should follow outbound_.<PORT>_._.<HOSTNAME> format',
  );
  assert.equal(
    gatewayBoundVirtualServiceHostError(true, "outbound_.80_._.123"),
    'domain name "outbound_.80_._.123" invalid (label "123" invalid). should follow outbound_.<PORT>_._.<HOSTNAME> format',
  );
  assert.equal(
    gatewayBoundVirtualServiceHostError(false, "outbound_.80_._.foo.com"),
    'domain name "outbound_.80_._.foo.com" invalid (label "outbound_" invalid)',
  );
});

test("namespace/host: sidecar hosts need a namespace", () => {
  const r = collect((out) => validateNamespaceHost("foo.com", "sidecar", false, out));
  assert.deepEqual(r.errors, [{ path: "spec", message: "host must be of form namespace/dnsName" }]);
});

test("namespace/host: sidecar namespaces may be ~-prefixed, *, . or a label", () => {
  for (const ok of ["~/*", "~ns1/*", "~/foo.com", "*/*", "./foo.com", "ns/*.foo.com"]) {
    assert.deepEqual(collect((out) => validateNamespaceHost(ok, "sidecar", false, out)).errors, [], ok);
  }
  assert.deepEqual(messages(collect((out) => validateNamespaceHost("a_b/foo.com", "sidecar", false, out)).errors), [
    'invalid namespace value "a_b" in sidecar',
  ]);
});

test("namespace/host: sidecar reports a bad DNS name twice, as Istio does", () => {
  assert.deepEqual(messages(collect((out) => validateNamespaceHost("ns/foo.*.com", "sidecar", false, out)).errors), [
    'domain name "*.com" invalid (label "*" invalid)',
    'domain name "*.com" invalid (label "*" invalid)',
    'partial wildcard "foo.*.com" not allowed',
  ]);
});

test("namespace/host: short names and empty parts", () => {
  assert.deepEqual(messages(collect((out) => validateNamespaceHost("ns/foo", "gateway", false, out)).errors), [
    "short names (non FQDN) are not allowed",
  ]);
  assert.deepEqual(messages(collect((out) => validateNamespaceHost("/foo.com", "gateway", false, out)).errors), [
    "config namespace and dnsName in host entry cannot be empty",
    'invalid namespace value "" in gateway',
  ]);
});

test("namespace/host: gateways allow IPv4 hosts and ~ only with gateway semantics", () => {
  assert.deepEqual(collect((out) => validateNamespaceHost("1.2.3.4", "gateway", false, out)).errors, []);
  assert.deepEqual(collect((out) => validateNamespaceHost("~/foo.com", "gateway", true, out)).errors, []);
  assert.deepEqual(messages(collect((out) => validateNamespaceHost("~/foo.com", "gateway", false, out)).errors), [
    'invalid namespace value "~" in gateway',
  ]);
});
