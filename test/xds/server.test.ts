// The server around the protocol: readiness, generator plugins served over ADS, the TLS port with
// client-certificate authentication and Istio's identity check, and shutdown.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { credentials, status } from "@grpc/grpc-js";
import { ClientCertAuthenticator, loadGeneratorPlugins, TypeUrl, XdsServer } from "../../src/xds/index.ts";
import { DeltaClient, SotwClient, sidecarNode } from "../support/ads-client.ts";
import { TestCerts } from "../support/certs.ts";
import { CUSTOM_TYPE } from "../support/custom-type-plugin.ts";
import { assertNoResponse, edsCluster, startServer, testGenerators } from "../support/xds-fixtures.ts";

const snapshot = { [TypeUrl.Cluster]: [edsCluster("a")] };

test("before the first push context the server answers Unavailable, as istiod before its caches sync", async () => {
  const server = new XdsServer({ generators: testGenerators() });
  const { grpcPort } = await server.listen({ grpcAddr: "127.0.0.1:0" });
  const c = SotwClient.connect(`127.0.0.1:${grpcPort}`);
  c.request({ node: sidecarNode(), typeUrl: TypeUrl.Cluster });
  const end = await c.ended;
  assert.equal(end.code, status.UNAVAILABLE);
  assert.equal(end.details, "server is not ready to serve discovery information");
  c.close();
  await server.close(0);
});

test("a generator plugin loaded from a file serves its custom type URL over SotW and delta", async () => {
  const generators = testGenerators();
  await loadGeneratorPlugins(["test/support/custom-type-plugin.ts"], generators);
  const h = await startServer(snapshot, { generators });
  const c = SotwClient.connect(h.address);
  c.request({ node: sidecarNode("plug"), typeUrl: CUSTOM_TYPE });
  const res = await c.next();
  assert.equal(res.typeUrl, CUSTOM_TYPE);
  assert.equal(res.resources.length, 1);
  assert.equal(res.resources[0].typeUrl, CUSTOM_TYPE);
  assert.equal(new TextDecoder().decode(res.resources[0].value), "hello plug.default");

  const d = DeltaClient.connect(h.address);
  d.request({ node: sidecarNode("plug-delta"), typeUrl: CUSTOM_TYPE });
  const dres = await d.next();
  assert.deepEqual(
    dres.resources.map((r) => r.name),
    ["greeting/plug-delta.default"],
  );
  c.close();
  d.close();
  await h.close();
});

test("proxyNeedsPush keeps a push from proxies it does not concern", async () => {
  const asked: string[] = [];
  const proxyNeedsPush = (proxy: { configNamespace: string }) => {
    asked.push(proxy.configNamespace);
    return proxy.configNamespace !== "quiet";
  };
  const h = await startServer(snapshot, { proxyNeedsPush });
  const quiet = SotwClient.connect(h.address);
  const busy = SotwClient.connect(h.address);
  quiet.request({ node: sidecarNode("q", "quiet"), typeUrl: TypeUrl.Cluster });
  busy.request({ node: sidecarNode("b", "busy"), typeUrl: TypeUrl.Cluster });
  quiet.ack(await quiet.next());
  busy.ack(await busy.next());
  const next = await h.push({ [TypeUrl.Cluster]: [edsCluster("a"), edsCluster("new")] });
  assert.equal((await busy.next()).resources.length, 2);
  await assertNoResponse(quiet);
  // The skipped proxy is asked once, when the push starts, and never queued; the other is asked
  // again when its turn comes, with whatever merged into its request meanwhile.
  assert.deepEqual(asked.sort(), ["busy", "busy", "quiet"]);
  // A later request of the skipped proxy is answered from the new push context.
  quiet.request({ typeUrl: TypeUrl.Endpoint, resourceNames: ["x"] });
  const eds = await quiet.next();
  assert.equal(eds.versionInfo, next.version);
  quiet.close();
  busy.close();
  await h.close();
});

test("a push reaches every one of many proxies through a narrow push queue", async () => {
  const h = await startServer(snapshot, { pushConcurrency: 3 });
  const clients = Array.from({ length: 40 }, (_, i) => {
    const c = SotwClient.connect(h.address);
    c.request({ node: sidecarNode(`many-${i}`), typeUrl: TypeUrl.Cluster });
    return c;
  });
  for (const c of clients) c.ack(await c.next());
  const next = await h.push({ [TypeUrl.Cluster]: [edsCluster("a"), edsCluster("b")] });
  const updates = await Promise.all(clients.map((c) => c.next()));
  assert.ok(updates.every((u) => u.versionInfo === next.version && u.resources.length === 2));
  for (const c of clients) c.close();
  await h.close();
});

