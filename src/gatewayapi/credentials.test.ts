import assert from "node:assert/strict";
import { test } from "node:test";
import { extractCertInfo, extractRoot, objectValues } from "./credentials.ts";

test("a Secret's data is base64-decoded and stringData overrides it", () => {
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "s" },
    data: { "tls.crt": Buffer.from("from-data").toString("base64"), "tls.key": Buffer.from("k").toString("base64") },
    stringData: { "tls.key": "from-stringData" },
  };
  assert.deepEqual(objectValues(secret), { "tls.crt": "from-data", "tls.key": "from-stringData" });
});

test("certificate keys are looked up as Istio does, with its wording when missing", () => {
  assert.deepEqual(extractCertInfo({ cert: "c", key: "k", "tls.crt": "x", "tls.key": "y" }), { cert: "c", key: "k" });
  assert.deepEqual(extractCertInfo({ "tls.crt": "", "tls.key": "" }), {
    error: 'found keys "tls.crt" and "tls.key", but they were empty',
  });
  assert.deepEqual(extractCertInfo({ a: "1", b: "2", c: "3", d: "4" }), {
    error:
      "found secret, but didn't have expected keys (cert and key) or (tls.crt and tls.key); found: a, b, c, and 1 more...",
  });
});

test("a CA bundle is cacert, else ca.crt", () => {
  assert.deepEqual(extractRoot({ "ca.crt": "pem" }), { cert: "pem" });
  assert.deepEqual(extractRoot({ "not-ca.crt": "pem" }), {
    error: "found secret, but didn't have expected keys cacert or ca.crt; found: not-ca.crt",
  });
});
