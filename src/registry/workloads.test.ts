import assert from "node:assert/strict";
import { test } from "node:test";
import { spiffeIdentity } from "./workloads.ts";

test("spiffeIdentity: one per trust domain, namespace and account; '@' sanitized; none without an account", () => {
  assert.equal(spiffeIdentity("cluster.local", "ns-1", "default"), "spiffe://cluster.local/ns/ns-1/sa/default");
  assert.equal(spiffeIdentity("cluster.local", "ns-1", "reader"), "spiffe://cluster.local/ns/ns-1/sa/reader");
  assert.equal(spiffeIdentity("cluster.local", "ns-2", "default"), "spiffe://cluster.local/ns/ns-2/sa/default");
  assert.equal(spiffeIdentity("td@corp", "ns-1", "default"), "spiffe://td.corp/ns/ns-1/sa/default");
  assert.equal(spiffeIdentity("cluster.local", "ns-1", ""), "");
  // Past the kept names' bound every identity is still made right.
  for (let i = 0; i < 12_000; i++) {
    assert.equal(spiffeIdentity("cluster.local", `ns-${i}`, "sa"), `spiffe://cluster.local/ns/ns-${i}/sa/sa`);
  }
  assert.equal(spiffeIdentity("cluster.local", "ns-1", "default"), "spiffe://cluster.local/ns/ns-1/sa/default");
});
