import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { makeEndpoint, makeMesh, makeProxy, makeService } from "../../../test/support/cluster-fixtures.ts";
import { cluster, type internalUpstream, type tls, unpackAny } from "../../api/index.ts";
import type { DestinationRuleSpec } from "../../config/types/index.ts";
import type { ServiceProtocol } from "../../registry/index.ts";
import { NO_MEMOS } from "../../util/memo.ts";
import { envoyViolations } from "../httpfilter/index.ts";
import { buildInboundVipClusters, buildWaypointClusters } from "./index.ts";

const waypoint = makeProxy({ type: "waypoint", configNamespace: "shop" });

function assertValid(clusters: readonly cluster.Cluster[]): void {
  for (const c of clusters) assert.deepEqual(envoyViolations(cluster.ClusterSchema, c), [], c.name);
}

function internalSocket(c: cluster.Cluster): internalUpstream.InternalUpstreamTransport {
  const config = c.transportSocket?.configType.value;
  assert.ok(config, `${c.name} has a transport socket`);
  const unpacked = unpackAny(config) as internalUpstream.InternalUpstreamTransport | undefined;
  assert.ok(unpacked, `${c.name}: an internal upstream socket`);
  return unpacked;
}

function sanPrefixes(c: cluster.Cluster): string[] {
  const context = unpackAny(c.transportSocket?.configType.value as never) as tls.UpstreamTlsContext;
  const validation = context.commonTlsContext?.validationContextType;
  assert.equal(validation?.case, "combinedValidationContext");
  return (validation.value.defaultValidationContext?.matchTypedSubjectAltNames ?? []).map((m) =>
    m.matcher?.matchPattern.case === "prefix" ? m.matcher.matchPattern.value : "",
  );
}

describe("a waypoint's own clusters (buildWaypointInboundClusters)", () => {
  const mesh = makeMesh({ trustDomain: "corp.example", trustDomainAliases: ["old.example", "corp.example"] });
  const { beforeServices, afterServices } = buildWaypointClusters({ mesh, namespace: "shop", memos: NO_MEMOS });

  it("main_internal and encap lead to internal listeners; connect_originate and double HBONE follow", () => {
    assert.deepEqual(
      beforeServices.map((c) => c.name),
      ["main_internal", "encap"],
    );
    assert.deepEqual(
      afterServices.map((c) => c.name),
      ["connect_originate", "inner_connect_originate", "outer_connect_originate"],
    );
    const listenerOf = (c: cluster.Cluster) => {
      const host = c.loadAssignment?.endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
      assert.equal(host?.case, "endpoint");
      const address = host.value.address?.address;
      assert.equal(address?.case, "envoyInternalAddress");
      return address.value.addressNameSpecifier.value;
    };
    assert.equal(listenerOf(beforeServices[0]), "main_internal");
    assert.equal(listenerOf(beforeServices[1]), "connect_originate");
    assert.equal(listenerOf(afterServices[1]), "outer_connect_originate");
    assertValid([...beforeServices, ...afterServices]);
  });

  it("connect_originate sends HBONE to port 15008 of the destination or its waypoint, to peers of the mesh and this namespace", () => {
    const connect = afterServices[0];
    assert.equal(connect.clusterDiscoveryType.value, cluster.Cluster_DiscoveryType.ORIGINAL_DST);
    assert.equal(connect.lbConfig.case, "originalDstLbConfig");
    assert.equal(connect.lbConfig.value.upstreamPortOverride, 15008);
    assert.deepEqual(connect.lbConfig.value.metadataKey?.path[0]?.segment.value, "waypoint");
    // Trust domains each once, in the mesh's order, then the waypoint namespace's identities.
    assert.deepEqual(sanPrefixes(connect), [
      "spiffe://corp.example/",
      "spiffe://old.example/",
      "spiffe://corp.example/ns/shop/sa/",
    ]);
    assert.deepEqual(sanPrefixes(afterServices[2]), ["spiffe://corp.example/", "spiffe://old.example/"]);
  });
});

describe("a waypoint's inbound VIP clusters (buildWaypointInboundVIP)", () => {
  const mesh = makeMesh();
  const vipClusters = (protocol: ServiceProtocol, spec?: DestinationRuleSpec) => {
    const service = makeService({ hostname: "web.shop.svc.cluster.local", namespace: "shop", ports: [{ protocol }] });
    return buildInboundVipClusters({
      service,
      port: service.ports[0],
      destinationRule: spec && { name: "web", namespace: "shop", spec },
      proxy: waypoint,
      mesh,
      endpoints: [makeEndpoint(service, {})],
    });
  };

  it("an HTTP port gets an http cluster, a TCP port a tcp one, an unknown protocol both; UDP none", () => {
    assert.deepEqual(
      vipClusters("HTTP").map((c) => c.name),
      ["inbound-vip|9080|http|web.shop.svc.cluster.local"],
    );
    assert.deepEqual(
      vipClusters("TCP").map((c) => c.name),
      ["inbound-vip|9080|tcp|web.shop.svc.cluster.local"],
    );
    assert.deepEqual(
      vipClusters("UnsupportedProtocol").map((c) => c.name),
      ["inbound-vip|9080|tcp|web.shop.svc.cluster.local", "inbound-vip|9080|http|web.shop.svc.cluster.local"],
    );
    assert.deepEqual(vipClusters("UDP"), []);
  });

  it("each DestinationRule subset gets its own, named after the protocol and the subset", () => {
    const clusters = vipClusters("HTTP", { host: "web", subsets: [{ name: "v1", labels: { version: "v1" } }] });
    assert.deepEqual(
      clusters.map((c) => c.name),
      ["inbound-vip|9080|http|web.shop.svc.cluster.local", "inbound-vip|9080|http/v1|web.shop.svc.cluster.local"],
    );
    assert.deepEqual(clusters[1].metadata?.filterMetadata.istio?.subset, "http/v1");
    assertValid(clusters);
  });

  it("reaches its endpoints through an internal listener, handing on their destination; no Istio mTLS, no metadata exchange", () => {
    const [c] = vipClusters("HTTP", { host: "web", trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } });
    assert.equal(c.transportSocketMatches.length, 0);
    assert.equal(c.filters.length, 0);
    const socket = internalSocket(c);
    assert.deepEqual(
      socket.passthroughMetadata.map((m) => m.name),
      ["envoy.filters.listener.original_dst", "istio"],
    );
    assert.equal(socket.transportSocket?.name, "raw_buffer");
    assert.deepEqual(c.metadata?.filterMetadata.istio, {
      config: "/apis/networking.istio.io/v1/namespaces/shop/destination-rule/web",
      services: [{ host: "web.shop.svc.cluster.local", name: "web", namespace: "shop" }],
      subset: "http",
    });
    assertValid([c]);
  });

  it("a SIMPLE DestinationRule's TLS goes inside the internal upstream socket", () => {
    const [c] = vipClusters("HTTP", { host: "web", trafficPolicy: { tls: { mode: "SIMPLE", sni: "web.example" } } });
    const inner = internalSocket(c).transportSocket;
    assert.equal(inner?.name, "envoy.transport_sockets.tls");
    const context = unpackAny(inner?.configType.value as never) as tls.UpstreamTlsContext;
    assert.equal(context.sni, "web.example");
    assertValid([c]);
  });
});
