import assert from "node:assert/strict";
import { test } from "node:test";
import { pino } from "pino";
import {
  type AuthContext,
  AuthenticationFailure,
  type Authenticator,
  authenticate,
  bearerToken,
} from "./authenticator.ts";
import { ClientCertAuthenticator, subjectAltNames } from "./client-cert.ts";
import { parseSpiffeId } from "./spiffe.ts";

function context(headers: Record<string, string> = {}, transport: "grpc" | "http" = "grpc"): AuthContext {
  return { transport, header: (name) => headers[name], remoteAddress: "127.0.0.1:1" };
}

test("the chain: the first authenticator with identities wins, in order", async () => {
  const calls: string[] = [];
  const named = (name: string, result: string[] | Error): Authenticator => ({
    name,
    authenticate: async () => {
      calls.push(name);
      return result instanceof Error ? result : { identities: result, authenticator: name };
    },
  });
  const chain = [named("A", new Error("nope")), named("B", []), named("C", ["c"]), named("D", ["d"])];
  assert.deepEqual(await authenticate(chain, context()), { identities: ["c"], authenticator: "C" });
  assert.deepEqual(calls, ["A", "B", "C"]);
});

test("all failing: a bare 'authentication failure', the reasons kept apart for the log", async () => {
  const failing: Authenticator = { name: "A", authenticate: () => new Error("nope") };
  const empty: Authenticator = { name: "B", authenticate: () => ({ identities: [], authenticator: "B" }) };
  const throwing: Authenticator = {
    name: "T",
    authenticate: () => {
      throw new TypeError("secret-token-value in a message");
    },
  };
  const lines: string[] = [];
  const log = pino({ level: "debug" }, { write: (line: string) => lines.push(line) });
  const err = await authenticate([failing, empty, throwing], context(), log);
  assert.ok(err instanceof AuthenticationFailure);
  assert.equal(err.message, "authentication failure");
  assert.deepEqual(err.reasons, ["A: nope", "B: no identities", "T: failed unexpectedly (TypeError)"]);
  assert.equal(lines.length, 1);
  assert.match(lines[0], /"reasons":\["A: nope"/);
  assert.doesNotMatch(lines[0], /secret-token-value/);
  assert.ok((await authenticate([], context())) instanceof AuthenticationFailure);
});

test("bearer tokens: gRPC takes 'Bearer', HTTP also Istio's 'Istio' form", () => {
  assert.equal(bearerToken(context({ authorization: "Bearer abc" })), "abc");
  assert.equal(bearerToken(context({ authorization: "Istio abc" }, "http")), "abc");
  const grpcIstio = bearerToken(context({ authorization: "Istio abc" }));
  assert.ok(grpcIstio instanceof Error);
  assert.equal(grpcIstio.message, "no bearer token exists in HTTP authorization header");
  const none = bearerToken(context());
  assert.ok(none instanceof Error);
  assert.equal(none.message, "no HTTP authorization header exists");
  assert.ok(bearerToken(context({ authorization: "bearer abc" })) instanceof Error);
});

test("subjectAltName text as Node writes it, quoted values included", () => {
  assert.deepEqual(subjectAltNames("URI:spiffe://td/ns/a/sa/b, DNS:x.example, IP Address:10.0.0.1"), [
    ["URI", "spiffe://td/ns/a/sa/b"],
    ["DNS", "x.example"],
    ["IP Address", "10.0.0.1"],
  ]);
  assert.deepEqual(subjectAltNames('URI:"spiffe://td/ns/a,b/sa/c", DNS:y'), [
    ["URI", "spiffe://td/ns/a,b/sa/c"],
    ["DNS", "y"],
  ]);
  assert.deepEqual(subjectAltNames(""), []);
});

test("SPIFFE ids", () => {
  assert.deepEqual(parseSpiffeId("spiffe://cluster.local/ns/default/sa/app"), {
    trustDomain: "cluster.local",
    namespace: "default",
    serviceAccount: "app",
  });
  assert.equal(parseSpiffeId("spiffe://cluster.local/ns/default"), undefined);
});

test("the client certificate authenticator needs a verified certificate", () => {
  const result = new ClientCertAuthenticator().authenticate(context());
  assert.ok(result instanceof Error);
  assert.equal(result.message, "no verified client certificate");
});
