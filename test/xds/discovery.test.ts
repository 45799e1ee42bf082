// The discovery service end to end on the TLS port, with Istio's default auth: a replica's xDS
// config source authenticated as the control plane gets config (Secrets included), other callers
// are refused, and debug information over xDS goes to authenticated callers only.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { after, before, test } from "node:test";
import { credentials, status } from "@grpc/grpc-js";
import { pino } from "pino";
import { Registry } from "prom-client";
import { csds, unpackAny } from "../../src/api/index.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import type { MeshPush } from "../../src/model/index.ts";
import { storePush, storeRegistry } from "../../src/model/store-push.ts";
import { ConfigStore, MemorySource, XdsSource } from "../../src/sources/index.ts";
import { SLUICE_VERSION } from "../../src/util/version.ts";
import { type Discovery, startDiscovery, TypeUrl } from "../../src/xds/index.ts";
import { SotwClient, sidecarNode } from "../support/ads-client.ts";
import { TestCerts } from "../support/certs.ts";
import { waitFor } from "../support/xds-fixtures.ts";

const VIRTUAL_SERVICES = "networking.istio.io/v1/VirtualService";
const SYNCZ = "istio.io/debug/syncz";

const virtualService: ConfigObject = {
  apiVersion: "networking.istio.io/v1",
  kind: "VirtualService",
  metadata: { name: "reviews", namespace: "shop" },
  spec: { hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews" } }] }] },
};
const secret: ConfigObject = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "tls", namespace: "shop" },
  data: { key: "c2VjcmV0" },
};

let certs: TestCerts;
let discovery: Discovery;
let metrics: Registry;
const store = new ConfigStore();

before(async () => {
  certs = new TestCerts();
  certs.issue("istiod", "DNS:localhost,IP:127.0.0.1");
  certs.issue("replica", "URI:spiffe://cluster.local/ns/istio-system/sa/sluiced");
  certs.issue("app", "URI:spiffe://cluster.local/ns/shop/sa/app");
  const memory = new MemorySource(store);
  memory.apply(virtualService);
  memory.apply(secret);
  metrics = new Registry();
  const registry = storeRegistry(store, DEFAULT_MESH_CONFIG, "cluster.local");
  const build = (previous?: MeshPush) => storePush(store, registry, DEFAULT_MESH_CONFIG, "cluster.local", previous);
  discovery = await startDiscovery({
    store,
    initialPush: build(),
    build,
    rootNamespace: "istio-system",
    domainSuffix: "cluster.local",
    debounce: { afterMs: 10, maxMs: 1000, edsDebounce: true },
    apiAuth: true,
    debugAuth: { systemNamespace: "istio-system" },
    plugins: [],
    listen: {
      grpcAddr: "127.0.0.1:0",
      secureGrpcAddr: "127.0.0.1:0",
      tls: { certFile: certs.file("istiod.crt"), keyFile: certs.file("istiod.key"), caFile: certs.file("ca.crt") },
    },
    metrics,
    log: pino({ level: "silent" }),
  });
  discovery.debugEndpoints.register("configz", () => store.list().map((s) => `${s.key.kind} ${s.key.name}`));
});

after(async () => {
  await discovery.stop(0);
  certs.remove();
});

const secureAddress = () => `127.0.0.1:${discovery.ports.securePort}`;
const plainAddress = () => `127.0.0.1:${discovery.ports.grpcPort}`;
function tlsClient(cert: string): SotwClient {
  const pem = (name: string) => readFileSync(certs.file(name));
  return SotwClient.connect(
    secureAddress(),
    credentials.createSsl(pem("ca.crt"), pem(`${cert}.key`), pem(`${cert}.crt`)),
  );
}

test("a replica authenticated as the control plane syncs every kind, Secrets included, and follows edits", async () => {
  const replica = new ConfigStore();
  const pem = (name: string) => readFileSync(certs.file(name));
  const source = new XdsSource({
    address: secureAddress(),
    writer: replica,
    namespace: "istio-system",
    podName: "sluiced-2",
    tls: { caCertificates: pem("ca.crt"), clientCertificate: pem("replica.crt"), privateKey: pem("replica.key") },
    backoff: { initialMs: 20, maxMs: 100 },
  });
  try {
    await source.start();
    assert.deepEqual(
      replica.list().map((s) => `${s.key.kind} ${s.key.namespace}/${s.key.name}`),
      ["/Secret shop/tls", "networking.istio.io/VirtualService shop/reviews"],
    );
    new MemorySource(store).apply({ ...virtualService, metadata: { name: "ratings", namespace: "shop" } });
    await waitFor(() => replica.list().length === 3, "the new VirtualService on the replica");
    assert.match(await metrics.metrics(), /pilot_push_triggers\{type="config"\} 1/);
  } finally {
    source.stop();
  }
});

