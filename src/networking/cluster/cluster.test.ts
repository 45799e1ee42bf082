import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { makeEndpoint, makeMesh, makeProxy, makeService } from "../../../test/support/cluster-fixtures.ts";
import { assertCreateShape } from "../../../test/support/message-shape.ts";
import { cluster, core, tls, unpackAny } from "../../api/index.ts";
import type { DestinationRuleSpec } from "../../config/types/index.ts";
import type { ServiceProtocol } from "../../registry/index.ts";
import { MemoStore, NO_MEMOS } from "../../util/memo.ts";
import { envoyViolations } from "../httpfilter/index.ts";
import {
  assembleClusters,
  buildInboundCluster,
  buildOutboundClusters,
  effectiveTrafficPolicy,
  type IstioTlsContextCache,
  outboundClusterName,
  parseClusterName,
  sniDnatClusterName,
} from "./index.ts";
import {
  anyMessage,
  clusterMessage,
  edsClusterConfigMessage,
  metadataMessage,
  transportSocketMatchMessage,
  transportSocketMessage,
} from "./message.ts";
import { altStatName } from "./metadata.ts";

describe("cluster names (BuildSubsetKey, BuildDNSSrvSubsetKey)", () => {
  it("outbound|port|subset|host, subset empty for the default cluster", () => {
    assert.equal(
      outboundClusterName(NO_MEMOS, 9080, "", "reviews.default.svc.cluster.local"),
      "outbound|9080||reviews.default.svc.cluster.local",
    );
    assert.equal(outboundClusterName(NO_MEMOS, 9080, "v1", "r.ns.svc"), "outbound|9080|v1|r.ns.svc");
  });
  it("the Istio mTLS SNI of a default cluster has `_` where the subset goes", () => {
    assert.equal(sniDnatClusterName(NO_MEMOS, 9080, "", "r.ns.svc"), "outbound_.9080_._.r.ns.svc");
    assert.equal(sniDnatClusterName(NO_MEMOS, 9080, "v1", "r.ns.svc"), "outbound_.9080_.v1_.r.ns.svc");
  });
  it("ParseSubsetKey reads direction, port, subset and host, and rejects other names", () => {
    assert.deepEqual(parseClusterName("outbound|80|v2|a.b"), {
      direction: "outbound",
      port: 80,
      subset: "v2",
      hostname: "a.b",
    });
    assert.deepEqual(parseClusterName("inbound|8080||"), {
      direction: "inbound",
      port: 8080,
      subset: "",
      hostname: "",
    });
    assert.equal(parseClusterName("BlackHoleCluster"), undefined);
    assert.equal(parseClusterName("outbound|http|v1|a.b"), undefined);
  });
});

describe("MergeTrafficPolicy", () => {
  const spec: DestinationRuleSpec = {
    host: "reviews",
    trafficPolicy: {
      loadBalancer: { simple: "ROUND_ROBIN" },
      connectionPool: { tcp: { maxConnections: 10 } },
      outlierDetection: { consecutive5xxErrors: 3 },
      portLevelSettings: [{ port: { number: 9090 }, loadBalancer: { simple: "RANDOM" } }],
    },
    subsets: [
      { name: "v1", trafficPolicy: { loadBalancer: { simple: "LEAST_REQUEST" } } },
      { name: "v2", trafficPolicy: { portLevelSettings: [{ port: { number: 9080 }, tls: { mode: "DISABLE" } }] } },
    ],
  };
  it("a subset's field replaces the host's and keeps the others", () => {
    const policy = effectiveTrafficPolicy(spec, 9080, "v1");
    assert.equal(policy?.loadBalancer?.simple, "LEAST_REQUEST");
    assert.equal(policy?.connectionPool?.tcp?.maxConnections, 10);
  });
  it("a matching port-level entry resets the fields it leaves unset to the defaults", () => {
    const policy = effectiveTrafficPolicy(spec, 9090);
    assert.equal(policy?.loadBalancer?.simple, "RANDOM");
    assert.equal(policy?.connectionPool, undefined);
    assert.equal(policy?.outlierDetection, undefined);
    assert.equal(effectiveTrafficPolicy(spec, 9080)?.loadBalancer?.simple, "ROUND_ROBIN");
  });
  it("a subset's port-level settings apply only to that port", () => {
    assert.equal(effectiveTrafficPolicy(spec, 9080, "v2")?.tls?.mode, "DISABLE");
    assert.equal(effectiveTrafficPolicy(spec, 9080, "v2")?.outlierDetection, undefined);
    assert.equal(effectiveTrafficPolicy(spec, 9081, "v2")?.outlierDetection?.consecutive5xxErrors, 3);
  });
});

