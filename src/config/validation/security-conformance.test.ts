// Istio's CRD-validation corpus for the security, telemetry and extension kinds: every `-valid`
// document passes the webhook validators; the `-invalid` ones the webhook also rejects are pinned
// (the rest are rejected only by the CRD schema, as in Istio).
import assert from "node:assert/strict";
import { test } from "node:test";
import { corpusDocuments, runOnDocument } from "../../../test/support/validation.ts";
import { parseApiVersion } from "../kinds.ts";
import { semanticValidator } from "./index.ts";

const FILES = ["authz", "peerauth", "reqauth", "telemetry", "wasm"];

// Invalid documents Istio's webhook accepts: only the CRD schema rejects them.
const CRD_ONLY = new Set([
  "reqauth/no-issuer", // `jwtRules: [null]`: the webhook skips null rules
  "reqauth/invalid-space-delimited-claims", // minLength on items
  "wasm/invalid-imagePullSecret", // minLength 1
  "wasm/invalid-pluginName", // minLength 1
]);

function errorsOf(file: string, kind: "valid" | "invalid"): { name: string; errors: string[] }[] {
  return corpusDocuments(`${file}-${kind}.yaml`).map((doc) => {
    const validator = semanticValidator(parseApiVersion(doc.apiVersion).group, doc.kind);
    assert.ok(validator, `no validator for ${doc.kind}`);
    return { name: doc.metadata.name ?? "", errors: runOnDocument(validator, doc).errors.map((e) => e.message) };
  });
}

for (const file of FILES) {
  test(`every ${file}-valid document passes Istio's webhook rules`, () => {
    for (const { name, errors } of errorsOf(file, "valid")) assert.deepEqual(errors, [], `${file}/${name}`);
  });

  test(`${file}-invalid documents are rejected unless Istio leaves them to the CRD schema`, () => {
    for (const { name, errors } of errorsOf(file, "invalid")) {
      const key = `${file}/${name}`;
      assert.equal(errors.length > 0, !CRD_ONLY.has(key), key);
    }
  });
}
