// The HTTP adapter over real sockets: plain HTTP, and HTTPS with a verified client certificate.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, get, type IncomingMessage, type Server } from "node:http";
import { createServer as createHttpsServer, request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import fastify from "fastify";
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from "jose";
import { TestCerts } from "../../../test/support/certs.ts";
import { type AuthContext, authenticate } from "./authenticator.ts";
import { ClientCertAuthenticator } from "./client-cert.ts";
import { httpAuthContext } from "./http.ts";
import { JwtAuthenticator } from "./jwt.ts";
import { XfccAuthenticator } from "./xfcc.ts";

const certs = new TestCerts();
/** Another CA, which the server does not trust. */
const foreign = new TestCerts();
const seen: AuthContext[] = [];
let plain: Server;
let secure: Server;

function record(req: IncomingMessage, res: { end(): void }): void {
  seen.push(httpAuthContext(req));
  res.end();
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

before(() => {
  certs.issue("server", "DNS:localhost,IP:127.0.0.1");
  certs.issue("client", "URI:spiffe://cluster.local/ns/default/sa/app");
  foreign.issue("client", "URI:spiffe://cluster.local/ns/istio-system/sa/admin");
});

after(async () => {
  plain?.close();
  secure?.close();
  certs.remove();
  foreign.remove();
});

test("plain HTTP: headers and the peer address, no certificate", async () => {
  seen.length = 0;
  plain = createHttpServer(record);
  const port = await listen(plain);
  await new Promise<void>((resolve) =>
    get({ host: "127.0.0.1", port, path: "/", headers: { Authorization: "Istio t" } }, (res) => {
      res.resume();
      res.on("end", resolve);
    }),
  );
  const [ctx] = seen;
  assert.equal(ctx.transport, "http");
  assert.equal(ctx.header("authorization"), "Istio t");
  assert.match(ctx.remoteAddress, /^127\.0\.0\.1:\d+$/);
  assert.equal(ctx.verifiedPeerCertificate, undefined);
});

test("HTTPS: only a verified client certificate reaches the client certificate authenticator", async () => {
  seen.length = 0;
  secure = createHttpsServer(
    {
      key: readFileSync(certs.file("server.key")),
      cert: readFileSync(certs.file("server.crt")),
      ca: readFileSync(certs.file("ca.crt")),
      requestCert: true,
      rejectUnauthorized: false,
    },
    record,
  );
  const port = await listen(secure);
  const call = (client?: TestCerts) =>
    new Promise<void>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: "127.0.0.1",
          port,
          path: "/",
          ca: readFileSync(certs.file("ca.crt")),
          ...(client
            ? { key: readFileSync(client.file("client.key")), cert: readFileSync(client.file("client.crt")) }
            : {}),
          agent: false,
        },
        (res) => {
          res.resume();
          res.on("end", resolve);
        },
      );
      req.on("error", reject);
      req.end();
    });
  await call(certs);
  await call();
  await call(foreign);
  const chain = [new ClientCertAuthenticator()];
  assert.deepEqual(await authenticate(chain, seen[0]), {
    identities: ["spiffe://cluster.local/ns/default/sa/app"],
    authenticator: "ClientCertAuthenticator",
  });
  // No certificate, or one the server's roots do not verify: nothing to read identities from.
  for (const ctx of seen.slice(1)) {
    assert.equal(ctx.verifiedPeerCertificate, undefined);
    assert.ok((await authenticate(chain, ctx)) instanceof Error);
  }
  assert.equal(seen.length, 3);
});

test("a fastify route behind the chain: a JWT in Istio's HTTP form, XFCC from loopback, else an empty 401", async () => {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: "k", alg: "RS256" }] });
  const chain = [
    new ClientCertAuthenticator(),
    new JwtAuthenticator({ issuer: "iss", keys, algorithms: ["RS256"], audiences: ["istio-ca"], trustDomain: "td" }),
    new XfccAuthenticator([]),
  ];
  const app = fastify();
  app.get("/debug/syncz", async (req, reply) => {
    const caller = await authenticate(chain, httpAuthContext(req.raw));
    if (caller instanceof Error) return reply.code(401).send();
    return caller;
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  try {
    const jwt = await new SignJWT({ aud: ["istio-ca"] })
      .setProtectedHeader({ alg: "RS256", kid: "k" })
      .setIssuer("iss")
      .setSubject("system:serviceaccount:istio-system:istioctl")
      .setExpirationTime("10m")
      .sign(privateKey);
    const get = (headers: Record<string, string>) => fetch(`http://127.0.0.1:${port}/debug/syncz`, { headers });
    const withJwt = await get({ authorization: `Istio ${jwt}` });
    assert.deepEqual(await withJwt.json(), {
      identities: ["spiffe://td/ns/istio-system/sa/istioctl"],
      authenticator: "IDTokenAuthenticator",
    });
    const withXfcc = await get({ "x-forwarded-client-cert": "URI=spiffe://td/ns/a/sa/b" });
    assert.deepEqual(await withXfcc.json(), {
      identities: ["spiffe://td/ns/a/sa/b"],
      authenticator: "XfccAuthenticator",
    });
    const refused = await get({ authorization: "Istio not-a-jwt" });
    assert.equal(refused.status, 401);
    assert.equal(await refused.text(), "");
  } finally {
    await app.close();
  }
});
