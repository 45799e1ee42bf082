import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, fromBinary, toJson } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { core, extAuthz, matcher } from "../../api/index.ts";
import { checkMessage } from "../../api/pgv/index.ts";
import { resolveExtAuthzProviders } from "./extauthz.ts";

const services = [{ hostname: "authz.foo.svc.cluster.local", namespace: "foo" }];

function problemsOf(provider: Parameters<typeof resolveExtAuthzProviders>[0][number]): string[] {
  return resolveExtAuthzProviders([provider], services).get(provider.name ?? "")?.problems ?? [];
}

describe("authz ext_authz providers", () => {
  it("a gRPC provider gets Istio's defaults: 600s timeout, the outbound cluster, the provider's shadow-result matcher", () => {
    const resolved = resolveExtAuthzProviders(
      [{ name: "p", envoyExtAuthzGrpc: { service: "authz.foo.svc.cluster.local", port: 9000 } }],
      services,
    ).get("p");
    assert.ok(resolved?.http);
    assert.deepEqual(toJson(extAuthz.ExtAuthzSchema, resolved.http), {
      grpcService: {
        envoyGrpc: {
          clusterName: "outbound|9000||authz.foo.svc.cluster.local",
          authority: "authz.foo.svc.cluster.local",
        },
        timeout: "600s",
      },
      transportApiVersion: "V3",
      filterEnabledMetadata: {
        filter: "envoy.filters.http.rbac",
        path: [{ key: "istio_ext_authz_shadow_effective_policy_id" }],
        value: { stringMatch: { prefix: "istio-ext-authz-p" } },
      },
    });
    assert.deepEqual(checkMessage(extAuthz.ExtAuthzSchema, resolved.http), []);
  });

  it("a gRPC provider also has a network ext_authz config", () => {
    const resolved = resolveExtAuthzProviders(
      [{ name: "p", envoyExtAuthzGrpc: { service: "foo/authz.foo.svc.cluster.local", port: 9000, failOpen: true } }],
      services,
    ).get("p");
    assert.equal(resolved?.tcp?.typeUrl, "type.googleapis.com/envoy.extensions.filters.network.ext_authz.v3.ExtAuthz");
    const fields = new Map<number, unknown>();
    const reader = new BinaryReader(resolved.tcp.value);
    while (reader.pos < reader.len) {
      const [field] = reader.tag();
      fields.set(field, field === 1 ? reader.string() : field === 2 || field === 6 ? reader.bytes() : reader.int32());
    }
    assert.equal(fields.get(1), "tcp.");
    assert.equal(fields.get(3), 1);
    assert.equal(fields.get(5), core.ApiVersion.V3);
    const grpc = fromBinary(core.GrpcServiceSchema, fields.get(2) as Uint8Array);
    assert.equal(
      grpc.targetSpecifier.case === "envoyGrpc" && grpc.targetSpecifier.value.clusterName,
      "outbound|9000||authz.foo.svc.cluster.local",
    );
    const enabled = fromBinary(matcher.MetadataMatcherSchema, fields.get(6) as Uint8Array);
    assert.equal(enabled.filter, "envoy.filters.network.rbac");
  });

  it("an HTTP provider has no network config and reads includeHeadersInCheck only without includeRequestHeadersInCheck", () => {
    const resolved = resolveExtAuthzProviders(
      [
        {
          name: "h",
          envoyExtAuthzHttp: { service: "authz.foo.svc.cluster.local", port: 80, includeHeadersInCheck: ["x-a"] },
        },
      ],
      services,
    ).get("h");
    assert.ok(resolved?.http);
    assert.equal(resolved.tcp, undefined);
    assert.deepEqual(toJson(matcher.ListStringMatcherSchema, resolved.http.allowedHeaders!), {
      patterns: [{ exact: "x-a", ignoreCase: true }],
    });
    assert.deepEqual(checkMessage(extAuthz.ExtAuthzSchema, resolved.http), []);
  });

  it("a provider with a bad port, unknown service, unknown status, relative path prefix or * header is unusable", () => {
    const problems = problemsOf({
      name: "bad",
      envoyExtAuthzHttp: {
        service: "foo/nowhere",
        port: 999999,
        statusOnError: "999",
        pathPrefix: "check",
        headersToUpstreamOnAllow: ["*"],
      },
    });
    assert.equal(problems.length, 5, problems.join("\n"));
  });

  it("a hostname registered in several namespaces needs its namespace", () => {
    const twice = [...services, { hostname: "authz.foo.svc.cluster.local", namespace: "bar" }];
    const resolved = resolveExtAuthzProviders(
      [{ name: "p", envoyExtAuthzGrpc: { service: "authz.foo.svc.cluster.local", port: 1 } }],
      twice,
    );
    assert.match(resolved.get("p")?.problems?.[0] ?? "", /multiple namespaces/);
  });

  it("provider names must be unique lowercase DNS labels", () => {
    const grpc = { service: "authz.foo.svc.cluster.local", port: 9000 };
    assert.ok(problemsOf({ name: "Upper", envoyExtAuthzGrpc: grpc }).length > 0);
    assert.ok(problemsOf({ name: "-p", envoyExtAuthzGrpc: grpc }).length > 0);
    const twice = resolveExtAuthzProviders(
      [
        { name: "p", envoyExtAuthzGrpc: grpc },
        { name: "p", envoyExtAuthzGrpc: grpc },
      ],
      services,
    );
    assert.match(twice.get("p")?.problems?.[0] ?? "", /unique/);
  });

  it("reads the timeout as a Go duration", () => {
    const resolved = resolveExtAuthzProviders(
      [{ name: "p", envoyExtAuthzGrpc: { service: "authz.foo.svc.cluster.local", port: 9000, timeout: "1m0.5s" } }],
      services,
    ).get("p");
    assert.ok(resolved?.http?.services.case === "grpcService");
    assert.deepEqual(
      resolved.http.services.value.timeout,
      create(DurationSchema, { seconds: 60n, nanos: 500_000_000 }),
    );
    assert.match(
      problemsOf({
        name: "p",
        envoyExtAuthzGrpc: { service: "authz.foo.svc.cluster.local", port: 1, timeout: "soon" },
      })[0],
      /timeout/,
    );
  });

  it("ignores extension providers that are not ext_authz", () => {
    assert.equal(resolveExtAuthzProviders([{ name: "prometheus", prometheus: {} }], services).size, 0);
  });
});
