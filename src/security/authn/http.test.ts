// The HTTP adapter over real sockets: plain HTTP, and HTTPS with a verified client certificate.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, get, type IncomingMessage, type Server } from "node:http";
import { createServer as createHttpsServer, request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { TestCerts } from "../../../test/xds/certs.ts";
import { type AuthContext, authenticate } from "./authenticator.ts";
import { ClientCertAuthenticator } from "./client-cert.ts";
import { httpAuthContext } from "./http.ts";

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