describe("outbound clusters", () => {
  const service = makeService({});
  const port = service.ports[0];
  const proxy = makeProxy();
  const mesh = makeMesh();

  it("the default cluster comes first, then one per subset in the rule's order", () => {
    const clusters = buildOutboundClusters({
      service,
      port,
      proxy,
      mesh,
      endpoints: [],
      destinationRule: {
        name: "r",
        namespace: "default",
        spec: { host: "reviews", subsets: [{ name: "v2" }, { name: "v1" }] },
      },
    });
    assert.deepEqual(
      clusters.map((c) => c.name),
      ["outbound|9080||", "outbound|9080|v2|", "outbound|9080|v1|"].map((n) => `${n}${service.hostname}`),
    );
    for (const c of clusters) assert.equal(c.edsClusterConfig?.serviceName, c.name);
  });

  it("auto-mTLS matches tlsMode istio endpoints with the service's SPIFFE SANs", () => {
    const [c] = buildOutboundClusters({
      service,
      port,
      proxy,
      mesh,
      endpoints: [makeEndpoint(service, { identity: "spiffe://cluster.local/ns/default/sa/b" })],
    });
    assert.equal(c.transportSocket, undefined);
    assert.deepEqual(
      c.transportSocketMatches.map((m) => [m.name, m.match]),
      [
        ["tlsMode-istio", { tlsMode: "istio" }],
        ["tlsMode-disabled", {}],
      ],
    );
    const socket = c.transportSocketMatches[0].transportSocket;
    assert.equal(socket?.configType.case, "typedConfig");
    const context = unpackAny(socket.configType.value, tls.UpstreamTlsContextSchema);
    assert.equal(context?.sni, "outbound_.9080_._.reviews.default.svc.cluster.local");
    const validation = context?.commonTlsContext?.validationContextType;
    assert.equal(validation?.case, "combinedValidationContext");
    assert.deepEqual(
      validation.value.defaultValidationContext?.matchSubjectAltNames.map((m) => m.matchPattern.value),
      ["spiffe://cluster.local/ns/default/sa/b"],
    );
  });

  it("PASSTHROUGH load balancing drops EDS and lets the original destination decide", () => {
    const [c] = buildOutboundClusters({
      service,
      port,
      proxy,
      mesh,
      endpoints: [],
      destinationRule: {
        name: "r",
        namespace: "default",
        spec: { host: "reviews", trafficPolicy: { loadBalancer: { simple: "PASSTHROUGH" } } },
      },
    });
    assert.deepEqual(c.clusterDiscoveryType, { case: "type", value: cluster.Cluster_DiscoveryType.ORIGINAL_DST });
    assert.equal(c.lbPolicy, cluster.Cluster_LbPolicy.CLUSTER_PROVIDED);
    assert.equal(c.edsClusterConfig, undefined);
  });

  it("the clusters of a service's ports share one metadata message per rule and subset", () => {
    const twoPorts = makeService({ ports: [{ port: 9080 }, { port: 9090, protocol: "TCP" }] });
    const destinationRule = { name: "r", namespace: "default", spec: { host: "reviews", subsets: [{ name: "v1" }] } };
    const memos = new MemoStore();
    const [http, httpV1, tcp, tcpV1] = twoPorts.ports.flatMap((p) =>
      buildOutboundClusters({ service: twoPorts, port: p, proxy, mesh, endpoints: [], destinationRule, memos }),
    );
    assert.equal(http.metadata, tcp.metadata);
    assert.equal(httpV1.metadata, tcpV1.metadata);
    assert.notEqual(http.metadata, httpV1.metadata);
    assert.equal(httpV1.metadata?.filterMetadata.istio?.subset, "v1");
    const [other] = buildOutboundClusters({ service: twoPorts, port: twoPorts.ports[0], proxy, mesh, endpoints: [] });
    assert.notEqual(other.metadata, http.metadata);
    assert.equal(other.metadata?.filterMetadata.istio?.config, undefined);
  });

  it("a mesh-external service gets no auto-mTLS and is marked external", () => {
    const external = makeService({ hostname: "api.example.com", registry: "External", meshExternal: true });
    const [c] = buildOutboundClusters({ service: external, port: external.ports[0], proxy, mesh, endpoints: [] });
    assert.equal(c.transportSocketMatches.length, 0);
    assert.equal(c.metadata?.filterMetadata.istio?.external, true);
  });
});

