import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ipAddressBytes, ipBlockBytes, ipCidrBytes, ipPrefixBytes } from "./ip-bytes.ts";

const bytes = (text: string) => {
  const address = ipAddressBytes(text);
  return address && [...address];
};
const block = (text: string) => {
  const parsed = ipBlockBytes(text);
  return parsed && { address: [...parsed.address], length: parsed.length };
};

describe("ipAddressBytes (Go netip.ParseAddr + AsSlice)", () => {
  it("gives IPv4 four bytes and IPv6 sixteen, an IPv4-mapped address included", () => {
    assert.deepEqual(bytes("10.1.2.3"), [10, 1, 2, 3]);
    assert.deepEqual(bytes("::1"), [...new Array(15).fill(0), 1]);
    assert.deepEqual(bytes("2001:db8::a:0:1"), [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0x0a, 0, 0, 0, 1]);
    assert.deepEqual(bytes("::ffff:1.2.3.4"), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4]);
    assert.deepEqual(bytes("1:2:3:4:5:6:7:8"), [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
  });

  it("drops a zone, but refuses an empty one, leading zeros and anything else", () => {
    assert.deepEqual(bytes("fe80::1%eth0"), [0xfe, 0x80, ...new Array(13).fill(0), 1]);
    for (const text of ["fe80::1%", "01.2.3.4", "1.2.3", "", "host", "[::1]", "1.2.3.4%eth0", "1::2::3"]) {
      assert.equal(ipAddressBytes(text), undefined, text);
    }
  });
});

describe("ipPrefixBytes (Go netip.ParsePrefix) and ipBlockBytes", () => {
  it("keeps the address's own bits unmasked", () => {
    assert.deepEqual(block("5.6.7.8/16"), { address: [5, 6, 7, 8], length: 16 });
    assert.deepEqual(block("0.0.0.0/0"), { address: [0, 0, 0, 0], length: 0 });
    assert.deepEqual(block("::ffff:1.2.3.4/120")?.length, 120);
  });

  it("reads a value without a slash as one address of full length", () => {
    assert.deepEqual(block("1.2.3.4"), { address: [1, 2, 3, 4], length: 32 });
    assert.equal(block("::")?.length, 128);
  });

  it("refuses zones, leading zeros, signs and lengths past the address size", () => {
    for (const text of ["1.2.3.4/33", "::/129", "1.2.3.4/024", "1.2.3.4/+8", "1.2.3.4/", "fe80::1%eth0/64", "x/8"]) {
      assert.equal(ipPrefixBytes(text), undefined, text);
    }
  });
});

describe("ipCidrBytes (Istio's parseCidrOrIP)", () => {
  it("masks a block to its first address and reads a single address as a full-length block", () => {
    const cidr = (text: string) => {
      const parsed = ipCidrBytes(text);
      return parsed && { address: [...parsed.address], length: parsed.length };
    };
    assert.deepEqual(cidr("10.1.2.3/20"), { address: [10, 1, 0, 0], length: 20 });
    assert.deepEqual(cidr("10.1.2.3"), { address: [10, 1, 2, 3], length: 32 });
    assert.deepEqual(cidr("2001:db8::ff/120")?.address.slice(14), [0, 0]);
    assert.equal(cidr("10.1.2.3/33"), undefined);
    assert.equal(cidr("example.com"), undefined);
  });
});
