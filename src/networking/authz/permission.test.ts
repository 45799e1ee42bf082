import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toJson } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { rbac } from "../../api/index.ts";
import { type GenerateContext, NotGenerated, type PermissionGenerator } from "./generator.ts";
import * as permission from "./permission.ts";

const HTTP: GenerateContext = { forTcp: false, useAuthenticated: true };
const TCP: GenerateContext = { forTcp: true, useAuthenticated: true };

function generate(generator: PermissionGenerator, key: string, values: string[], ctx = HTTP) {
  return "each" in generator ? generator.each(key, values[0], ctx) : generator.all(key, values, ctx);
}

function one(generator: PermissionGenerator, key: string, values: string[], ctx = HTTP): unknown {
  const generated = generate(generator, key, values, ctx);
  return generated instanceof NotGenerated ? generated : toJson(rbac.PermissionSchema, generated);
}

describe("authz permissions", () => {
  it("paths with {*} or {**} become a URI template, others a path match", () => {
    const generated = generate(permission.path, "path-matcher", ["/a/{*}/b/{**}"]);
    assert.ok(!(generated instanceof NotGenerated) && generated.rule.case === "uriTemplate");
    const config = generated.rule.value;
    assert.equal(config.name, "uri-template");
    assert.equal(
      config.typedConfig?.typeUrl,
      "type.googleapis.com/envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig",
    );
    const reader = new BinaryReader(config.typedConfig?.value ?? new Uint8Array());
    assert.deepEqual(reader.tag(), [1, 2]);
    assert.equal(reader.string(), "/a/*/b/**");
    assert.deepEqual(one(permission.path, "path-matcher", ["/a/*"]), { urlPath: { path: { prefix: "/a/" } } });
  });

  it("ports are decimal numbers up to 65535", () => {
    assert.deepEqual(one(permission.destinationPort, "destination.port", ["8080"]), { destinationPort: 8080 });
    for (const bad of ["65536", "-1", "http", "8o"]) {
      assert.ok(one(permission.destinationPort, "destination.port", [bad]) instanceof NotGenerated, bad);
    }
  });

  it("hosts compare without case; methods with case", () => {
    assert.deepEqual(one(permission.host, ":authority", ["Example.com"]), {
      header: { name: ":authority", stringMatch: { exact: "Example.com", ignoreCase: true } },
    });
    assert.deepEqual(one(permission.method, ":method", ["GET"]), {
      header: { name: ":method", stringMatch: { exact: "GET" } },
    });
  });

  it("hosts, methods and paths are HTTP only", () => {
    for (const [generator, key] of [
      [permission.host, ":authority"],
      [permission.method, ":method"],
      [permission.path, "path-matcher"],
    ] as const) {
      assert.ok(one(generator, key, ["x"], TCP) instanceof NotGenerated, key);
    }
    assert.deepEqual(one(permission.connectionSni, "connection.sni", ["*.com"], TCP), {
      requestedServerName: { suffix: ".com" },
    });
  });

  it("experimental envoy filter keys match that filter's metadata; [v] matches a list", () => {
    assert.deepEqual(one(permission.envoyFilterMetadata, "experimental.envoy.filters.a.b[c]", ["x", "[y]"]), {
      metadata: {
        filter: "envoy.filters.a.b",
        path: [{ key: "c" }],
        value: {
          orMatch: {
            valueMatchers: [{ stringMatch: { exact: "x" } }, { listMatch: { oneOf: { stringMatch: { exact: "y" } } } }],
          },
        },
      },
    });
    assert.ok(one(permission.envoyFilterMetadata, "experimental.envoy.filters.a", ["x"]) instanceof NotGenerated);
  });
});
