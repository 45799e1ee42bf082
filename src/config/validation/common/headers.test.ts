import assert from "node:assert/strict";
import { test } from "node:test";
import {
  corsHeaderNameError,
  headerOperationNameError,
  headerValueError,
  isJwtClaimHeader,
  matchHeaderNameError,
  probeHeaderNameError,
  requestHeaderSetNameError,
  strictHeaderNameError,
} from "./headers.ts";

test("header names: strict, probe (no underscore) and CORS tokens", () => {
  assert.equal(strictHeaderNameError("x-foo_bar"), undefined);
  assert.equal(strictHeaderNameError(""), "header name cannot be empty");
  assert.equal(strictHeaderNameError("x.foo"), "header name x.foo is not a valid header name");
  assert.equal(probeHeaderNameError("x_foo"), "header name x_foo is not a valid header name");
  assert.equal(corsHeaderNameError("*"), undefined);
  assert.equal(corsHeaderNameError("x.foo~"), undefined);
  assert.equal(corsHeaderNameError("x foo"), "header name x foo is not a valid header name");
});

test("match header keys: JWT claims, pseudo-headers or tokens", () => {
  assert.ok(isJwtClaimHeader("@request.auth.claims.sub"));
  assert.ok(isJwtClaimHeader("@Request.Auth.Claims[a][b]"));
  assert.ok(!isJwtClaimHeader("@request.auth.claims."));
  assert.ok(!isJwtClaimHeader("@request.auth.claims[]"));
  assert.equal(matchHeaderNameError(":path"), undefined);
  assert.equal(matchHeaderNameError(":foo"), "header name :foo is not a valid header name");
  assert.equal(matchHeaderNameError("@request.auth.claims.groups"), undefined);
});

test("header operation names: authority may be set, Host and pseudo-headers not removed", () => {
  assert.equal(requestHeaderSetNameError(":authority"), undefined);
  assert.equal(requestHeaderSetNameError("Host"), undefined);
  assert.equal(requestHeaderSetNameError(":path"), 'invalid header ":path": header cannot have ":" prefix');
  assert.equal(headerOperationNameError("HOST"), 'invalid header "HOST": cannot set Host header');
  assert.equal(headerOperationNameError(":status"), 'invalid header ":status": header cannot have ":" prefix');
  assert.equal(headerOperationNameError(""), "header name cannot be empty");
});

test("header values: control characters and Envoy's %VARIABLE% syntax", () => {
  for (const ok of [
    "foo",
    "%HOSTNAME%",
    "100%%",
    "prefix %HOSTNAME% suffix",
    "%REQ(x-foo)%",
    '%FOO(["a", "b"])%',
    "tab\there",
  ]) {
    assert.equal(headerValueError(ok), undefined, ok);
  }
  assert.equal(headerValueError("a\nb"), "header value configuration a\nb is invalid");
  const prefix = "header value configuration: invalid header configuration.";
  assert.equal(headerValueError("abc%123"), `${prefix} Un-terminated variable expression 'abc%123'`);
  assert.equal(headerValueError("%START_TIME%%"), `${prefix} Un-escaped %`);
  assert.equal(headerValueError('%FOO(["a" x])%'), `${prefix} Expecting ',', ']', or whitespace`);
  assert.equal(headerValueError("%FOO([x])%"), `${prefix} Expecting '"'`);
  assert.equal(headerValueError('%FOO(["a"] x)%'), `${prefix} Expecting ')' or whitespace after '{}', but found '{}'`);
  assert.equal(headerValueError("%FOO(a) x%"), `${prefix} Expecting '%' or whitespace after`);
  assert.equal(headerValueError('%FOO(["a\\'), `${prefix} Un-terminated backslash in JSON string`);
});
