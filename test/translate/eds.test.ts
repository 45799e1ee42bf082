// EDS through `sluice x translate`'s state and the generators, one file: the endpoints' own
// PeerAuthentication (the top-level case), multi-network EDS ("multi-network"), and the bytes of the
// benchmark templates' EDS ("golden"). Unit tests of the builder, with its goldens, are in
// src/networking/endpoint/.
//
// EDS reads the endpoint's own PeerAuthentication: a workload with mTLS disabled loses the
// tlsMode metadata that makes clients originate Istio mTLS to it.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { benchProxy, template } from "../../bench/templates.ts";
import { endpointsConfig } from "../../bench/templates-bench.ts";
import { type admin, endpoint, unpackAny } from "../../src/api/index.ts";
import { loadState, translate, translateProxy } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { loadMeshNetworks } from "../../src/config/mesh-networks.ts";
import { buildClusters, buildLoadAssignment, XdsCache } from "../../src/configgen/index.ts";
import { CACHE_MODES, cacheModeDigests } from "../support/cache-modes.ts";
import { anyViolations } from "../support/pgv.ts";

const CONFIG = `
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: data}
spec:
  hosts: [db.data.svc.cluster.local]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{number: 5432, name: tcp, protocol: TCP}]
  workloadSelector: {labels: {app: db}}
---
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: db-1, namespace: data}
spec: {address: 10.2.0.1, labels: {app: db, security.istio.io/tlsMode: istio}}
---
apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: db-2, namespace: data}
spec: {address: 10.2.0.2, labels: {app: db, role: legacy, security.istio.io/tlsMode: istio}}
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: legacy, namespace: data}
spec:
  selector: {matchLabels: {role: legacy}}
  mtls: {mode: DISABLE}
`;

const dir = mkdtempSync(join(tmpdir(), "sluice-eds-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("endpoints whose workload disables mTLS carry no tlsMode", () => {
  const file = join(dir, "config.yaml");
  writeFileSync(file, CONFIG);
  const result = translate(
    [file],
    { type: "sidecar", ip: "10.0.0.9", namespace: "apps", labels: {}, id: "client.apps" },
    { mesh: DEFAULT_MESH_CONFIG, domainSuffix: "cluster.local", types: ["EDS"] },
  );
  assert.ok(result.dump, result.problems?.join("\n"));
  const section = unpackAny(result.dump.configs[0]) as admin.EndpointsConfigDump;
  const cla = section.dynamicEndpointConfigs
    .map((e) => e.endpointConfig && unpackAny(e.endpointConfig, endpoint.ClusterLoadAssignmentSchema))
    .find((c) => c?.clusterName === "outbound|5432||db.data.svc.cluster.local");
  const tlsModes = Object.fromEntries(
    (cla?.endpoints ?? [])
      .flatMap((l) => l.lbEndpoints)
      .map((e) => {
        const address = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value.address?.address : undefined;
        const ip = address?.case === "socketAddress" ? address.value.address : "";
        const match = e.metadata?.filterMetadata["envoy.transport_socket_match"];
        return [ip, match?.tlsMode ?? null];
      }),
  );
  assert.deepEqual(tlsModes, { "10.2.0.1": "istio", "10.2.0.2": null });
});

