import assert from "node:assert/strict";
import { test } from "node:test";
import { collect } from "../../../../test/support/validation.ts";
import { CLIENT_TLS_MODE, readEnum } from "./enums.ts";

test("enums decode by name or number; absent is the zero value", () => {
  collect((out) => {
    assert.equal(readEnum("MUTUAL", CLIENT_TLS_MODE, out), "MUTUAL");
    assert.equal(readEnum(3, CLIENT_TLS_MODE, out), "ISTIO_MUTUAL");
    assert.equal(readEnum(9, CLIENT_TLS_MODE, out), "9");
    assert.equal(readEnum(undefined, CLIENT_TLS_MODE, out), "DISABLE");
    assert.ok(out.ok);
  });
});

test("enums: an unknown name is the decoder's error", () => {
  const r = collect((out) => assert.equal(readEnum("BLAH", CLIENT_TLS_MODE, out.at("mode")), undefined));
  assert.deepEqual(r.errors, [
    {
      path: "spec.mode",
      message: 'unknown value "\\"BLAH\\"" for enum istio.networking.v1alpha3.ClientTLSSettings.TLSmode',
    },
  ]);
});
