import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { core } from "../../api/index.ts";
import { parseProxy } from "../../model/proxy.ts";
import {
  type Authenticator,
  authenticate,
  ClientCertAuthenticator,
  checkConnectionIdentity,
  parseSpiffeId,
  subjectAltNames,
} from "./auth.ts";

const ctx = { header: () => undefined, remoteAddress: "127.0.0.1:1" };

test("subjectAltName text as Node writes it, quoted values included", () => {
  assert.deepEqual(subjectAltNames("URI:spiffe://td/ns/a/sa/b, DNS:x.example, IP Address:10.0.0.1"), [
    ["URI", "spiffe://td/ns/a/sa/b"],
    ["DNS", "x.example"],
    ["IP Address", "10.0.0.1"],
  ]);
  assert.deepEqual(subjectAltNames('URI:"spiffe://td/ns/a,b/sa/c", DNS:y'), [
    ["URI", "spiffe://td/ns/a,b/sa/c"],
    ["DNS", "y"],
  ]);
  assert.deepEqual(subjectAltNames(""), []);
});

test("SPIFFE ids", () => {
  assert.deepEqual(parseSpiffeId("spiffe://cluster.local/ns/default/sa/app"), {
    trustDomain: "cluster.local",
    namespace: "default",
    serviceAccount: "app",
  });
  assert.equal(parseSpiffeId("spiffe://cluster.local/ns/default"), undefined);
});

test("the chain: first authenticator with identities wins; all failing is 'authentication failure'", async () => {
  const failing: Authenticator = { name: "A", authenticate: () => new Error("nope") };
  const empty: Authenticator = { name: "B", authenticate: () => ({ identities: [], authenticator: "B" }) };
  const ok: Authenticator = { name: "C", authenticate: async () => ({ identities: ["id"], authenticator: "C" }) };
  assert.deepEqual(await authenticate([failing, empty, ok], ctx), { identities: ["id"], authenticator: "C" });
  const err = await authenticate([failing, empty], ctx);
  assert.ok(err instanceof Error);
  assert.equal(err.message, "authentication failure (A: nope; B: no identities)");
  assert.ok(new ClientCertAuthenticator().authenticate(ctx) instanceof Error);
});

test("identity check: namespace and, when set, service account must match", () => {
  const { proxy } = parseProxy(
    create(core.NodeSchema, {
      id: "sidecar~10.0.0.1~app-1.default~default.svc.cluster.local",
      metadata: { NAMESPACE: "default", SERVICE_ACCOUNT: "app" },
    }),
  );
  assert.ok(proxy);
  assert.deepEqual(checkConnectionIdentity(proxy, ["spiffe://td/ns/default/sa/app"]), {
    trustDomain: "td",
    namespace: "default",
    serviceAccount: "app",
  });
  const wrongSa = checkConnectionIdentity(proxy, ["spiffe://td/ns/default/sa/other"]);
  assert.ok(wrongSa instanceof Error);
  assert.equal(wrongSa.message, "no identities (spiffe://td/ns/default/sa/other) matched default/app");
  assert.ok(checkConnectionIdentity(proxy, ["spiffe://td/ns/prod/sa/app"]) instanceof Error);
});