describe("CDS order (buildClusters)", () => {
  const proxy = makeProxy();
  const mesh = makeMesh();
  const service = makeService({});
  const outbound = buildOutboundClusters({ service, port: service.ports[0], proxy, mesh, endpoints: [] });
  const inbound = buildInboundCluster({ targetPort: 9080, port: service.ports[0], services: [service], proxy, mesh });

  it("sidecar: outbound, BlackHole, Passthrough, inbound, InboundPassthrough; duplicates keep the first", () => {
    const names = assembleClusters({ proxy, mesh, outbound: [...outbound, ...outbound], inbound: [inbound] }).map(
      (c) => c.name,
    );
    assert.deepEqual(names, [
      outbound[0].name,
      "BlackHoleCluster",
      "PassthroughCluster",
      "inbound|9080||",
      "InboundPassthroughCluster",
    ]);
  });

  it("gateway: outbound, BlackHole, then SNI-DNAT clusters; no passthrough or inbound", () => {
    const router = makeProxy({ type: "router" });
    const names = assembleClusters({ proxy: router, mesh, outbound, inbound: [inbound] }).map((c) => c.name);
    assert.deepEqual(names, [outbound[0].name, "BlackHoleCluster"]);
  });
});

describe("Istio mTLS contexts shared by the clusters of a push", () => {
  const proxy = makeProxy();
  const mesh = makeMesh();
  const identity = "spiffe://cluster.local/ns/default/sa/shared";
  const istioContext = (c: cluster.Cluster) => {
    const socket = c.transportSocketMatches[0]?.transportSocket;
    assert.equal(socket?.configType.case, "typedConfig");
    return socket.configType.value;
  };

  it("clusters with the same SANs and ALPN share one encoded common context, and encode as protobuf-es would", () => {
    const cache: IstioTlsContextCache = new Map();
    const build = (hostname: string, protocol: ServiceProtocol, sa: string) => {
      const service = makeService({ hostname, ports: [{ protocol }] });
      const endpoints = [makeEndpoint(service, { identity: sa })];
      return buildOutboundClusters({
        service,
        port: service.ports[0],
        proxy,
        mesh,
        endpoints,
        istioTlsContexts: cache,
      })[0];
    };
    const clusters = [
      build("a.default.svc.cluster.local", "HTTP", identity),
      build("b.default.svc.cluster.local", "HTTP", identity),
      build("c.default.svc.cluster.local", "HTTP2", identity),
      build("d.default.svc.cluster.local", "HTTP", "spiffe://cluster.local/ns/default/sa/other"),
    ];
    assert.equal(cache.size, 3);
    const contexts = clusters.map((c) => {
      const any = istioContext(c);
      const context = unpackAny(any, tls.UpstreamTlsContextSchema);
      assert.ok(context);
      // The hand-written bytes are the canonical encoding of what they decode to.
      assert.deepEqual(Buffer.from(toBinary(tls.UpstreamTlsContextSchema, context)), Buffer.from(any.value));
      assert.deepEqual(envoyViolations(cluster.ClusterSchema, c), []);
      return context;
    });
    assert.deepEqual(
      contexts.map((c) => c.sni),
      ["a", "b", "c", "d"].map((h) => `outbound_.9080_._.${h}.default.svc.cluster.local`),
    );
    assert.deepEqual(
      contexts.map((c) => c.commonTlsContext?.alpnProtocols.join(",")),
      [
        "istio-peer-exchange,istio",
        "istio-peer-exchange,istio",
        "istio-peer-exchange,istio,h2",
        "istio-peer-exchange,istio",
      ],
    );
    const sans = contexts.map((c) => {
      const validation = c.commonTlsContext?.validationContextType;
      assert.equal(validation?.case, "combinedValidationContext");
      return validation.value.defaultValidationContext?.matchSubjectAltNames.map((m) => m.matchPattern.value);
    });
    assert.deepEqual(sans, [[identity], [identity], [identity], ["spiffe://cluster.local/ns/default/sa/other"]]);
  });

  it("an SNI beyond ASCII is written as UTF-8, as protobuf-es would", () => {
    const service = makeService({});
    const [c] = buildOutboundClusters({
      service,
      port: service.ports[0],
      proxy,
      mesh,
      endpoints: [],
      destinationRule: {
        name: "r",
        namespace: "default",
        spec: { host: "reviews", trafficPolicy: { tls: { mode: "ISTIO_MUTUAL", sni: "bücher.example" } } },
      },
      istioTlsContexts: new Map(),
    });
    const socket = c.transportSocket;
    assert.equal(socket?.configType.case, "typedConfig");
    const context = unpackAny(socket.configType.value, tls.UpstreamTlsContextSchema);
    assert.equal(context?.sni, "bücher.example");
    assert.deepEqual(
      Buffer.from(toBinary(tls.UpstreamTlsContextSchema, context)),
      Buffer.from(socket.configType.value.value),
    );
  });

  it("a cluster built with the cache encodes exactly as one built without it", () => {
    const service = makeService({});
    const input = {
      service,
      port: service.ports[0],
      proxy,
      mesh,
      endpoints: [makeEndpoint(service, { identity })],
      destinationRule: { name: "r", namespace: "default", spec: { host: "reviews", subsets: [{ name: "v1" }] } },
    };
    const encode = (istioTlsContexts?: IstioTlsContextCache) =>
      buildOutboundClusters({ ...input, istioTlsContexts }).map((c) => toBinary(cluster.ClusterSchema, c));
    const cache: IstioTlsContextCache = new Map();
    assert.deepEqual(encode(cache), encode());
    assert.deepEqual(encode(cache), encode());
    assert.equal(cache.size, 1);
  });
});

