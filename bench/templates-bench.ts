// Istio's pilot/pkg/xds/bench_test.go over the rendered templates: BenchmarkInitPushContext, the
// Cluster/Listener/Route/NameTable/SecretGeneration benchmarks, BenchmarkEndpointGeneration, and the
// cost of encoding a response with and without Sluice's per-object encode cache.
// Istio runs its benchmarks with the XDS cache off (configureBenchmark); so do these
// (PILOT_ENABLE_XDS_CACHE=false: the pushes' `xdsCache` feature), and every generation run gets a fresh
// push context, made untimed. As in Istio's
// setup, the proxy's SidecarScope, service targets (and a router's merged Gateways) are computed before the timed run; the push context's other indexes are
// built lazily, so the first generation on a push pays for the ones it reads (Istio: in InitPushContext). As Istio's, a generation run includes
// marshalling each resource into an Any (encodeResource; fresh objects are never in the encode cache).
// Each generation benchmark runs on Go's testing schedule (measureFor): rounds of b.N = 1, 100, ...
// runs until a round takes a second of timed work (-benchtime=1s), of which only the last is reported.
import { clone, type Message } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { registry as apiRegistry } from "../src/api/index.ts";
import { outgoingBytes } from "../src/api/outgoing-response.ts";
import type { ConfigObject } from "../src/config/index.ts";
import {
  buildClusters,
  buildListeners,
  buildLoadAssignment,
  buildRouteConfiguration,
  routeNames,
  XdsCache,
} from "../src/configgen/index.ts";
import type { MeshPush, ProxyNode } from "../src/model/index.ts";
import { storePush } from "../src/model/store-push.ts";
import { NO_MEMOS } from "../src/util/memo.ts";
import { encodeSotwResponse } from "../src/xds/encode.ts";
import { buildNameTable } from "../src/xds/generators/nds.ts";
import { buildSecrets } from "../src/xds/generators/sds.ts";
import { encodeResource, storeSecrets } from "../src/xds/index.ts";
import { measure, measureFor } from "./measure.ts";
import type { BenchResult } from "./run.ts";
import { BENCH_MESH, benchProxy, DOMAIN_SUFFIX, template, templateState } from "./templates.ts";

export interface MicroOptions {
  /** Services per template; undefined: each template's size in Istio's benchmark (100, `gateways*` 1,000). */
  services: number | undefined;
  /** Timed work per generation benchmark, as Go's -benchtime: rounds grow until one takes this long. */
  benchtimeMs: number;
  /** Timed runs of the encode benchmarks. */
  runs: number;
  /** Templates to run the per-type generation benchmarks over. */
  templates: readonly string[];
  /** Which groups to run: templates, eds, sds, encode. */
  groups: readonly string[];
}

export const DEFAULT_MICRO: MicroOptions = {
  services: undefined,
  benchtimeMs: 1000,
  runs: 50,
  templates: [
    "http",
    "empty",
    "empty-2020",
    "virtualservice",
    "tcp",
    "telemetry-api",
    "gateways",
    "gateways-shared",
    "knative-gateway",
  ],
  groups: ["templates", "eds", "sds", "encode"],
};

/** Bytes of an encoded Any's `value`: what Istio's kb/msg counts. */
function anyValueBytes(any: Uint8Array): number {
  const reader = new BinaryReader(any);
  let bytes = 0;
  while (reader.pos < reader.len) {
    const [field] = reader.tag();
    const value = reader.bytes();
    if (field === 2) bytes = value.length;
  }
  return bytes;
}

/** Encodes every resource as the server does. */
function encodeAll(messages: readonly Message[]): void {
  for (const resource of messages) encodeResource({ name: "", resource });
}

/** Istio's per-message figures of encoded resources (counted outside the timed runs, as Istio's logDebug). */
function messageSize(messages: readonly Message[]): { resourcesPerMsg: number; bytesPerMsg: number } {
  let bytes = 0;
  for (const resource of messages) bytes += anyValueBytes(encodeResource({ name: "", resource }).any);
  return { resourcesPerMsg: messages.length, bytesPerMsg: bytes };
}

interface Fixture {
  proxy: ProxyNode;
  newPush(): MeshPush;
  /** The xDS cache the runs share (as a server's generators share one): its memo tables hold across runs. */
  cache: XdsCache;
}

