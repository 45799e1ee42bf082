// The IP autoallocation controller's address pools: order, wrap-around, exhaustion, reuse of freed
// addresses, conflicts, and addresses written as Go's netip writes them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { AddressPool, canonicalIp } from "./ip-pool.ts";

test("addresses are handed out in order from the one after the prefix address, never twice", () => {
  const v4 = new AddressPool("240.240.0.0/16");
  assert.deepEqual(
    ["a", "b", "c"].map((owner) => v4.allocateNext(owner)),
    ["240.240.0.1", "240.240.0.2", "240.240.0.3"],
  );
  const v6 = new AddressPool("2001:2::/48");
  assert.deepEqual([v6.allocateNext("a"), v6.allocateNext("a")], ["2001:2::1", "2001:2::2"]);
});

test("an address held already is skipped; the count runs through .255 and .0 as Go's Next does", () => {
  const pool = new AddressPool("240.240.0.0/16");
  assert.equal(pool.markUsed("240.240.0.1", "a"), false);
  assert.equal(pool.allocateNext("b"), "240.240.0.2");
  const wide = new AddressPool("10.0.0.254/16");
  assert.deepEqual([wide.allocateNext("a"), wide.allocateNext("a")], ["10.0.0.255", "10.0.1.0"]);
});

test("the search wraps to the start once, and a full prefix hands out nothing", () => {
  const pool = new AddressPool("10.0.0.0/30");
  assert.deepEqual(
    [1, 2, 3].map(() => pool.allocateNext("a")),
    ["10.0.0.1", "10.0.0.2", "10.0.0.3"],
  );
  assert.equal(pool.allocateNext("a"), undefined);
  pool.free("10.0.0.2", "a");
  assert.equal(pool.allocateNext("b"), "10.0.0.2");
});

test("a freed address is handed out again first; only its owner frees it", () => {
  const pool = new AddressPool("240.240.0.0/16");
  for (const owner of ["a", "b", "c"]) pool.allocateNext(owner);
  pool.free("240.240.0.2", "c");
  assert.equal(pool.allocateNext("d"), "240.240.0.4");
  pool.free("240.240.0.2", "b");
  assert.equal(pool.allocateNext("d"), "240.240.0.2");
  // Then on past the ones still held.
  assert.equal(pool.allocateNext("d"), "240.240.0.5");
});

test("marking an address another owner holds is a conflict; outside the prefix nothing is held", () => {
  const pool = new AddressPool("240.240.0.0/16");
  assert.equal(pool.markUsed("240.240.0.9", "a"), false);
  assert.equal(pool.markUsed("240.240.0.9", "a"), false);
  assert.equal(pool.markUsed("240.240.0.9", "b"), true);
  assert.equal(pool.markUsed("10.0.0.1", "a"), false);
  assert.equal(pool.markUsed("10.0.0.1", "b"), false);
  assert.equal(pool.contains("240.241.0.1"), false);
  assert.equal(pool.contains("2001:2::1"), false);
});

test("addresses are read as Go's netip reads them and written as it writes them", () => {
  assert.equal(canonicalIp("2001:0002:0000:0000:0000:0000:0000:00ff"), "2001:2::ff");
  assert.equal(canonicalIp("::ffff:240.240.0.1"), "240.240.0.1");
  assert.equal(canonicalIp("2001:2::1.2.3.4"), "2001:2::102:304");
  assert.equal(canonicalIp("240.240.0.0/16"), undefined);
  assert.equal(canonicalIp("example.com"), undefined);
});

test("a prefix that is not one is refused", () => {
  assert.throws(() => new AddressPool("240.240.0.0"), /invalid IP prefix/);
  assert.throws(() => new AddressPool("240.240.0.0/33"), /invalid IP prefix/);
  assert.throws(() => new AddressPool("2001:2::/129"), /invalid IP prefix/);
});
