import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import type { ProxyConfig } from "../config/index.ts";
import { nodeMetadata, parseDownwardAPI, proxyIdentity, serviceNode } from "./node.ts";

const POD_ENV = { POD_NAME: "echo-v1-abc", POD_NAMESPACE: "test", INSTANCE_IP: "10.0.0.7" };

test("the node id is sidecar~<pod IP>~<pod>.<namespace>~<namespace>.svc.cluster.local", () => {
  const identity = proxyIdentity(POD_ENV, { hostIPs: ["10.0.0.7", "192.168.1.4"] });
  assert.equal(serviceNode(identity), "sidecar~10.0.0.7~echo-v1-abc.test~test.svc.cluster.local");
  // The pod IP first, the host's other addresses after it, without repeats.
  assert.deepEqual(identity.ipAddresses, ["10.0.0.7", "192.168.1.4"]);
  assert.equal(
    serviceNode(proxyIdentity(POD_ENV, { type: "router", domain: "test.svc.example.org", hostIPs: [] })),
    "router~10.0.0.7~echo-v1-abc.test~test.svc.example.org",
  );
});

test("a host without private addresses adds 127.0.0.1 and ::1; an INSTANCE_IP that is no IP is ignored", () => {
  assert.deepEqual(proxyIdentity(POD_ENV, { hostIPs: [] }).ipAddresses, ["10.0.0.7", "127.0.0.1", "::1"]);
  assert.deepEqual(proxyIdentity({ ...POD_ENV, INSTANCE_IP: "nope" }, { hostIPs: [] }).ipAddresses, [
    "127.0.0.1",
    "::1",
  ]);
});

test("metadata: ISTIO_META_* keys Istio's BootstrapNodeMetadata knows, typed as Go marshals them", async () => {
  const { metadata, locality } = nodeMetadata({
    env: {
      ...POD_ENV,
      SERVICE_ACCOUNT: "echo",
      ISTIO_META_CLUSTER_ID: "Kubernetes",
      ISTIO_META_MESH_ID: "cluster.local",
      ISTIO_META_DNS_CAPTURE: "true",
      ISTIO_META_METADATA_DISCOVERY: "false",
      ISTIO_META_NOT_A_FIELD: "dropped",
      ISTIO_METAJSON_LABELS: '{"app":"echo","version":"v1"}',
      ENVOY_STATUS_PORT: "15021",
    },
    instanceIPs: ["10.0.0.7", "10.0.0.7", "fd00::7"],
    proxyConfig: {},
    podInfoDir: "/nonexistent",
  });
  assert.deepEqual(metadata, {
    PROXY_CONFIG: {},
    CLUSTER_ID: "Kubernetes",
    MESH_ID: "cluster.local",
    // StringBool: "true" kept, false omitted (omitempty).
    DNS_CAPTURE: "true",
    INSTANCE_IPS: "10.0.0.7,fd00::7",
    ENVOY_STATUS_PORT: 15021,
    ENVOY_PROMETHEUS_PORT: 15090,
    LABELS: { app: "echo", version: "v1" },
    STATIC_LABELS: { app: "echo", version: "v1" },
    NAME: "echo-v1-abc",
    NAMESPACE: "test",
    SERVICE_ACCOUNT: "echo",
  });
  assert.deepEqual(locality, {});
});

test("metadata: a StringBool takes every spelling of Go's strconv.ParseBool", () => {
  const read = (value: string) =>
    nodeMetadata({
      env: { ISTIO_META_DNS_CAPTURE: value },
      instanceIPs: [],
      proxyConfig: {},
      podInfoDir: "/nonexistent",
    }).metadata.DNS_CAPTURE;
  assert.deepEqual(["T", "True", "1"].map(read), ["true", "true", "true"]);
  assert.deepEqual(["F", "False", "0"].map(read), [undefined, undefined, undefined]);
});

test("metadata: a value of the wrong Go type fails as json.Unmarshal would", () => {
  assert.throws(
    () =>
      nodeMetadata({
        env: { ISTIO_META_DNS_CAPTURE: "maybe" },
        instanceIPs: [],
        proxyConfig: {},
        podInfoDir: "/nonexistent",
      }),
    /DNS_CAPTURE/,
  );
});

test("metadata: downward-API labels over the static ones, annotations, and the istio-locality label", async () => {
  const dir = await mkdtemp(join(tmpdir(), "podinfo-"));
  try {
    await writeFile(
      join(dir, "labels"),
      'app="echo"\npod-template-hash="5d8f"\nistio-locality="us-east1.us-east1-b.rack\\"7"\n',
    );
    await writeFile(join(dir, "annotations"), 'sidecar.istio.io/status="{\\"a\\":1}"\n');
    const { metadata, locality } = nodeMetadata({
      env: { ISTIO_METAJSON_LABELS: '{"version":"v1"}' },
      instanceIPs: [],
      proxyConfig: {},
      podInfoDir: dir,
    });
    assert.deepEqual(metadata.LABELS, {
      version: "v1",
      app: "echo",
      "istio-locality": 'us-east1/us-east1-b/rack"7',
    });
    assert.deepEqual(metadata.STATIC_LABELS, { version: "v1" });
    assert.deepEqual(metadata.ANNOTATIONS, { "sidecar.istio.io/status": '{"a":1}' });
    assert.deepEqual(locality, { region: "us-east1", zone: "us-east1-b", sub_zone: 'rack"7' });
  } finally {
    await rm(dir, { recursive: true });
  }
});

test("metadata: the ProxyConfig's ISTIO_META_ proxyMetadata, and PILOT_SAN for a mutual-TLS control plane", () => {
  const proxyConfig: ProxyConfig = {
    controlPlaneAuthPolicy: "MUTUAL_TLS",
    discoveryAddress: "istiod.istio-system.svc:15012",
    proxyMetadata: { ISTIO_META_NETWORK: "net1" },
  };
  const { metadata } = nodeMetadata({ env: {}, instanceIPs: [], proxyConfig, podInfoDir: "/nonexistent" });
  assert.equal(metadata.NETWORK, "net1");
  assert.deepEqual(metadata.PROXY_CONFIG, proxyConfig);
  assert.deepEqual(metadata.PILOT_SAN, ["istiod.istio-system.svc"]);
});

test('parseDownwardAPI reads key="quoted" lines and rejects an unquoted value', () => {
  assert.deepEqual(parseDownwardAPI('a="1"\nb="x=y"\n\n'), { a: "1", b: "x=y" });
  assert.throws(() => parseDownwardAPI("a=1x"));
});

test("metadata: POD_PORTS from the injector's multi-line list comes out as Go's compact PodPortList", () => {
  const { metadata } = nodeMetadata({
    env: {
      ISTIO_META_POD_PORTS:
        '[\n{"containerPort":7070,"name":"grpc","protocol":"TCP","hostPort":1}\n,{"containerPort":8080,"protocol":"TCP"}\n]',
    },
    instanceIPs: [],
    proxyConfig: {},
    podInfoDir: "/nonexistent",
  });
  assert.equal(
    metadata.POD_PORTS,
    '[{"name":"grpc","containerPort":7070,"protocol":"TCP"},{"containerPort":8080,"protocol":"TCP"}]',
  );
  assert.throws(() =>
    nodeMetadata({ env: { ISTIO_META_POD_PORTS: "[" }, instanceIPs: [], proxyConfig: {}, podInfoDir: "/x" }),
  );
});
