import assert from "node:assert/strict";
import { test } from "node:test";
import {
  checkPathTemplates,
  checkServiceAccounts,
  checkTrustDomainValues,
  checkWildcardValues,
  validateAttribute,
  validateIPs,
  validatePorts,
} from "./security.ts";

test("service accounts: at most 16, no wildcard, sa or ns/sa, at most 320 chars", () => {
  assert.deepEqual(checkServiceAccounts("K", ["ns/sa", "sa"]), []);
  assert.deepEqual(checkServiceAccounts("K", Array(17).fill("sa")), ["may not have more than 16 values"]);
  assert.deepEqual(checkServiceAccounts("K", [""]), ["empty value not allowed, found in K"]);
  assert.deepEqual(checkServiceAccounts("K", ["ns/*"]), ["wildcard not allowed, found in K"]);
  assert.deepEqual(checkServiceAccounts("K", ["a/b/c"]), [
    `expected format 'serviceAccount' or 'namespace/serviceAccount', found "a/b/c" in K`,
  ]);
  const long = "a".repeat(321);
  assert.deepEqual(checkServiceAccounts("K", [long]), [`value cannot exceed 320 characters, found "${long}" in K`]);
  assert.deepEqual(checkServiceAccounts("K", ["/sa"]), [
    `expected format 'serviceAccount' or 'namespace/serviceAccount', found empty namespace "/sa" in K`,
  ]);
  assert.deepEqual(checkServiceAccounts("K", ["ns/"]), [
    `expected format 'serviceAccount' or 'namespace/serviceAccount', found empty serviceAccount "ns/" in K`,
  ]);
});

test("wildcard values: one `*`, only at the start or end; trust domains also reject `/`", () => {
  assert.deepEqual(checkWildcardValues("K", ["*", "a*", "*a", "a"]), []);
  assert.deepEqual(checkWildcardValues("K", ["*a*"]), [`at most one wildcard is allowed, found in K: "*a*"`]);
  assert.deepEqual(checkWildcardValues("K", ["a*b"]), [
    `wildcard is only allowed at the start or end, found in K: "a*b"`,
  ]);
  assert.deepEqual(checkTrustDomainValues("K", ["a/b"]), [`trust domain must not contain '/', found in K: "a/b"`]);
});

test("path templates: {*} anywhere, {**} only last, no other braces, pchar literals around templates", () => {
  assert.deepEqual(checkPathTemplates("Paths", ["/a/{*}/b", "/{**}", "/a/{*}/{**}"]), []);
  assert.deepEqual(checkPathTemplates("Paths", ["/{**}/{*}"]), [
    "invalid or unsupported path {**}/{*}, found in Paths. {**} is not the last operator",
  ]);
  assert.deepEqual(checkPathTemplates("Paths", ["/a/{x}"]), [
    "invalid or unsupported path a/{x}, found in Paths. Contains '{' or '}' beyond a supported path template",
  ]);
  assert.deepEqual(checkPathTemplates("Paths", ["/a b/{*}"]), [
    "invalid or unsupported path a b/{*}, found in Paths. Contains segment a b with invalid string literal",
  ]);
  // Without a template, literal segments are not checked.
  assert.deepEqual(checkPathTemplates("Paths", ["/a b/*"]), []);
});

test("IPs and CIDR ranges parse as Go netip does", () => {
  assert.deepEqual(validateIPs(["1.2.3.4", "10.0.0.0/8", "::1", "fe80::/10"]), []);
  assert.deepEqual(validateIPs(["1.2.3"]), ["bad IP address (1.2.3)"]);
  assert.deepEqual(validateIPs(["1.2.3.4/33"]), [
    `bad CIDR range (1.2.3.4/33): netip.ParsePrefix("1.2.3.4/33"): prefix length out of range`,
  ]);
});

test("ports are base-10 numbers up to 65535", () => {
  assert.deepEqual(validatePorts(["80", "65535"]), []);
  assert.deepEqual(validatePorts(["65536"]), ["bad port (65536): <nil>"]);
  assert.deepEqual(validatePorts(["http"]), [`bad port (http): strconv.ParseUint: parsing "http": invalid syntax`]);
});

test("when attributes: map keys, IPs, ports, identities, replaced and unknown attributes", () => {
  assert.equal(validateAttribute("request.headers[x]", ["a"]), undefined);
  assert.equal(validateAttribute("request.headers", ["a"]), "bad key (request.headers): should have format a[b]");
  assert.equal(
    validateAttribute("request.auth.claims[]", ["a"]),
    "bad key (request.auth.claims[]): should have format a[b]",
  );
  assert.equal(validateAttribute("source.ip", [""]), "empty value not allowed, found in source.ip");
  assert.equal(validateAttribute("source.ip", ["x"]), "1 error occurred:\n\t* bad IP address (x)\n\n");
  assert.equal(validateAttribute("destination.port", ["99999"]), "1 error occurred:\n\t* bad port (99999): <nil>\n\n");
  assert.equal(
    validateAttribute("source.serviceAccount", ["*"]),
    "wildcard not allowed, found in source.serviceAccount",
  );
  assert.equal(
    validateAttribute("destination.namespace", ["a"]),
    "attribute destination.namespace is replaced by the metadata.namespace",
  );
  assert.equal(
    validateAttribute("destination.labels[app]", ["a"]),
    "attribute destination.labels[app] is replaced by the workload selector",
  );
  assert.equal(
    validateAttribute("destination.user", ["a"]),
    "deprecated attribute destination.user: only supported in v1alpha1",
  );
  assert.equal(validateAttribute("Source.ip", ["a"]), "unknown attribute: Source.ip");
});
