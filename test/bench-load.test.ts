// The load benchmark's pieces (bench/load/) against a real discovery server in this process: the
// generated mesh loads from files without problems, the sidecar-like streams sync over SotW and delta
// (CDS → EDS → LDS → RDS) and see what the Sidecar scoping lets them see, a change written to the
// directory reaches the streams, and the wire reader agrees with the encoder.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Server, ServerCredentials, type ServerDuplexStream, status } from "@grpc/grpc-js";
import { type ChangeReport, describeChange, pooledChanges } from "../bench/load/measure-plane.ts";
import { clusterOf, type MeshShape, proxyIdentity, writeEndpointChange, writeMesh } from "../bench/load/mesh.ts";
import type { Protocol } from "../bench/load/messages.ts";
import { SidecarStream } from "../bench/load/sidecar-stream.ts";
import {
  clusterEdsName,
  encodedResourceNames,
  parseDeltaResponse,
  parseSotwResponse,
  sotwRequest,
} from "../bench/load/wire.ts";
import { grpcServiceDefinition } from "../src/api/grpc-service.ts";
import { cluster, discovery } from "../src/api/index.ts";
import { outgoingBytes } from "../src/api/outgoing-response.ts";
import { ConfigStore, FileSource } from "../src/sources/index.ts";
import { NO_MEMOS } from "../src/util/memo.ts";
import { encodeDeltaResponse, encodeSotwResponse } from "../src/xds/encode.ts";
import { type Discovery, encodeResource, TypeUrl } from "../src/xds/index.ts";
import { anyViolations } from "./support/pgv.ts";
import { startStoreDiscovery } from "./support/store-discovery.ts";
import { waitFor } from "./support/xds-fixtures.ts";

const SHAPE: MeshShape = { kind: "scoped", services: 20, endpoints: 2 };

let dir: string;
let files: FileSource;
let server: Discovery;
const store = new ConfigStore();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "bench-load-test-"));
  writeMesh(dir, SHAPE);
  files = new FileSource({ dir, store, debounceMs: 10 });
  await files.start();
  server = await startStoreDiscovery(store, { debounce: { afterMs: 10, maxMs: 1000, edsDebounce: true } });
});

