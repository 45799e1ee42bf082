import assert from "node:assert/strict";
import { test } from "node:test";
import { runSemantic } from "../../../test/support/validation.ts";
import type { Issue, ValidationResult } from "../model.ts";
import { validateRequestAuthentication } from "./requestauthentication.ts";

function check(spec: unknown): ValidationResult {
  return runSemantic(validateRequestAuthentication, spec, {
    apiVersion: "security.istio.io/v1",
    kind: "RequestAuthentication",
  });
}

function errorsOf(rule: unknown): Issue[] {
  return check({ jwtRules: [rule] }).errors;
}

const RSA_N =
  "xAE7eB6qugXyCAG3yhh7pkDkT65pHymX-P7KfIupjf59vsdo91bSP9C8H07pSAGQO1MV_xFj9VswgsCg4R6otmg5PV2He95lZdHtOcU5DXIg_pbhLdKXbi66GlVeK6ABZOUW3WYtnNHD-91gVuoeJT_DwtGGcp4ignkgXfkiEm4sw-4sfb4qdt5oLbyVpmW6x9cfa7vs2WTfURiCrBoUqgBo_-4WTiULmmHSGZHOjzwa8WtrtOQGsAFjIbno85jp6MnGGGZPYZbDAa_b3y5u-YpW7ypZrvD8BgtKVjgtQgZhLAGezMt0ua3DRrWnKqTZ0BJ_EyxOGuHJrLsn00fnMQ";

test("selector and targetRef rules apply", () => {
  assert.deepEqual(check({ selector: { matchLabels: { a: "b" } }, targetRef: { kind: "Service", name: "s" } }).errors, [
    { path: "spec", message: "only one of targetRefs or workloadSelector can be set" },
  ]);
});

test("null jwt rules are skipped; audiences must be non-empty", () => {
  assert.deepEqual(check({ jwtRules: [null] }).errors, []);
  assert.deepEqual(errorsOf({ issuer: "i", audiences: ["a", ""] }), [
    { path: "spec.jwtRules[0].audiences", message: "audience must be non-empty string" },
  ]);
});

test("issuer or jwksUri is required", () => {
  assert.deepEqual(errorsOf({}), [{ path: "spec.jwtRules[0]", message: "issuer or jwksUri must be non-empty string" }]);
  assert.deepEqual(errorsOf({ jwksUri: "https://foo.com/cert" }), []);
  assert.deepEqual(errorsOf({ jwks_uri: "https://foo.com/cert" }), []);
});

test("jwksUri: Go url.Parse errors, http/https only, port must be numeric", () => {
  assert.deepEqual(errorsOf({ issuer: "i", jwksUri: "foo.com" }), [
    { path: "spec.jwtRules[0].jwksUri", message: `URI scheme "" is not supported` },
  ]);
  assert.deepEqual(errorsOf({ issuer: "i", jwksUri: "https://foo.com:not-a-number" }), [
    {
      path: "spec.jwtRules[0].jwksUri",
      message: `parse "https://foo.com:not-a-number": invalid port ":not-a-number" after host`,
    },
  ]);
  assert.deepEqual(errorsOf({ issuer: "i", jwks_uri: "hTPp\\\blah" }), [
    { path: "spec.jwtRules[0].jwks_uri", message: `parse "hTPp\\\\\\blah": net/url: invalid control character in URL` },
  ]);
  assert.deepEqual(errorsOf({ issuer: "i", jwksUri: "ftp://foo.com" }), [
    { path: "spec.jwtRules[0].jwksUri", message: `URI scheme "ftp" is not supported` },
  ]);
});

test("inline jwks must parse; private and symmetric keys warn", () => {
  const publicKey = { kty: "RSA", e: "AQAB", n: RSA_N };
  assert.deepEqual(check({ jwtRules: [{ issuer: "i", jwks: JSON.stringify({ keys: [publicKey] }) }] }), {
    errors: [],
    warnings: [],
  });
  const bad = errorsOf({ issuer: "i", jwks: "foo" });
  assert.equal(bad.length, 1);
  assert.match(bad[0].message, /^jwks parse error: /);
  assert.deepEqual(errorsOf({ issuer: "i", jwks: JSON.stringify({ keys: [{ kty: "RSA", e: "AQAB" }] }) }), [
    {
      path: "spec.jwtRules[0].jwks",
      message: "jwks parse error: failed to parse key at index 0: required field n is missing",
    },
  ]);
  const { warnings } = check({
    jwtRules: [
      { issuer: "i", jwks: JSON.stringify({ keys: [publicKey, { ...publicKey, d: "x" }, { kty: "oct", k: "a" }] }) },
    ],
  });
  assert.deepEqual(
    warnings.map((w) => w.message),
    [1, 2].map(
      (i) => `jwks key at index ${i} contains private key material; only public keys are used for verification`,
    ),
  );
});

test("token locations: header names, query params and cookies must be non-empty", () => {
  assert.deepEqual(
    errorsOf({ issuer: "i", fromHeaders: [null, { prefix: "x" }], fromParams: [""], fromCookies: [""] }),
    [
      { path: "spec.jwtRules[0].fromHeaders[0]", message: "location header name must be non-null" },
      { path: "spec.jwtRules[0].fromHeaders[1].name", message: "location header name must be non-empty string" },
      { path: "spec.jwtRules[0].fromParams", message: "location query must be non-empty string" },
      { path: "spec.jwtRules[0].fromCookies", message: "cookie name must be non-empty string" },
    ],
  );
});

test("outputClaimToHeaders: non-null, claim and header set, strict header name", () => {
  assert.deepEqual(
    errorsOf({
      issuer: "i",
      outputClaimToHeaders: [null, { claim: "", header: "h" }, { claim: "c", header: ":authority" }],
    }),
    [
      { path: "spec.jwtRules[0].outputClaimToHeaders[0]", message: "outputClaimToHeaders must not be null" },
      {
        path: "spec.jwtRules[0].outputClaimToHeaders[1]",
        message: "outputClaimToHeaders header and claim value must be non-empty string",
      },
      {
        path: "spec.jwtRules[0].outputClaimToHeaders[2].header",
        message: "header name :authority is not a valid header name",
      },
    ],
  );
});

test("timeout: Go duration, at least 1ms, ms precision", () => {
  assert.deepEqual(errorsOf({ issuer: "i", timeout: "apple" }), [
    { path: "spec.jwtRules[0].timeout", message: `bad Duration: time: invalid duration "apple"` },
  ]);
  assert.deepEqual(errorsOf({ issuer: "i", timeout: "1.5ms" }), [
    { path: "spec.jwtRules[0].timeout", message: "only durations to ms precision are supported" },
  ]);
});

test("presence must be a known enum name", () => {
  assert.deepEqual(errorsOf({ issuer: "i", presence: "MANDATORY" }), [
    {
      path: "spec.jwtRules[0].presence",
      message: `unknown value "\\"MANDATORY\\"" for enum istio.security.v1beta1.JWTRule.Presence`,
    },
  ]);
});
