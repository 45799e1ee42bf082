// The bootstrap's exact text, and a real @grpc/grpc-js-xds client (and server) started from a file the
// agent wrote, against a test ADS server. grpc-js-xds reads its bootstrap once per process, which is
// why this file holds the only client.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Client, credentials, ServerCredentials } from "@grpc/grpc-js";
import * as grpcXds from "@grpc/grpc-js-xds";
import { type Backend, call, startBackend } from "../../test/proxyless/echo.ts";
import {
  apiListener,
  edsCluster,
  type Harness,
  loadAssignment,
  ROUTER_HTTP_FILTER,
  routeAllTo,
  startServer,
  waitFor,
} from "../../test/support/xds-fixtures.ts";
import { TypeUrl } from "../xds/index.ts";
import { podGrpcBootstrap } from "./agent.ts";
import { grpcBootstrap, writeGrpcBootstrap } from "./grpc-bootstrap.ts";

// What Istio's agent writes for these inputs (pkg/istio-agent/testdata/grpc-bootstrap.json).
const ISTIO_TEXT = `{
  "xds_servers": [
    {
      "server_uri": "unix:///etc/istio/XDS",
      "channel_creds": [
        {
          "type": "insecure"
        }
      ],
      "server_features": [
        "xds_v3"
      ]
    }
  ],
  "node": {
    "id": "sidecar~127.0.0.1~pod1.fake-namespace~fake-namespace.svc.cluster.local",
    "metadata": {
      "GENERATOR": "grpc",
      "INSTANCE_IPS": "127.0.0.1",
      "ISTIO_VERSION": "version",
      "METADATA_DISCOVERY": "false",
      "PILOT_SAN": [
        "istiod.istio-system.svc"
      ]
    },
    "locality": {},
    "UserAgentVersionType": null
  },
  "certificate_providers": {
    "default": {
      "plugin_name": "file_watcher",
      "config": {
        "certificate_file": "/cert/path/cert-chain.pem",
        "private_key_file": "/cert/path/key.pem",
        "ca_certificate_file": "/cert/path/root-cert.pem",
        "refresh_interval": "900s"
      }
    }
  },
  "server_listener_resource_name_template": "xds.istio.io/grpc/lds/inbound/%s"
}`;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "grpc-bootstrap-"));
});

test("the file is byte for byte what Istio's agent writes", async () => {
  const path = join(dir, "istio", "grpc-bootstrap.json");
  writeGrpcBootstrap(
    path,
    grpcBootstrap({
      nodeId: "sidecar~127.0.0.1~pod1.fake-namespace~fake-namespace.svc.cluster.local",
      metadata: {
        PILOT_SAN: ["istiod.istio-system.svc"],
        METADATA_DISCOVERY: "false",
        ISTIO_VERSION: "version",
        INSTANCE_IPS: "127.0.0.1",
      },
      locality: {},
      discoveryAddress: "unix:///etc/istio/XDS",
      certDir: "/cert/path",
    }),
  );
  assert.equal(await readFile(path, "utf8"), ISTIO_TEXT);
});

test("no certificate directory, no certificate_providers; GENERATOR is grpc whatever the environment says", () => {
  const b = grpcBootstrap({ nodeId: "n", metadata: { GENERATOR: "other" }, locality: {}, discoveryAddress: "a:1" });
  assert.equal(b.certificate_providers, undefined);
  assert.equal(b.node.metadata.GENERATOR, "grpc");
  assert.deepEqual(b.xds_servers[0].channel_creds, [{ type: "insecure" }]);
});

test("tls channel credentials name the certificate files; they need a certificate directory", () => {
  const b = grpcBootstrap({
    nodeId: "n",
    metadata: {},
    locality: {},
    discoveryAddress: "istiod:15012",
    certDir: "/var/lib/istio/data",
    channelCreds: "tls",
  });
  assert.deepEqual(b.xds_servers[0].channel_creds, [
    {
      type: "tls",
      config: {
        certificate_file: "/var/lib/istio/data/cert-chain.pem",
        private_key_file: "/var/lib/istio/data/key.pem",
        ca_certificate_file: "/var/lib/istio/data/root-cert.pem",
        refresh_interval: "900s",
      },
    },
  ]);
  assert.throws(
    () => grpcBootstrap({ nodeId: "n", metadata: {}, locality: {}, discoveryAddress: "a:1", channelCreds: "tls" }),
    /OUTPUT_CERTS/,
  );
});

