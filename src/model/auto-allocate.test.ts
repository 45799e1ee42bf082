// Istio's deterministic ServiceEntry address allocation, checked against the values Istio's own tests expect.
import assert from "node:assert/strict";
import { test } from "node:test";
import { svc } from "../../test/support/model-fixtures.ts";
import { addressesForProxy, allocateAddresses, usesAutoAllocatedAddresses } from "./auto-allocate.ts";

const entry = (hostname: string, overrides = {}) =>
  svc(hostname, "", {
    hostname,
    registry: "External",
    addresses: [],
    defaultAddress: "0.0.0.0",
    resolution: "DNSLB",
    ...overrides,
  });

test("a host's slot comes from FNV-1a of namespace/host, with its IPv6 twin", () => {
  assert.deepEqual(allocateAddresses([entry("foo.com")]).get("/foo.com"), ["240.240.227.81", "2001:2::f0f0:e351"]);
});

test("a collision moves the later host by double hashing", () => {
  const allocated = allocateAddresses([entry("a17061.example.com"), entry("a44155.example.com")]);
  assert.deepEqual(allocated.get("/a17061.example.com"), ["240.240.25.11", "2001:2::f0f0:19b"]);
  assert.deepEqual(allocated.get("/a44155.example.com"), ["240.240.31.17", "2001:2::f0f0:1f11"]);
});

test("hosts with addresses, wildcard hosts and resolution NONE get none", () => {
  const allocated = allocateAddresses([
    entry("vip.example.com", { addresses: ["1.1.1.1"], defaultAddress: "1.1.1.1" }),
    entry("*.example.com"),
    entry("none.example.com", { resolution: "Passthrough" }),
  ]);
  assert.equal(allocated.size, 0);
});

test("proxies capturing DNS use auto-allocated addresses; with the controller off, only those that also ask", () => {
  const proxy = (flags: Record<string, boolean>) => ({ metadata: { raw: {}, ...flags } });
  assert.equal(usesAutoAllocatedAddresses(proxy({ DNS_CAPTURE: true }), true), true);
  assert.equal(usesAutoAllocatedAddresses(proxy({}), true), false);
  assert.equal(usesAutoAllocatedAddresses(proxy({ DNS_CAPTURE: true }), false), false);
  assert.equal(usesAutoAllocatedAddresses(proxy({ DNS_CAPTURE: true, DNS_AUTO_ALLOCATE: true }), false), true);
});

test("a proxy uses the addresses of its own families", () => {
  const both = ["240.240.0.1", "2001:2::f0f0:1"];
  assert.deepEqual(addressesForProxy(both, { ipAddresses: ["10.0.0.1"] }), ["240.240.0.1"]);
  assert.deepEqual(addressesForProxy(both, { ipAddresses: ["fd00::1"] }), ["2001:2::f0f0:1"]);
  assert.deepEqual(addressesForProxy(both, { ipAddresses: ["10.0.0.1", "fd00::1"] }), both);
});