/** A template's store and registry, and the proxy Istio benchmarks it with. */
function fixture(objects: readonly ConfigObject[], proxy: ProxyNode): Fixture & ReturnType<typeof templateState> {
  const state = templateState(objects);
  const newPush = () =>
    storePush(state.store, state.registry, BENCH_MESH, DOMAIN_SUFFIX, undefined, { xdsCache: false });
  return { ...state, proxy, newPush, cache: new XdsCache() };
}

/**
 * Times `generate` (plus encoding its output) on a fresh push per run, and reports the resources
 * and bytes of the last run's response. Each push is made before its run, untimed, and dropped after
 * it: pushes made up front stayed alive with their memos, and collecting them fell into the timed runs.
 */
function generation(f: Fixture, benchtimeMs: number, generate: (push: MeshPush) => readonly Message[]) {
  let push: MeshPush;
  let last: readonly Message[] = [];
  const timing = measureFor(
    benchtimeMs,
    () => {
      last = generate(push);
      encodeAll(last);
    },
    () => {
      push = f.newPush();
      // Istio's setup computes the proxy's SidecarScope, a router's merged Gateways and the proxy's
      // service targets (SetSidecarScope, SetGatewaysForProxy, SetServiceTargets), outside the timed loop.
      const snap = push.snapshot;
      snap.sidecarScope(f.proxy);
      if (f.proxy.type === "router") snap.mergedGateway(f.proxy);
      snap.serviceTargets(f.proxy);
    },
  );
  if (last.length === 0) throw new Error("generation produced no resources");
  return { ...timing, ...messageSize(last) };
}

/** Push-context build and CDS/LDS/RDS(/NDS for sidecars) generation over one template. */
function templateBenchmarks(name: string, options: MicroOptions): BenchResult[] {
  const t = template(name);
  const services = options.services ?? t.services ?? 100;
  const f = fixture(t.render({ services, instances: services }), benchProxy(t.proxy));
  const { proxy, registry } = f;
  const time = options.benchtimeMs;
  const routes = routeNames(buildListeners(f.newPush(), proxy, registry, f.cache));
  const label = (what: string) => `templates: ${name}, ${services} services, ${what} (${t.proxy})`;
  const results: BenchResult[] = [
    { name: label("push-context build"), ...measureFor(time, f.newPush) },
    {
      name: label("CDS generation"),
      ...generation(f, time, (push) => buildClusters(push, proxy, registry, f.cache)),
    },
    {
      name: label("LDS generation"),
      ...generation(f, time, (push) => buildListeners(push, proxy, registry, f.cache)),
    },
  ];
  if (routes.length > 0) {
    const rds = (push: MeshPush) => routes.flatMap((r) => buildRouteConfiguration(push, proxy, r, f.cache) ?? []);
    results.push({ name: label("RDS generation"), ...generation(f, time, rds) });
  }
  if (proxy.type === "sidecar") {
    const nds = (push: MeshPush) => [buildNameTable(push, proxy, registry) ?? []].flat();
    results.push({ name: label("NDS generation"), ...generation(f, time, nds) });
  }
  return results;
}

/**
 * Istio's createEndpointsConfig: `services` ServiceEntries `foo-s.com` on HTTP 80, each with
 * `endpoints` endpoints spread over 4 networks, and the PeerAuthentications EDS consults.
 */
export function endpointsConfig(endpoints: number, services: number): ConfigObject[] {
  const NETWORKING = "networking.istio.io/v1";
  const objects: ConfigObject[] = [];
  for (let s = 0; s < services; s++) {
    objects.push({
      apiVersion: NETWORKING,
      kind: "ServiceEntry",
      metadata: { name: `foo-${s}`, namespace: "default" },
      spec: {
        hosts: [`foo-${s}.com`],
        ports: [{ number: 80, name: "http-port", protocol: "HTTP" }],
        resolution: "STATIC",
        endpoints: Array.from({ length: endpoints }, (_, e) => ({
          labels: { type: "eds-benchmark", app: `foo-${s}` },
          address: `111.${Math.floor(e / 65536)}.${Math.floor(e / 256) % 256}.${e % 256}`,
          network: `network-${e % 4}`,
          serviceAccount: "something",
        })),
      },
    });
  }
  const peerAuthentication = (name: string, namespace: string, spec: unknown): ConfigObject => ({
    apiVersion: "security.istio.io/v1",
    kind: "PeerAuthentication",
    metadata: { name, namespace },
    spec,
  });
  objects.push(
    peerAuthentication("global", "istio-system", { mtls: { mode: "PERMISSIVE" } }),
    peerAuthentication("namespace", "default", { mtls: { mode: "DISABLE" } }),
    peerAuthentication("selector", "default", {
      selector: { matchLabels: { type: "eds-benchmark" } },
      mtls: { mode: "DISABLE" },
    }),
  );
  return objects;
}