test("the api generator refuses plaintext callers and workloads outside the root namespace", async () => {
  const plain = SotwClient.connect(plainAddress());
  plain.request({ node: sidecarNode("sluiced-3", "istio-system"), typeUrl: VIRTUAL_SERVICES });
  const plainEnd = await plain.ended;
  assert.equal(plainEnd.code, status.UNAUTHENTICATED);
  plain.close();

  const app = tlsClient("app");
  app.request({ node: sidecarNode("app-1", "shop"), typeUrl: VIRTUAL_SERVICES });
  assert.equal((await app.ended).code, status.PERMISSION_DENIED);
  app.close();
});

test("istio.io/debug serves a registered endpoint to the control plane; syncz lists the proxies a caller may see", async () => {
  // Without CDS generators every Envoy type falls back to the api generator, so the app watches
  // syncz: a caller outside the system namespace sees only the proxies of its namespace.
  const app = tlsClient("app");
  app.request({ node: sidecarNode("app-1", "shop", { PROXY_CONFIG: {} }), typeUrl: SYNCZ });
  const own = await app.next();
  assert.deepEqual(
    own.resources.map((any) => unpackAny(any, csds.ClientConfigSchema)?.node?.id),
    ["app-1.shop"],
  );

  const admin = tlsClient("replica");
  admin.request({ node: sidecarNode("cli", "istio-system"), typeUrl: TypeUrl.Debug, resourceNames: ["configz"] });
  const configz = await admin.next();
  assert.equal(configz.resources[0].typeUrl, "istio.io/debug");
  assert.ok(
    (JSON.parse(new TextDecoder().decode(configz.resources[0].value)) as string[]).includes(
      "networking.istio.io/VirtualService reviews",
    ),
  );
  admin.request({ typeUrl: SYNCZ });
  const syncz = await admin.next();
  // istiod's identifier, on sync status responses only: JSON naming the component, the instance and its build.
  const identifier = JSON.parse(syncz.controlPlane?.identifier ?? "{}");
  assert.equal(identifier.Component, "istiod");
  assert.equal(identifier.ID, process.env.POD_NAME || hostname());
  assert.equal(identifier.Info.version, SLUICE_VERSION);
  assert.equal(configz.controlPlane, undefined);
  const configs = syncz.resources.map((any) => unpackAny(any, csds.ClientConfigSchema));
  assert.deepEqual(
    configs.map((c) => c?.node?.id),
    ["app-1.shop"],
    "only the app has proxy metadata (the CLI connection has none)",
  );
  assert.deepEqual(
    configs[0]?.genericXdsConfigs.map((g) => [g.typeUrl, csds.ConfigStatus[g.configStatus]]),
    [[SYNCZ, "STALE"]],
    "the app has not acked its syncz response",
  );

  // The app's namespace may not read configz.
  const appDebug = tlsClient("app");
  appDebug.request({ node: sidecarNode("app-2", "shop"), typeUrl: TypeUrl.Debug, resourceNames: ["configz"] });
  assert.equal((await appDebug.ended).code, status.PERMISSION_DENIED);
  for (const c of [app, admin, appDebug]) c.close();
});

test("the types istiod registers beside Envoy's (PCDS, the ambient types, HealthInformation) never reach the api generator", async () => {
  // On the plaintext port `api` refuses (UNAUTHENTICATED): these answer as istiod does with its defaults.
  const plain = SotwClient.connect(plainAddress());
  plain.request({ node: sidecarNode("app-1", "shop"), typeUrl: TypeUrl.HealthInfo });
  plain.request({ typeUrl: TypeUrl.ProxyConfig });
  for (const typeUrl of [TypeUrl.Address, TypeUrl.Workload, TypeUrl.WorkloadAuthorization]) {
    plain.request({ typeUrl });
    const res = await plain.next();
    assert.equal(res.typeUrl, typeUrl, "no HealthInformation or PCDS answer came first");
    assert.equal(res.resources.length, 0);
  }
  plain.request({ typeUrl: VIRTUAL_SERVICES });
  assert.equal((await plain.ended).code, status.UNAUTHENTICATED, "the stream lived until `api` refused");
  plain.close();
});
