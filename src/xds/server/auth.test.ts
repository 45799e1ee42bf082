import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { core } from "../../api/index.ts";
import { parseProxy } from "../../model/proxy.ts";
import { checkConnectionIdentity } from "./auth.ts";

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