/** BenchmarkEndpointGeneration: the load assignments of every service for a sidecar at 10.3.3.3. */
function endpointBenchmarks(benchtimeMs: number): BenchResult[] {
  const cases = [
    [1, 100],
    [10, 10],
    [100, 10],
    [1000, 1],
  ] as const;
  return cases.map(([endpoints, services]) => {
    const proxy = benchProxy("sidecar", { ip: "10.3.3.3", id: "random.default", labels: {} });
    const f = fixture(endpointsConfig(endpoints, services), proxy);
    const clusters = Array.from({ length: services }, (_, s) => `outbound|80||foo-${s}.com`);
    const eds = (push: MeshPush) => clusters.map((c) => buildLoadAssignment(push, proxy, f.registry, c, f.cache));
    return {
      name: `EDS generation, ${endpoints} endpoints / ${services} services`,
      ...generation(f, benchtimeMs, eds),
    };
  });
}

/** A Gateway in the benchmark router's namespace referencing `count` TLS credentials `sds-credential-<i>`. */
export function credentialsGateway(count: number): ConfigObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "Gateway",
    metadata: { name: "credentials", namespace: "default" },
    spec: {
      selector: { "istio.io/benchmark": "true" },
      servers: Array.from({ length: count }, (_, i) => ({
        port: { number: 443, name: `https-${i}`, protocol: "HTTPS" },
        hosts: [`s${i}.example.com`],
        tls: { mode: "SIMPLE", credentialName: `sds-credential-${i}` },
      })),
    },
  };
}

/**
 * BenchmarkSecretGeneration: a router asking for `count` TLS credentials. Istio turns its Secret
 * authorization off; Sluice serves a router only what its Gateways reference, so a Gateway in the
 * proxy's namespace references each credential.
 */
function secretBenchmarks(benchtimeMs: number): BenchResult[] {
  return [10, 1000].map((count) => {
    const gateway = credentialsGateway(count);
    const f = fixture(
      [...template("secrets").render({ services: count, instances: 0 }), gateway],
      benchProxy("router"),
    );
    const secrets = storeSecrets(f.store);
    const names = Array.from({ length: count }, (_, i) => `kubernetes://sds-credential-${i}`);
    const sds = (push: MeshPush) => buildSecrets(push, f.proxy, secrets, names);
    return { name: `SDS generation, ${count} secrets (router)`, ...generation(f, benchtimeMs, sds) };
  });
}

/**
 * A whole CDS response for the http template's sidecar, encoded from messages never encoded before
 * (what one proxy costs) and from messages already encoded (what every further proxy sharing them costs).
 */
function encodeBenchmarks(options: MicroOptions): BenchResult[] {
  const services = options.services ?? 100;
  const f = fixture(template("http").render({ services, instances: 0 }), benchProxy("sidecar"));
  const clusters = buildClusters(f.newPush(), f.proxy, f.registry, f.cache);
  const copies = Array.from({ length: options.runs }, () =>
    clusters.map((c) => clone(apiRegistry.getMessage(c.$typeName) ?? fail(c.$typeName), c)),
  );
  const response = (messages: readonly Message[]) =>
    outgoingBytes(
      encodeSotwResponse(NO_MEMOS, {
        versionInfo: "v",
        typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
        nonce: "n",
        resources: messages.map((resource) => encodeResource({ name: "", resource })),
      }),
    );
  response(clusters);
  const label = `encode: CDS response, http, ${services} services (${clusters.length} clusters)`;
  return [
    { name: `${label}, uncached`, ...measure(options.runs, (run) => response(copies[run])) },
    { name: `${label}, cached`, ...measure(options.runs, () => response(clusters)) },
  ];
}

function fail(typeName: string): never {
  throw new Error(`${typeName} is not in the API registry`);
}

export function benchTemplates(options: MicroOptions = DEFAULT_MICRO): BenchResult[] {
  const groups: Record<string, () => BenchResult[]> = {
    templates: () => options.templates.flatMap((name) => templateBenchmarks(name, options)),
    eds: () => endpointBenchmarks(options.benchtimeMs),
    sds: () => secretBenchmarks(options.benchtimeMs),
    encode: () => encodeBenchmarks(options),
  };
  return options.groups.flatMap((group) => {
    const run = groups[group];
    if (!run) throw new Error(`no benchmark group ${group} (${Object.keys(groups).join(", ")})`);
    return run();
  });
}