describe("encoding once per resource", () => {
  it("the same inputs encode to the same bytes, so one encoding serves every proxy", () => {
    const service = makeService({});
    const input = {
      service,
      port: service.ports[0],
      proxy: makeProxy(),
      mesh: makeMesh(),
      endpoints: [makeEndpoint(service, { identity: "spiffe://cluster.local/ns/default/sa/r" })],
      destinationRule: {
        name: "r",
        namespace: "default",
        spec: { host: "reviews", subsets: [{ name: "v1", labels: { version: "v1" } }] },
      },
    };
    const encode = () => buildOutboundClusters(input).map((c) => toBinary(cluster.ClusterSchema, c));
    assert.deepEqual(encode(), encode());
  });
});

describe("Cluster messages written as plain objects", () => {
  it("have the shape and zero values create() gives, with unset message fields present as undefined", () => {
    assertCreateShape(cluster.ClusterSchema, clusterMessage("c"), create(cluster.ClusterSchema, { name: "c" }));
  });
  it("so do the small messages every cluster carries", () => {
    const any = anyMessage("type.googleapis.com/x", new Uint8Array([1, 2]));
    assert.deepStrictEqual(any, create(AnySchema, { typeUrl: "type.googleapis.com/x", value: new Uint8Array([1, 2]) }));
    const socket = transportSocketMessage("tls", any);
    assert.deepStrictEqual(
      socket,
      create(core.TransportSocketSchema, { name: "tls", configType: { case: "typedConfig", value: any } }),
    );
    assert.deepStrictEqual(
      transportSocketMatchMessage("m", { tlsMode: "istio" }, socket),
      create(cluster.Cluster_TransportSocketMatchSchema, {
        name: "m",
        match: { tlsMode: "istio" },
        transportSocket: socket,
      }),
    );
    const ads = create(core.ConfigSourceSchema, { configSourceSpecifier: { case: "ads", value: {} } });
    assert.deepStrictEqual(
      edsClusterConfigMessage("c", ads),
      create(cluster.Cluster_EdsClusterConfigSchema, { serviceName: "c", edsConfig: ads }),
    );
    assert.deepStrictEqual(
      metadataMessage({ istio: { subset: "v1" } }),
      create(core.MetadataSchema, { filterMetadata: { istio: { subset: "v1" } } }),
    );
  });
});

describe("alt_stat_name from the mesh's cluster stat-name pattern (Istio's BuildStatPrefix)", () => {
  const pattern =
    "%SERVICE%|%SERVICE_NAME%|%SERVICE_FQDN%|%SERVICE_PORT%|%SERVICE_PORT_NAME%|%SUBSET_NAME%|%TARGET_PORT%";
  it("expands every variable; a Kubernetes service is known by its name, anything else by its host", () => {
    const kube = makeService({ hostname: "reviews.shop.svc.cluster.local", namespace: "shop" });
    const input = { subset: "v1", port: 9080, portName: "http", targetPort: 8080 };
    assert.equal(
      altStatName(NO_MEMOS, "outbound|9080|v1|reviews.shop.svc.cluster.local", pattern, { service: kube, ...input }),
      `${kube.name}.shop|${kube.name}|reviews.shop.svc.cluster.local|9080|http|v1|8080;`,
    );
    const entry = { ...kube, registry: "External" as const, hostname: "api.example.com" };
    assert.equal(
      altStatName(NO_MEMOS, "outbound|9080|v1|api.example.com", pattern, { service: entry, ...input }),
      "api.example.com|api.example.com|api.example.com|9080|http|v1|8080;",
    );
    assert.equal(altStatName(NO_MEMOS, "outbound|80||a", undefined, { service: kube, ...input }), "outbound|80||a;");
  });
});