describe("multi-network", () => {
  // Multi-network EDS through `sluice x translate`'s state: endpoints on the proxy's network are sent as
  // they are, those on another network as that network's gateways (weighted by their endpoints), those on
  // a network without gateways directly (Istio's sidecar behaviour), and remote endpoints without Istio
  // mTLS not at all. Gateways come from meshNetworks addresses, registryServiceName Services and Services
  // labelled with their network; endpoints without a network label take one from the system namespace's
  // label or meshNetworks fromRegistry / fromCidr. Every resource passes Envoy's constraints.
  /** The xDS cache these tests build with, as the discovery server's generators share one. */
  const cache = new XdsCache();

  const SLUICE_BIN = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
  const CLUSTER = "outbound|9080||reviews.default.svc.cluster.local";
  const dir = mkdtempSync(join(tmpdir(), "sluice-network-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("SLUICE_")));

  function sluice(args: string[]) {
    return spawnSync(process.execPath, [SLUICE_BIN, ...args], { encoding: "utf8", env: { ...env, HOME: dir } });
  }

  interface PodInput {
    name: string;
    ip: string;
    /** The topology.istio.io/network label ("" for none). */
    network: string;
    /** Injected: security.istio.io/tlsMode istio. Default true. */
    sidecar?: boolean;
  }

  /** The reviews Service in default, its pods and their EndpointSlice. */
  function reviews(pods: PodInput[]): string {
    const docs = pods.map(({ name, ip, network, sidecar = true }) => {
      const labels = [
        "app: reviews",
        ...(network ? [`topology.istio.io/network: ${network}`] : []),
        ...(sidecar ? ["security.istio.io/tlsMode: istio"] : []),
      ];
      return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default, labels: {${labels.join(", ")}}}
spec: {containers: [{name: reviews, image: reviews}]}
status: {phase: Running, podIP: ${ip}, conditions: [{type: Ready, status: "True"}]}`;
    });
    const addresses = pods.map(
      ({ name, ip }) =>
        `- {addresses: [${ip}], conditions: {ready: true}, targetRef: {kind: Pod, name: ${name}, namespace: default}}`,
    );
    return [
      `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: default}
spec: {clusterIP: 10.96.0.10, selector: {app: reviews}, ports: [{name: http, port: 9080}]}`,
      ...docs,
      `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: reviews-1, namespace: default, labels: {kubernetes.io/service-name: reviews}}
addressType: IPv4
endpoints:
${addresses.join("\n")}
ports: [{name: http, port: 9080}]`,
    ].join("\n---\n");
  }

  /** A LoadBalancer Service in istio-system at `ip`, exposing `port`, with `labels`. */
  function gatewayService(name: string, ip: string, port: number, labels: Record<string, string> = {}): string {
    const labelText = Object.entries(labels).map(([k, v]) => `${k}: "${v}"`);
    return `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: istio-system, labels: {${labelText.join(", ")}}}
spec: {type: LoadBalancer, clusterIP: 10.96.1.1, selector: {istio: eastwestgateway}, ports: [{name: tls, port: ${port}}]}
status: {loadBalancer: {ingress: [{ip: ${ip}}]}}`;
  }

  let fileCount = 0;
  function file(text: string): string {
    const path = join(dir, `config-${fileCount++}.yaml`);
    writeFileSync(path, text);
    return path;
  }

  /** The reviews load assignment for a sidecar on `network`: [address:port, weight] of each endpoint. */
  function reviewsEndpoints(config: string, meshNetworks: string, network: string): [string, number][] {
    const result = translate(
      [file(config)],
      { type: "sidecar", ip: "10.0.0.9", namespace: "default", labels: {}, id: "client.default", network },
      {
        mesh: DEFAULT_MESH_CONFIG,
        meshNetworks: loadMeshNetworks(meshNetworks),
        domainSuffix: "cluster.local",
        types: ["EDS", "CDS"],
      },
    );
    assert.ok(result.dump, result.problems?.join("\n"));
    const assignments: endpoint.ClusterLoadAssignment[] = [];
    for (const config of result.dump.configs) {
      const section = unpackAny(config);
      if (section?.$typeName === "envoy.admin.v3.EndpointsConfigDump") {
        for (const { endpointConfig } of (section as admin.EndpointsConfigDump).dynamicEndpointConfigs) {
          assert.ok(endpointConfig);
          assert.deepEqual(anyViolations(endpointConfig), [], "ClusterLoadAssignment");
          const cla = unpackAny(endpointConfig, endpoint.ClusterLoadAssignmentSchema);
          if (cla) assignments.push(cla);
        }
      } else if (section?.$typeName === "envoy.admin.v3.ClustersConfigDump") {
        for (const { cluster } of (section as admin.ClustersConfigDump).dynamicActiveClusters) {
          assert.ok(cluster);
          assert.deepEqual(anyViolations(cluster), [], "Cluster");
        }
      }
    }
    const cla = assignments.find((a) => a.clusterName === CLUSTER);
    assert.ok(cla, `no ${CLUSTER}`);
    return cla.endpoints
      .flatMap((l) => l.lbEndpoints)
      .map((lb) => {
        const ep = lb.hostIdentifier.case === "endpoint" ? lb.hostIdentifier.value : undefined;
        const socket = ep?.address?.address.case === "socketAddress" ? ep.address.address.value : undefined;
        const port = socket?.portSpecifier.case === "portValue" ? socket.portSpecifier.value : 0;
        return [`${socket?.address}:${port}`, lb.loadBalancingWeight ?? 0] as [string, number];
      })
      .sort(([a], [b]) => a.localeCompare(b));
  }

  const TWO_NETWORKS = `
networks:
  network1:
    gateways: [{address: 35.1.1.1, port: 15443}]
  network2:
    gateways: [{address: 35.2.2.2, port: 15443}]
`;

  const LABELLED_PODS = reviews([
    { name: "r1", ip: "10.1.0.1", network: "network1" },
    { name: "r2", ip: "10.2.0.1", network: "network2" },
    { name: "r3", ip: "10.2.0.2", network: "network2" },
    { name: "r4", ip: "10.2.0.3", network: "network2", sidecar: false },
    { name: "r5", ip: "10.3.0.1", network: "network3" },
  ]);

  test("a proxy on network1 gets its network's endpoints and network2's gateway weighted by network2's endpoints", () => {
    assert.deepEqual(reviewsEndpoints(LABELLED_PODS, TWO_NETWORKS, "network1"), [
      ["10.1.0.1:9080", 1],
      // network3 has no gateway: its endpoints are sent as they are, as Istio does for sidecars.
      ["10.3.0.1:9080", 1],
      // r2 and r3; r4 has no sidecar, so the gateway (which routes by mTLS SNI) cannot reach it.
      ["35.2.2.2:15443", 2],
    ]);
  });

  test("a proxy on network2 sees the reverse: its own endpoints and network1's gateway", () => {
    assert.deepEqual(reviewsEndpoints(LABELLED_PODS, TWO_NETWORKS, "network2"), [
      ["10.2.0.1:9080", 1],
      ["10.2.0.2:9080", 1],
      ["10.2.0.3:9080", 1],
      ["10.3.0.1:9080", 1],
      ["35.1.1.1:15443", 1],
    ]);
  });

  test("in one push, proxies on different networks get their own load assignments (the cache keys on the network)", () => {
    const { state } = loadState(
      [file(LABELLED_PODS)],
      DEFAULT_MESH_CONFIG,
      "cluster.local",
      undefined,
      [],
      loadMeshNetworks(TWO_NETWORKS),
    );
    assert.ok(state);
    const addresses = (network: string) => {
      const proxy = translateProxy(
        { type: "sidecar", ip: "10.0.0.9", namespace: "default", labels: {}, id: `client-${network}.default`, network },
        DEFAULT_MESH_CONFIG,
        "cluster.local",
      );
      const cla = buildLoadAssignment(state.push, proxy, state.registry, CLUSTER, cache);
      return cla.endpoints.flatMap((l) =>
        l.lbEndpoints.map((lb) => {
          const address = lb.hostIdentifier.case === "endpoint" ? lb.hostIdentifier.value.address?.address : undefined;
          return address?.case === "socketAddress" ? address.value.address : "";
        }),
      );
    };
    assert.ok(addresses("network1").includes("35.2.2.2"));
    assert.ok(addresses("network2").includes("35.1.1.1"));
    assert.ok(!addresses("network2").includes("35.2.2.2"));
    assert.ok(addresses("network1").includes("35.2.2.2"));
  });

  test("without meshNetworks or gateways, every endpoint is sent directly", () => {
    assert.deepEqual(
      reviewsEndpoints(LABELLED_PODS, "", "network1").map(([address]) => address),
      ["10.1.0.1:9080", "10.2.0.1:9080", "10.2.0.2:9080", "10.2.0.3:9080", "10.3.0.1:9080"],
    );
  });

  test("a registryServiceName gateway is its Service's load-balancer address; fromRegistry puts unlabelled endpoints on its network", () => {
    const config = [
      reviews([
        { name: "r1", ip: "10.1.0.1", network: "" },
        { name: "r2", ip: "10.1.0.2", network: "" },
        { name: "r3", ip: "10.2.0.1", network: "network2" },
      ]),
      gatewayService("istio-eastwestgateway", "35.1.1.9", 15443),
    ].join("\n---\n");
    const meshNetworks = `
networks:
  network1:
    endpoints: [{fromRegistry: Kubernetes}]
    gateways: [{registryServiceName: istio-eastwestgateway.istio-system.svc.cluster.local, port: 15443}]
  network2:
    endpoints: [{fromRegistry: other-cluster}]
    gateways: [{address: 35.2.2.2, port: 15443}]
`;
    assert.deepEqual(reviewsEndpoints(config, meshNetworks, "network2"), [
      ["10.2.0.1:9080", 1],
      ["35.1.1.9:15443", 2],
    ]);
    assert.deepEqual(reviewsEndpoints(config, meshNetworks, "network1"), [
      ["10.1.0.1:9080", 1],
      ["10.1.0.2:9080", 1],
      ["35.2.2.2:15443", 1],
    ]);
    // registryServiceName counts only in a network whose endpoints name this cluster: network1 has no gateway
    // then, and its endpoints (placed by fromCidr) are reached directly.
    const byCidr = meshNetworks.replace("fromRegistry: Kubernetes", "fromCidr: 10.1.0.0/16");
    assert.deepEqual(reviewsEndpoints(config, byCidr, "network2"), [
      ["10.1.0.1:9080", 1],
      ["10.1.0.2:9080", 1],
      ["10.2.0.1:9080", 1],
    ]);
  });

  test("a Service labelled with its network is that network's gateway on its gatewayPort; fromCidr places unlabelled endpoints", () => {
    const pods = reviews([
      { name: "r1", ip: "10.1.0.1", network: "network1" },
      { name: "r2", ip: "10.2.0.1", network: "" },
      { name: "r3", ip: "10.2.0.2", network: "" },
    ]);
    const labelled = (port: number, labels: Record<string, string>) =>
      [pods, gatewayService("eastwest", "35.2.2.9", port, { "topology.istio.io/network": "network2", ...labels })].join(
        "\n---\n",
      );
    const meshNetworks = `
networks:
  network2:
    endpoints: [{fromCidr: 10.2.0.0/16}]
`;
    assert.deepEqual(reviewsEndpoints(labelled(15443, {}), meshNetworks, "network1"), [
      ["10.1.0.1:9080", 1],
      ["35.2.2.9:15443", 2],
    ]);
    assert.deepEqual(
      reviewsEndpoints(labelled(15444, { "networking.istio.io/gatewayPort": "15444" }), meshNetworks, "network1"),
      [
        ["10.1.0.1:9080", 1],
        ["35.2.2.9:15444", 2],
      ],
    );
    // A labelled Service without its gateway port is no gateway: network2 has none, so it is reached directly.
    assert.deepEqual(
      reviewsEndpoints(labelled(15444, {}), meshNetworks, "network1").map(([address]) => address),
      ["10.1.0.1:9080", "10.2.0.1:9080", "10.2.0.2:9080"],
    );
  });

  test("the system namespace's network label is the default network of unlabelled endpoints, before fromCidr", () => {
    const config = [
      reviews([
        { name: "r1", ip: "10.1.0.1", network: "" },
        { name: "r2", ip: "10.2.0.1", network: "" },
      ]),
      `apiVersion: v1
kind: Namespace
metadata: {name: istio-system, labels: {topology.istio.io/network: network1}}`,
    ].join("\n---\n");
    const meshNetworks = `
networks:
  network1:
    gateways: [{address: 35.1.1.1, port: 15443}]
  network2:
    endpoints: [{fromCidr: 10.2.0.0/16}]
`;
    assert.deepEqual(reviewsEndpoints(config, meshNetworks, "network2"), [["35.1.1.1:15443", 2]]);
  });

  test("sluice x translate --meshNetworks --network prints the gateway standing in for the other network", () => {
    const networks = join(dir, "networks.yaml");
    writeFileSync(networks, TWO_NETWORKS);
    const args = ["x", "translate", "-f", file(LABELLED_PODS), "--meshNetworks", networks, "--types", "eds"];
    const run = sluice([...args, "--network", "network1"]);
    assert.equal(run.status, 0, run.stderr);
    const text = run.stdout;
    assert.match(text, /"address": "35\.2\.2\.2",\s*"portValue": 15443/);
    assert.doesNotMatch(text, /"address": "10\.2\.0\.1"/);

    writeFileSync(networks, "networks: {network2: {gateways: [{address: 35.2.2.2, port: 0}]}}");
    const bad = sluice(args);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /invalid mesh networks/);
  });
});

describe("golden", () => {
  // The EDS the micro benchmarks time (bench/templates-bench.ts endpointBenchmarks, Istio's
  // BenchmarkEndpointGeneration) and the EDS of the http template's sidecar stay the same bytes while
  // endpoint generation is optimised: a SHA-256 over the encoded load assignments, recorded from the code
  // before the optimisation, and every assignment within Envoy's constraints.
  // Each case runs with the xDS cache on and off (test/support/cache-modes.ts).
  // After a deliberate change of the generated config, print the new digests with UPDATE_GOLDEN=1.
  const BENCHMARK_GOLDEN: Record<string, string> = {
    "1/100": "bddc4876c927189d2aea6b2c62c300608a06afd241d2fba77aa8f63d234cb551",
    "10/10": "a7eb29c973f7d9a46ba4c4fb6f7c07bd4b1af8cca864063187809a1ca390540b",
    "100/10": "e7f8af8f2291cb746fab80d0bc88f62c22996201510654286f6bda20192d80ea",
    "1000/1": "cc7758a4e7d1a157a18891d2e9964e72e58a7d20b67c210c84980ff65bd7569d",
  };

  for (const [shape, golden] of Object.entries(BENCHMARK_GOLDEN)) {
    const [endpoints, services] = shape.split("/").map(Number);
    for (const mode of CACHE_MODES) {
      test(`EDS benchmark, ${endpoints} endpoints / ${services} services, ${mode.name}: bytes unchanged`, () => {
        const proxy = benchProxy("sidecar", { ip: "10.3.3.3", id: "random.default", labels: {} });
        const clusters = Array.from({ length: services }, (_, s) => `outbound|80||foo-${s}.com`);
        const { eds } = cacheModeDigests(shape, endpointsConfig(endpoints, services), mode, (push, registry, cache) => {
          const assignments = clusters.map((c) => buildLoadAssignment(push, proxy, registry, c, cache));
          assert.ok(
            assignments.every((a) => a.endpoints.length > 0),
            "every benchmark service has endpoints",
          );
          return { eds: assignments };
        });
        if (process.env.UPDATE_GOLDEN) console.log(`  "${shape}": "${eds}",`);
        assert.equal(eds, golden);
      });
    }
  }

  const HTTP_GOLDEN = "c5cc1b71ea3812135d0884c801be830f3c3a43c2c20d6395b88c236b3b2e1c03";

  for (const mode of CACHE_MODES) {
    test(`http template (sidecar, 100 services, ${mode.name}): EDS of its EDS clusters unchanged`, () => {
      const proxy = benchProxy("sidecar");
      const objects = template("http").render({ services: 100, instances: 100 });
      const { eds } = cacheModeDigests("http", objects, mode, (push, registry, cache) => {
        const names = buildClusters(push, proxy, registry, cache)
          .filter((c) => c.clusterDiscoveryType.case === "type" && c.edsClusterConfig !== undefined)
          .map((c) => c.name);
        assert.ok(names.length > 0, "the http template has EDS clusters");
        const assignments = names.map((name) => buildLoadAssignment(push, proxy, registry, name, cache));
        assert.ok(
          assignments.some((a) => a.endpoints.length > 0),
          "some http template cluster has endpoints",
        );
        return { eds: assignments };
      });
      if (process.env.UPDATE_GOLDEN) console.log(`HTTP_GOLDEN = "${eds}"`);
      assert.equal(eds, HTTP_GOLDEN);
    });
  }
});
