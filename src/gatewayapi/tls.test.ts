import assert from "node:assert/strict";
import { test } from "node:test";
import { keyPairProblem } from "./credentials.ts";
import { clusterObjects } from "./model.ts";
import { ReferenceGrants } from "./referencegrant.ts";
import { buildServerTls } from "./tls.ts";

const cluster = clusterObjects([{ apiVersion: "v1", kind: "Secret", metadata: { name: "cert", namespace: "other" } }]);
const owner = { kind: "Gateway" as const, namespace: "gw" };

test("keyPairProblem words a missing PEM block as Go's tls.X509KeyPair", () => {
  assert.equal(keyPairProblem("SGVsbG8gd29ybGQK", "x"), "tls: failed to find any PEM data in certificate input");
});

test("passthrough is the zero TLS mode; unknown cipher suites are dropped", () => {
  const result = buildServerTls(
    { mode: "Passthrough", options: { "gateway.istio.io/tls-cipher-suites": "bogus, ECDHE-RSA-AES128-GCM-SHA256" } },
    undefined,
    owner,
    cluster,
    new ReferenceGrants([]),
    false,
  );
  assert.deepEqual(result, { tls: { cipherSuites: ["ECDHE-RSA-AES128-GCM-SHA256"] } });
});

test("a certificate in another namespace needs a ReferenceGrant", () => {
  const result = buildServerTls(
    { mode: "Terminate", certificateRefs: [{ name: "cert", namespace: "other" }] },
    undefined,
    owner,
    cluster,
    new ReferenceGrants([]),
    false,
  );
  assert.equal(result.error?.reason, "RefNotPermitted");
  assert.equal(
    result.error?.message,
    'certificateRef cert/other not accessible to a Gateway in namespace "gw" (missing a ReferenceGrant?)',
  );
});
