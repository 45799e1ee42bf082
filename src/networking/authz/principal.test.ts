import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toJson } from "@bufbuild/protobuf";
import { rbac } from "../../api/index.ts";
import { type GenerateContext, NotGenerated, type PrincipalGenerator } from "./generator.ts";
import * as principal from "./principal.ts";

const HTTP: GenerateContext = { forTcp: false, useAuthenticated: true };
const TCP: GenerateContext = { forTcp: true, useAuthenticated: true };

function one(generator: PrincipalGenerator, key: string, values: string[], ctx = HTTP): unknown {
  const generated = "each" in generator ? generator.each(key, values[0], ctx) : generator.all(key, values, ctx);
  return generated instanceof NotGenerated ? generated : toJson(rbac.PrincipalSchema, generated);
}

const authenticated = (principalName: unknown) => ({ authenticated: { principalName } });

describe("authz principals", () => {
  it("principals are matched in the authenticated form, with the spiffe:// scheme added", () => {
    assert.deepEqual(
      one(principal.sourcePrincipal, "source.principal", ["td/ns/foo/sa/bar"]),
      authenticated({ exact: "spiffe://td/ns/foo/sa/bar" }),
    );
  });

  it("principals are matched through the peer filter state when asked", () => {
    const ctx = { forTcp: false, useAuthenticated: false };
    assert.deepEqual(one(principal.sourcePrincipal, "source.principal", ["a*"], ctx), {
      filterState: { key: "io.istio.peer_principal", stringMatch: { prefix: "spiffe://a" } },
    });
  });

  it("namespaces match the /ns/<namespace>/ segment, * spanning any text", () => {
    assert.deepEqual(
      one(principal.sourceNamespace, "source.namespace", ["team-*.x"]),
      authenticated({ safeRegex: { regex: ".*/ns/team-.*\\.x/.*" } }),
    );
  });

  it("service accounts default to the policy's namespace", () => {
    const generator = principal.sourceServiceAccount("foo");
    assert.deepEqual(
      one(generator, "source.serviceAccount", ["sa"]),
      authenticated({ safeRegex: { regex: "spiffe://.+/ns/foo/(.+/|)sa/sa(/.+)?" } }),
    );
    assert.deepEqual(
      one(generator, "source.serviceAccount", ["other/sa"]),
      authenticated({ safeRegex: { regex: "spiffe://.+/ns/other/(.+/|)sa/sa(/.+)?" } }),
    );
  });

  it("trust domains match the start of the identity; one * spans one label's text", () => {
    assert.deepEqual(
      one(principal.sourceTrustDomain, "source.trustDomain", ["td"]),
      authenticated({ prefix: "spiffe://td/" }),
    );
    assert.deepEqual(
      one(principal.sourceTrustDomain, "source.trustDomain", ["*"]),
      authenticated({ prefix: "spiffe://" }),
    );
    assert.deepEqual(
      one(principal.sourceTrustDomain, "source.trustDomain", ["*.td"]),
      authenticated({ safeRegex: { regex: "spiffe://[^/]*\\.td/.*" } }),
    );
  });

  it("request principals split issuer and subject at the last slash", () => {
    const claim = (name: string, stringMatch: unknown) => ({
      metadata: {
        filter: "envoy.filters.http.jwt_authn",
        path: [{ key: "payload" }, { key: name }],
        value: { stringMatch },
      },
    });
    assert.deepEqual(one(principal.requestPrincipal, "request.auth.principal", ["https://issuer/path/sub"]), {
      andIds: { ids: [claim("iss", { exact: "https://issuer/path" }), claim("sub", { exact: "sub" })] },
    });
    assert.deepEqual(one(principal.requestPrincipal, "request.auth.principal", ["iss/*"]), {
      andIds: { ids: [claim("iss", { exact: "iss" }), claim("sub", { safeRegex: { regex: ".+" } })] },
    });
  });

  it("nested claims become a metadata path", () => {
    const got = one(principal.requestClaims, "request.auth.claims[a][b]", ["x"]) as { metadata: { path: unknown } };
    assert.deepEqual(got.metadata.path, [{ key: "payload" }, { key: "a" }, { key: "b" }]);
  });

  it("request attributes are HTTP only", () => {
    assert.ok(one(principal.requestHeader, "request.headers[x]", ["v"], TCP) instanceof NotGenerated);
    assert.ok(one(principal.requestPrincipal, "request.auth.principal", ["a/b"], TCP) instanceof NotGenerated);
    assert.ok(one(principal.requestAudiences, "request.auth.audiences", ["a"], TCP) instanceof NotGenerated);
    assert.deepEqual(one(principal.sourceIp, "source.ip", ["1.2.3.4"], TCP), {
      directRemoteIp: { addressPrefix: "1.2.3.4", prefixLen: 32 },
    });
  });

  it("a header key needs its name in brackets", () => {
    assert.ok(one(principal.requestHeader, "request.headers.x", ["v"]) instanceof NotGenerated);
    assert.deepEqual(one(principal.requestHeader, "request.headers[X-A]", ["v*"]), {
      header: { name: "X-A", stringMatch: { prefix: "v" } },
    });
  });
});
