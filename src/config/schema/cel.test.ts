import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { compileRule, toCelValue } from "./cel.ts";
import type { GeneratedSchemas, Schema } from "./types.ts";

function run(rule: string, self: unknown): unknown {
  const result = compileRule(rule)(self);
  return "error" in result ? `error: ${result.error}` : result.value;
}

function* rulesOf(schema: Schema): Generator<string> {
  for (const rule of schema["x-kubernetes-validations"] ?? []) yield rule.rule;
  for (const sub of Object.values(schema.properties ?? {})) yield* rulesOf(sub);
  if (schema.items) yield* rulesOf(schema.items);
  if (typeof schema.additionalProperties === "object") yield* rulesOf(schema.additionalProperties);
}

describe("CEL rules", () => {
  it("compiles every rule of every generated schema", () => {
    const dir = new URL("./generated/", import.meta.url);
    let count = 0;
    for (const file of readdirSync(dir)) {
      const generated = JSON.parse(readFileSync(new URL(file, dir), "utf8")) as GeneratedSchemas;
      for (const schema of generated.schemas) {
        for (const rule of rulesOf(schema)) {
          assert.doesNotThrow(() => compileRule(rule), `${file}: ${rule}`);
          count++;
        }
      }
    }
    assert.ok(count > 300, `only ${count} rules found`);
  });

  it("implements the Kubernetes URL functions as Go's ParseRequestURI", () => {
    const wasmRule = 'isURL(self) ? (url(self).getScheme() in ["", "http", "https", "file", "oci"]) : false';
    assert.equal(run(wasmRule, "oci://registry.io/plugin:v1"), true);
    assert.equal(run(wasmRule, "HTTPS://example.com/x"), true, "schemes are case-insensitive");
    assert.equal(run(wasmRule, "ftp://example.com/x"), false);
    assert.equal(run("isURL(self)", "example.com/plugin"), false, "not absolute");
    assert.equal(run("isURL(self)", "/just/a/path"), true);
    assert.equal(run("isURL(self)", "http://#%blah$#@"), false, "bad userinfo");
    assert.equal(run("isURL(self)", "http://host:port/"), false, "non-numeric port");
    assert.match(String(run("url(self).getScheme()", "hTPp\\lah")), /^error: /);
  });

  it("converts strings to int as Go does, with cel-go's error", () => {
    assert.equal(run("int(self)", "+80"), 80n);
    assert.equal(run("int(self)", "acd"), "error: type conversion error from 'string' to 'int'");
    assert.equal(run("int(self)", "9223372036854775808"), "error: type conversion error from 'string' to 'int'");
  });

  it("implements isIP without zones", () => {
    assert.equal(run("isIP(self)", "10.0.0.1"), true);
    assert.equal(run("isIP(self)", "2001:db8::1"), true);
    assert.equal(run("isIP(self)", "fe80::1%eth0"), false);
    assert.equal(run("isIP(self)", "example.com"), false);
  });

  it("has the string extension and duration functions the CRDs use", () => {
    assert.equal(run('self.split("/")[0].size() < 253', "example.com/key"), true);
    assert.equal(run("self.substring(7, 8) == '/'", "unix:///sock"), true);
    assert.equal(run("duration(self) >= duration('1ms')", "500us"), false);
    assert.equal(run("duration(self) >= duration('1ms')", "1h"), true);
    assert.equal(
      run("self.all(l1, self.exists_one(l2, l1.number == l2.number))", [{ number: 1n }, { number: 1n }]),
      false,
    );
  });

  it("converts JSON to CEL values by schema, escaping reserved property names", () => {
    const schema: Schema = {
      type: "object",
      properties: {
        namespace: { type: "string" },
        port: { type: "integer" },
        weight: { type: "number" },
        labels: { type: "object", additionalProperties: { type: "string" } },
      },
    };
    const value = toCelValue(
      { namespace: "a", port: 80, weight: 2, labels: { "app.kubernetes.io/name": "x" } },
      schema,
    );
    assert.deepEqual(value, { __namespace__: "a", port: 80n, weight: 2, labels: { "app.kubernetes.io/name": "x" } });
    assert.equal(run("has(self.__namespace__) && self.port == 80 && self.weight == 2.0", value), true);
  });
});
