import assert from "node:assert/strict";
import { test } from "node:test";
import type { Authenticator } from "../xds/index.ts";
import { authorizeDebugCall, isLoopback } from "./auth.ts";

/** Vouches for whatever identities the `x-ids` header lists. */
const headerAuthenticator: Authenticator = {
  name: "HeaderAuthenticator",
  authenticate(ctx) {
    const ids = ctx.header("x-ids");
    return ids ? { identities: ids.split(","), authenticator: this.name } : new Error("no x-ids header");
  },
};

const remote = (endpoint: string, ids?: string) => ({
  remoteIp: "10.1.2.3",
  remotePort: 40000,
  endpoint,
  header: (name: string) => (name === "x-ids" ? ids : undefined),
});
const SYSTEM = "spiffe://cluster.local/ns/istio-system/sa/istiod";
const SHOP = "spiffe://cluster.local/ns/shop/sa/app";
const auth = { systemNamespace: "istio-system", allowedNamespaces: ["ops"] };

test("loopback is Go's IsLoopback: 127.0.0.0/8 (IPv4-mapped too) and ::1", () => {
  for (const ip of ["127.0.0.1", "127.0.0.2", "127.255.0.9", "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"]) {
    assert.equal(isLoopback(ip), true, ip);
  }
  for (const ip of ["10.0.0.1", "::ffff:10.0.0.1", "fd00::1", "0.0.0.0", "::", "", "localhost"]) {
    assert.equal(isLoopback(ip), false, ip);
  }
});

test("a loopback caller passes without authenticators and sees everything", async () => {
  assert.deepEqual(await authorizeDebugCall({ ...remote("configz"), remoteIp: "127.0.0.1" }, [], auth), {
    allowed: true,
  });
});

test("a remote caller no authenticator vouches for is 401; the reasons stay in the refusal for the log", async () => {
  const access = await authorizeDebugCall(remote("configz"), [headerAuthenticator], auth);
  assert.equal(access.allowed, false);
  assert.equal(!access.allowed && access.status, 401);
  assert.match(!access.allowed ? access.reason : "", /HeaderAuthenticator: no x-ids header/);
  assert.equal((await authorizeDebugCall(remote("configz", SYSTEM), [], auth)).allowed, false, "empty chain");
});

test("the system namespace and allowed namespaces see everything; others only config_dump, ndsz and edsz of their namespace", async () => {
  const chain = [headerAuthenticator];
  assert.deepEqual(await authorizeDebugCall(remote("configz", SYSTEM), chain, auth), { allowed: true });
  assert.deepEqual(await authorizeDebugCall(remote("configz", "spiffe://cluster.local/ns/ops/sa/x"), chain, auth), {
    allowed: true,
  });
  for (const endpoint of ["config_dump", "ndsz", "edsz"]) {
    assert.deepEqual(await authorizeDebugCall(remote(endpoint, SHOP), chain, auth), {
      allowed: true,
      callerNamespace: "shop",
    });
  }
  for (const endpoint of ["configz", "syncz", "adsz", "pprof/heap"]) {
    const access = await authorizeDebugCall(remote(endpoint, SHOP), chain, auth);
    assert.equal(!access.allowed && access.status, 403, endpoint);
  }
  // The namespace comes from the first SPIFFE identity; none at all is refused.
  assert.deepEqual(await authorizeDebugCall(remote("configz", `dns:example.com,${SYSTEM}`), chain, auth), {
    allowed: true,
  });
  const noSpiffe = await authorizeDebugCall(remote("config_dump", "dns:example.com"), chain, auth);
  assert.equal(!noSpiffe.allowed && noSpiffe.status, 403);
});

test("with debug endpoint auth off (ENABLE_DEBUG_ENDPOINT_AUTH=false) any authenticated caller sees everything", async () => {
  assert.deepEqual(
    await authorizeDebugCall(remote("configz", SHOP), [headerAuthenticator], { ...auth, enabled: false }),
    { allowed: true },
  );
});

test("callers counted as local can be narrowed (a server on 127.0.0.2 treating 127.0.0.2 as remote)", async () => {
  const onlyOne = (ip: string) => ip === "127.0.0.1";
  const access = await authorizeDebugCall({ ...remote("configz"), remoteIp: "127.0.0.2" }, [], auth, onlyOne);
  assert.equal(!access.allowed && access.status, 401);
});