test("HTML-sensitive characters are escaped as Go's encoder escapes them", async () => {
  const path = join(dir, "escaped.json");
  writeGrpcBootstrap(path, grpcBootstrap({ nodeId: "a<b>&c", metadata: {}, locality: {}, discoveryAddress: "x:1" }));
  const text = await readFile(path, "utf8");
  assert.match(text, /"id": "a\\u003cb\\u003e\\u0026c"/);
  assert.equal(JSON.parse(text).node.id, "a<b>&c");
});

// --- A real grpc-js-xds client and server from the agent's file. ---

const TARGET = "echo.test.svc.cluster.local:7070";
const CLUSTER = "outbound|7070||echo.test.svc.cluster.local";
let ads: Harness;
let backend: Backend | undefined;
let client: Client | undefined;

after(async () => {
  client?.close();
  backend?.stop();
  await ads?.close();
  await rm(dir, { recursive: true });
});

/** An api_listener with its route inline, the EDS cluster and its endpoint; all PGV-checked. */
function snapshot(backendPort: number) {
  const lis = apiListener(TARGET, {
    routeSpecifier: { case: "routeConfig", value: routeAllTo(CLUSTER, TARGET, CLUSTER) },
    httpFilters: [ROUTER_HTTP_FILTER],
  });
  return {
    [TypeUrl.Listener]: [lis],
    [TypeUrl.Cluster]: [edsCluster(CLUSTER)],
    [TypeUrl.Endpoint]: [loadAssignment(CLUSTER, [["127.0.0.1", backendPort]])],
  };
}

test("grpc-js-xds starts from the agent's file: the node reaches the ADS server and an RPC reaches the backend", async () => {
  backend = await startBackend("hi");
  ads = await startServer(snapshot(backend.port));
  const path = join(dir, "etc", "grpc-bootstrap.json");
  writeGrpcBootstrap(
    path,
    podGrpcBootstrap({
      env: {
        POD_NAME: "echo-client-1",
        POD_NAMESPACE: "test",
        INSTANCE_IP: "127.0.0.1",
        ISTIO_METAJSON_LABELS: '{"app":"echo-client","istio-locality":"r1.z1"}',
      },
      proxyConfig: { discoveryAddress: ads.address },
      certDir: join(dir, "certs"),
      podInfoDir: join(dir, "no-pod-info"),
      hostIPs: [],
    }),
  );
  process.env.GRPC_XDS_BOOTSTRAP = path;
  grpcXds.register();
  client = new Client(`xds:///${TARGET}`, credentials.createInsecure());
  assert.equal(await call(client), "hi");

  const conn = ads.server.syncStatus().find((s) => s.proxy.id === "echo-client-1.test");
  assert.ok(conn, "the client connected with the agent's node id");
  assert.equal(conn.proxy.nodeId, "sidecar~127.0.0.1~echo-client-1.test~test.svc.cluster.local");
  assert.equal(conn.proxy.generator, "grpc");
  assert.equal(conn.proxy.configNamespace, "test");
  assert.deepEqual(conn.proxy.locality, { region: "r1", zone: "z1", subZone: "" });
  assert.equal(conn.proxy.labels.app, "echo-client");
  assert.deepEqual(conn.proxy.ipAddresses, ["127.0.0.1", "::1"]);
});

test("an xDS-enabled gRPC server asks for its listener by the bootstrap's template", async () => {
  const server = new grpcXds.XdsServer();
  try {
    // The bind waits for a listener Sluice does not have here; only the subscription matters.
    server.bindAsync("127.0.0.1:18999", ServerCredentials.createInsecure(), () => {});
    await waitFor(
      () =>
        ads.server
          .syncStatus()
          .some((s) =>
            s.types.some(
              (t) =>
                t.typeUrl === TypeUrl.Listener &&
                t.resourceNames.includes("xds.istio.io/grpc/lds/inbound/127.0.0.1:18999"),
            ),
          ),
      "the inbound listener subscription",
    );
  } finally {
    server.forceShutdown();
  }
});
