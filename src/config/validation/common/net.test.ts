import assert from "node:assert/strict";
import { test } from "node:test";
import { ipAddressError, ipSubnetError, isIpAddress, unixAddressError } from "./net.ts";

test("IP addresses as Go netip parses them", () => {
  for (const ok of ["1.2.3.4", "::1", "fe80::1%eth0", "::ffff:1.2.3.4"]) assert.ok(isIpAddress(ok), ok);
  for (const bad of ["01.2.3.4", "1.2.3", "256.1.1.1", "foo", ""]) assert.ok(!isIpAddress(bad), bad);
  assert.equal(ipAddressError("1.2.3"), "1.2.3 is not a valid IP");
});

test("subnets: one slash means CIDR, otherwise an IP", () => {
  for (const ok of ["10.0.0.0/8", "10.0.0.1/8", "2001:db8::/32", "1.2.3.4"])
    assert.equal(ipSubnetError(ok), undefined, ok);
  assert.equal(ipSubnetError("10.0.0.0/33"), "10.0.0.0/33 is not a valid CIDR block");
  assert.equal(ipSubnetError("10.0.0.0/08"), "10.0.0.0/08 is not a valid CIDR block");
  assert.equal(ipSubnetError("fe80::1%eth0/64"), "fe80::1%eth0/64 is not a valid CIDR block");
  assert.equal(ipSubnetError("1.2.3.4/8/8"), "1.2.3.4/8/8 is not a valid IP");
});

test("unix socket paths: absolute file or abstract", () => {
  assert.equal(unixAddressError("/var/run/x.sock"), undefined);
  assert.equal(unixAddressError("@abstract"), undefined);
  assert.equal(unixAddressError(""), "unix address must not be empty");
  assert.equal(unixAddressError("/dir/"), "/dir/ is not an absolute path to a file");
  assert.equal(unixAddressError("relative"), "relative is not an absolute path to a file");
});