test("close() ends open streams and stops accepting", async () => {
  const h = await startServer(snapshot);
  const c = SotwClient.connect(h.address);
  c.request({ node: sidecarNode("bye"), typeUrl: TypeUrl.Cluster });
  await c.next();
  await h.close();
  const end = await c.ended;
  assert.equal(end.code, status.OK);
  assert.deepEqual(h.server.syncStatus(), []);
  c.close();
  const late = SotwClient.connect(h.address);
  late.request({ node: sidecarNode("late"), typeUrl: TypeUrl.Cluster });
  assert.equal((await late.ended).code, status.UNAVAILABLE);
  late.close();
});

// --- TLS (15012): certificates made with the openssl CLI for the test.

let certs: TestCerts;
const file = (name: string) => certs.file(name);

let secure: XdsServer;
let secureAddress: string;

before(async () => {
  certs = new TestCerts();
  certs.issue("istiod", "DNS:localhost,IP:127.0.0.1");
  certs.issue("app", "URI:spiffe://cluster.local/ns/default/sa/app");
  certs.issue("intruder", "URI:spiffe://cluster.local/ns/other/sa/intruder");

  const h = await startServer(snapshot);
  await h.close();
  secure = new XdsServer({
    generators: testGenerators(),
    initialPush: h.server.pushContext,
    authenticators: [new ClientCertAuthenticator()],
  });
  const { securePort } = await secure.listen({
    secureGrpcAddr: "127.0.0.1:0",
    tls: { certFile: file("istiod.crt"), keyFile: file("istiod.key"), caFile: file("ca.crt") },
  });
  secureAddress = `127.0.0.1:${securePort}`;
});

after(async () => {
  await secure?.close(0);
  certs?.remove();
});

function tlsClient(cert?: string): SotwClient {
  const ca = readFileSync(file("ca.crt"));
  const creds = cert
    ? credentials.createSsl(ca, readFileSync(file(`${cert}.key`)), readFileSync(file(`${cert}.crt`)))
    : credentials.createSsl(ca);
  return SotwClient.connect(secureAddress, creds);
}

test("secure port: a client certificate with the proxy's SPIFFE id is served and recorded as its identity", async () => {
  const c = tlsClient("app");
  c.request({ node: sidecarNode("app-1", "default", { SERVICE_ACCOUNT: "app" }), typeUrl: TypeUrl.Cluster });
  const res = await c.next();
  assert.equal(res.resources.length, 1);
  const conn = secure.syncStatus().find((s) => s.proxy.id === "app-1.default");
  assert.deepEqual(conn?.identities, ["spiffe://cluster.local/ns/default/sa/app"]);
  assert.deepEqual(conn?.proxy.verifiedIdentities, ["spiffe://cluster.local/ns/default/sa/app"]);
  c.close();
});

test("secure port: no client certificate means Unauthenticated", async () => {
  const c = tlsClient();
  c.request({ node: sidecarNode("anon"), typeUrl: TypeUrl.Cluster });
  const end = await c.ended;
  assert.equal(end.code, status.UNAUTHENTICATED);
  // The reasons are logged, never sent.
  assert.equal(end.details, "authentication failure");
  c.close();
});

test("secure port: an identity from another namespace is PermissionDenied (Istio's identity check)", async () => {
  const c = tlsClient("intruder");
  c.request({ node: sidecarNode("app-1", "default"), typeUrl: TypeUrl.Cluster });
  const end = await c.ended;
  assert.equal(end.code, status.PERMISSION_DENIED);
  assert.match(end.details, /no identities \(spiffe:\/\/cluster.local\/ns\/other\/sa\/intruder\) matched default\//);
  c.close();
});

test("secure port: a plaintext client is refused (15012 is TLS only)", async () => {
  const c = SotwClient.connect(secureAddress, credentials.createInsecure());
  c.request({ node: sidecarNode("app-1", "default"), typeUrl: TypeUrl.Cluster });
  const end = await c.ended;
  assert.equal(end.code, status.UNAVAILABLE);
  c.close();
});