after(async () => {
  await server.stop(0);
  await files.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("the generated mesh loads without problems", () => {
  assert.deepEqual(store.problems(), []);
  // Per service a Service, an EndpointSlice and a Pod per endpoint; a Sidecar per namespace.
  assert.equal(store.list().length, SHAPE.services * (2 + SHAPE.endpoints) + 10 + 1 + 1);
});

/** Opens a stream for proxy i and resolves once it is synced; the caller closes it. */
function synced(protocol: Protocol, i: number, onResponse: (bytes: Buffer) => void = () => {}) {
  return new Promise<SidecarStream>((resolve, reject) => {
    const stream = new SidecarStream(proxyIdentity(SHAPE, i), protocol, {
      onResponse: (_stream, _type, bytes) => onResponse(bytes),
      onSynced: (s) => resolve(s),
      onRetry: (_s, error) => reject(error ?? new Error("stream ended before sync")),
    });
    stream.open(`127.0.0.1:${server.ports.grpcPort}`);
  });
}

for (const protocol of ["sotw", "delta"] as const) {
  test(`${protocol}: a sidecar syncs and sees only its namespace's services, in valid config`, async () => {
    const responses: Buffer[] = [];
    const stream = await synced(protocol, 0, (bytes) => responses.push(bytes));
    try {
      const resources =
        protocol === "sotw"
          ? responses.flatMap((r) => fromBinary(discovery.DiscoveryResponseSchema, r).resources)
          : responses.flatMap((r) =>
              fromBinary(discovery.DeltaDiscoveryResponseSchema, r).resources.flatMap((x) => x.resource ?? []),
            );
      assert.deepEqual(
        new Set(resources.map((any) => any.typeUrl)),
        new Set([TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route]),
      );
      for (const any of resources) assert.deepEqual(anyViolations(any), []);
      const eds = [...stream.edsNames];
      assert.ok(eds.includes(clusterOf(0)), `${clusterOf(0)} not among ${eds.join(", ")}`);
      // svc-1 lives in ns-1, outside proxy 0's Sidecar egress.
      assert.ok(!eds.includes(clusterOf(1)));
      assert.equal(eds.length, SHAPE.services / 10);
    } finally {
      stream.close();
    }
  });
}

test("an endpoint change written to the directory reaches the stream", async () => {
  let sawNewEndpoint = false;
  const stream = await synced("delta", 0, (bytes) => {
    if (bytes.includes("10.200.0.7")) sawNewEndpoint = true;
  });
  try {
    writeEndpointChange(dir, SHAPE, 7);
    await waitFor(() => sawNewEndpoint, "the added endpoint");
  } finally {
    stream.close();
  }
});

test("the wire reader reads what the encoder writes", () => {
  const eds = create(cluster.ClusterSchema, {
    name: "outbound|80||a",
    clusterDiscoveryType: { case: "type", value: cluster.Cluster_DiscoveryType.EDS },
    edsClusterConfig: { serviceName: "outbound|80||a" },
  });
  const staticCluster = create(cluster.ClusterSchema, {
    name: "static",
    clusterDiscoveryType: { case: "type", value: cluster.Cluster_DiscoveryType.STATIC },
  });
  const resources = [eds, staticCluster].map((resource) => encodeResource({ name: resource.name, resource }));
  const sotw = parseSotwResponse(
    outgoingBytes(
      encodeSotwResponse(NO_MEMOS, { versionInfo: "v1", typeUrl: TypeUrl.Cluster, nonce: "n1", resources }),
    ),
  );
  assert.deepEqual([sotw.typeUrl, sotw.nonce, sotw.version], [TypeUrl.Cluster, "n1", "v1"]);
  assert.deepEqual(
    sotw.resources.map((r) => clusterEdsName(r.value)),
    [{ name: "outbound|80||a", eds: "outbound|80||a" }, { name: "static" }],
  );
  const delta = parseDeltaResponse(
    outgoingBytes(
      encodeDeltaResponse(NO_MEMOS, {
        systemVersionInfo: "v2",
        typeUrl: TypeUrl.Cluster,
        nonce: "n2",
        resources,
        removed: ["gone"],
      }),
    ),
  );
  assert.deepEqual(
    delta.resources.map((r) => r.name),
    ["outbound|80||a", "static"],
  );
  assert.deepEqual([delta.version, delta.nonce, delta.removed], ["v2", "n2", ["gone"]]);
});

test("a SotW request written with its names encoded once is the bytes of the whole request encoded", () => {
  const names = ["outbound|80||a.ns.svc.cluster.local", "outbound|9080||b.ns.svc.cluster.local"];
  const node = { id: "sidecar~10.0.0.1~a.ns~ns.svc.cluster.local", cluster: "a.ns" };
  for (const fields of [
    { node, versionInfo: "", typeUrl: TypeUrl.Endpoint, responseNonce: "" },
    { versionInfo: "2026-12-07T22:00:00Z/7", typeUrl: TypeUrl.Endpoint, responseNonce: "n-7" },
  ]) {
    const whole = toBinary(
      discovery.DiscoveryRequestSchema,
      create(discovery.DiscoveryRequestSchema, { ...fields, resourceNames: names }),
    );
    assert.deepEqual(new Uint8Array(sotwRequest(fields, encodedResourceNames(names))), whole);
  }
});

test("a stream the server refuses is opened again, from a new node request, after Envoy's backoff", async () => {
  // As istiod refuses streams over its request rate limit: the first stream fails with RESOURCE_EXHAUSTED.
  const opened: discovery.DiscoveryRequest[] = [];
  const refusing = new Server();
  refusing.addService(grpcServiceDefinition(discovery.AggregatedDiscoveryService), {
    streamAggregatedResources(call: ServerDuplexStream<discovery.DiscoveryRequest, Uint8Array>) {
      call.once("data", (req: discovery.DiscoveryRequest) => {
        opened.push(req);
        if (opened.length === 1) call.emit("error", { code: status.RESOURCE_EXHAUSTED, details: "rate limit" });
      });
      call.on("error", () => {});
    },
    deltaAggregatedResources() {},
  });
  const port = await new Promise<number>((resolve, reject) =>
    refusing.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const retries: { message?: string; delayMs: number }[] = [];
  const stream = new SidecarStream(proxyIdentity(SHAPE, 0), "sotw", {
    onResponse: () => {},
    onSynced: () => {},
    onRetry: (_s, error, delayMs) => retries.push({ message: error?.message, delayMs }),
  });
  stream.open(`127.0.0.1:${port}`);
  try {
    await waitFor(() => opened.length === 2, "the second stream");
    assert.equal(retries.length, 1);
    assert.match(retries[0].message ?? "", /RESOURCE_EXHAUSTED|rate limit/);
    assert.ok(retries[0].delayMs >= 0 && retries[0].delayMs < 500, `first delay ${retries[0].delayMs} ms`);
    // The new stream starts over: CDS with the node, as Envoy's first request on a stream.
    assert.equal(opened[1].typeUrl, TypeUrl.Cluster);
    assert.equal(opened[1].node?.id, proxyIdentity(SHAPE, 0).id);
  } finally {
    stream.close();
    refusing.forceShutdown();
  }
});

test("changes pooled: every latency together, bytes, responses and CPU per change", () => {
  const report = (latenciesMs: number[], bytes: number, missing: number): ChangeReport => ({
    changes: 1,
    proxies: latenciesMs.length,
    missing,
    p50Ms: Number.NaN,
    p99Ms: Number.NaN,
    maxMs: Number.NaN,
    bytes,
    bytesByType: { EDS: bytes },
    responsesByType: { EDS: latenciesMs.length },
    fractionOfFullPush: bytes / 1000,
    cpuSeconds: bytes / 100,
    latenciesMs,
  });
  const pooled = pooledChanges([report([1, 2, 3], 30, 0), report([10, 20, 30], 10, 1)]);
  assert.deepEqual(pooled.latenciesMs, [1, 2, 3, 10, 20, 30]);
  assert.equal(pooled.changes, 2);
  assert.equal(pooled.proxies, 3);
  assert.equal(pooled.missing, 1);
  assert.equal(pooled.p50Ms, 10);
  assert.equal(pooled.maxMs, 30);
  assert.equal(pooled.bytes, 20);
  assert.deepEqual(pooled.bytesByType, { EDS: 20 });
  assert.deepEqual(pooled.responsesByType, { EDS: 3 });
  assert.equal(pooled.cpuSeconds, 0.2);
  // Fifteen changes to 200 proxies each: the mean response count per change is 200, written so.
  const fifteen = pooledChanges(Array.from({ length: 15 }, () => report(Array(200).fill(5), 10, 0)));
  assert.match(describeChange(fifteen, "sluiced"), /EDS 0\.0 kB in 200\)$/);
});
