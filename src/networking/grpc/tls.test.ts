// Proxyless mTLS config: ISTIO_MUTUAL client clusters and PeerAuthentication server chains, in the
// shape Istio's grpcgen sends and grpc-js-xds reads (certificate provider instance `default`).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Any } from "@bufbuild/protobuf/wkt";
import { makeService } from "../../../test/support/cluster-fixtures.ts";
import { cluster, listener, tls, unpackAny } from "../../api/index.ts";
import { checkMessage } from "../../api/pgv/index.ts";
import { buildGrpcClusters, buildServerListener, grpcServerTlsContext } from "./index.ts";

const HOST = "echo.default.svc.cluster.local";
const SERVICE = makeService({ hostname: HOST, ports: [{ port: 7070, name: "grpc", protocol: "GRPC" }] });
const SANS = ["spiffe://cluster.local/ns/default/sa/echo"];
const NAME = `outbound|7070||${HOST}`;

type TlsMode = "DISABLE" | "SIMPLE" | "ISTIO_MUTUAL";

function clusters(tlsMode: TlsMode | undefined, portTlsMode?: TlsMode) {
  const built = buildGrpcClusters({
    group: { hostname: HOST, port: 7070, names: new Set([NAME, `outbound|7070|v1|${HOST}`]) },
    service: SERVICE,
    destinationRule: {
      host: HOST,
      trafficPolicy: {
        ...(tlsMode ? { tls: { mode: tlsMode } } : {}),
        ...(portTlsMode ? { portLevelSettings: [{ port: { number: 7070 }, tls: { mode: portTlsMode } }] } : {}),
      },
      subsets: [{ name: "v1", labels: { version: "v1" } }],
    },
    serviceAccounts: SANS,
  });
  for (const c of built) assert.deepEqual(checkMessage(cluster.ClusterSchema, c), []);
  return built;
}

/** The typed config of a transport socket. */
function socketConfig(
  socket: { configType: { case: "typedConfig"; value: Any } | { case: undefined } } | undefined,
): Any {
  assert.equal(socket?.configType.case, "typedConfig");
  if (socket?.configType.case !== "typedConfig") throw new Error("no typed config");
  return socket.configType.value;
}

function upstreamContext(c: cluster.Cluster): tls.UpstreamTlsContext {
  assert.equal(c.transportSocket?.name, "envoy.transport_sockets.tls");
  const context = unpackAny(socketConfig(c.transportSocket), tls.UpstreamTlsContextSchema);
  assert.ok(context);
  return context;
}

test("ISTIO_MUTUAL: the default and subset clusters present provider `default` and check the service's SANs", () => {
  const built = clusters("ISTIO_MUTUAL");
  assert.equal(built.length, 2);
  for (const c of built) {
    const common = upstreamContext(c).commonTlsContext;
    assert.equal(common?.tlsCertificateProviderInstance?.instanceName, "default");
    assert.equal(common?.tlsCertificateProviderInstance?.certificateName, "default");
    assert.equal(common?.validationContextType.case, "validationContext");
    if (common?.validationContextType.case !== "validationContext") return;
    const validation = common.validationContextType.value;
    assert.equal(validation.caCertificateProviderInstance?.instanceName, "default");
    assert.equal(validation.caCertificateProviderInstance?.certificateName, "ROOTCA");
    assert.deepEqual(
      validation.matchSubjectAltNames.map((m) => m.matchPattern.value),
      SANS,
    );
  }
});

test("no TLS without an explicit ISTIO_MUTUAL (no auto-mTLS for gRPC); SIMPLE is not supported", () => {
  for (const mode of [undefined, "DISABLE", "SIMPLE"] as const) {
    for (const c of clusters(mode)) assert.equal(c.transportSocket, undefined, String(mode));
  }
});

test("a port-level ISTIO_MUTUAL applies to the port's clusters", () => {
  for (const c of clusters(undefined, "ISTIO_MUTUAL")) upstreamContext(c);
});

test("server chains: STRICT requires a client certificate; PERMISSIVE and DISABLE are plaintext", () => {
  const name = "xds.istio.io/grpc/lds/inbound/127.0.0.1:7070";
  const strict = buildServerListener(name, { tls: grpcServerTlsContext("STRICT", {}) });
  assert.ok(strict);
  assert.deepEqual(checkMessage(listener.ListenerSchema, strict), []);
  const [chain] = strict.filterChains;
  assert.equal(chain?.name, "inbound-mtls");
  const context = unpackAny(socketConfig(chain?.transportSocket), tls.DownstreamTlsContextSchema);
  assert.equal(context?.requireClientCertificate, true);
  assert.equal(context?.commonTlsContext?.tlsCertificateProviderInstance?.instanceName, "default");
  const validation = context?.commonTlsContext?.validationContextType;
  assert.ok(validation?.case === "validationContext");
  assert.deepEqual(validation.value.matchSubjectAltNames, []);

  assert.equal(grpcServerTlsContext("PERMISSIVE", {}), undefined);
  assert.equal(grpcServerTlsContext("DISABLE", { "security.istio.io/tlsMode": "istio" }), undefined);
  // Clients of a workload labelled for mTLS will use it, and gRPC cannot serve both: STRICT.
  assert.ok(grpcServerTlsContext("PERMISSIVE", { "security.istio.io/tlsMode": "istio" }));
});
