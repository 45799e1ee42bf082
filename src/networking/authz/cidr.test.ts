import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toJson } from "@bufbuild/protobuf";
import { core } from "../../api/index.ts";
import { cidrRange } from "./cidr.ts";

function range(value: string): unknown {
  const r = cidrRange(value);
  return "error" in r ? r : toJson(core.CidrRangeSchema, r);
}

describe("authz CIDR ranges", () => {
  it("makes a bare address a /32 or /128", () => {
    assert.deepEqual(range("1.2.3.4"), { addressPrefix: "1.2.3.4", prefixLen: 32 });
    assert.deepEqual(range("2001:db8::1"), { addressPrefix: "2001:db8::1", prefixLen: 128 });
  });

  it("keeps the address bits of a CIDR unmasked, as Go's netip.Prefix", () => {
    assert.deepEqual(range("10.1.2.3/16"), { addressPrefix: "10.1.2.3", prefixLen: 16 });
    assert.deepEqual(range("0.0.0.0/0"), { addressPrefix: "0.0.0.0", prefixLen: 0 });
  });

  it("prints IPv6 in canonical form and keeps an IPv4-mapped tail dotted", () => {
    assert.deepEqual(range("2001:DB8:0:0:0:0:0:1/64"), { addressPrefix: "2001:db8::1", prefixLen: 64 });
    assert.deepEqual(range("::ffff:1.2.3.4"), { addressPrefix: "::ffff:1.2.3.4", prefixLen: 128 });
  });

  it("rejects what is not an address or CIDR", () => {
    for (const bad of ["", "1.2.3", "1.2.3.4/33", "1.2.3.4/", "::1/129", "1.2.3.4/08", "host", "fe80::1%eth0/64"]) {
      assert.ok("error" in (cidrRange(bad) as object), bad);
    }
  });
});
