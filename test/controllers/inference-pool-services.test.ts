// InferencePools beside istiod (ENABLE_GATEWAY_API_INFERENCE_EXTENSION on both sides), on a cluster of
// their own: each side gets a Gateway, an endpoint picker Service, an InferencePool and an HTTPRoute to it;
// Sluice runs its Kubernetes source, the live conversion with its status writer and the shadow Service
// controller as sluiced runs them. The shadow Service (field by field, field manager included), the pool's
// status and the route's status must be istiod's.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ConfigObject } from "../../src/config/index.ts";
import { inferencePoolServiceName } from "../../src/gatewayapi/index.ts";
import { type Cluster, clusterSkipReason, inferencePoolCrdFile } from "../cluster/index.ts";
import { peersSkipReason } from "../peers/paths.ts";
import { type GatewayControllers, startGatewayControllers } from "../support/gateway-controllers.ts";
import { type IstiodBeside, startIstiodBeside } from "../support/istiod-beside.ts";
import { waitFor } from "../support/xds-fixtures.ts";

const skip = clusterSkipReason() ?? peersSkipReason("istiod");
const SELECT_LABEL = "sluice.test/inference-pool";
const FEATURES = { alphaGatewayApi: false, inferenceExtension: true };
const POOL = "pool";

/** What each side is given, in its namespace. */
function objects(): ConfigObject[] {
  return [
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "gateway" },
      spec: { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "epp" },
      spec: { ports: [{ name: "grpc", port: 9002 }], selector: { app: "epp" } },
    },
    {
      apiVersion: "inference.networking.k8s.io/v1",
      kind: "InferencePool",
      metadata: { name: POOL },
      spec: {
        selector: { matchLabels: { app: "model" } },
        targetPorts: [{ number: 8000 }, { number: 8001 }],
        appProtocol: "http",
        endpointPickerRef: { name: "epp", port: { number: 9002 }, failureMode: "FailOpen" },
      },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name: "route" },
      spec: {
        parentRefs: [{ name: "gateway" }],
        rules: [{ backendRefs: [{ group: "inference.networking.k8s.io", kind: "InferencePool", name: POOL }] }],
      },
    },
  ];
}

const collection = (obj: ConfigObject, ns: string) => {
  const plural = `${obj.kind.toLowerCase()}s`;
  const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/") : ["", obj.apiVersion];
  return `${group ? `/apis/${group}` : "/api"}/${version}/namespaces/${ns}/${plural}`;
};

/** An object as both sides should have it: what differs by namespace, identity and time replaced. */
function comparable(value: unknown, ns: string): unknown {
  const text = JSON.stringify(value, (key, v) =>
    ["uid", "resourceVersion", "creationTimestamp", "time", "lastTransitionTime", "clusterIP", "clusterIPs"].includes(
      key,
    )
      ? "-"
      : v,
  );
  // Owner references are keyed by uid in managedFields.
  return JSON.parse(text.replaceAll(ns, "<ns>").replace(/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}/g, "<uid>"));
}

describe("InferencePools against istiod", { skip: skip ?? false }, () => {
  let beside: IstiodBeside;
  let cluster: Cluster;
  let sides: IstiodBeside["namespaces"];
  let sluice: GatewayControllers;

  before(async () => {
    const crd = inferencePoolCrdFile();
    assert.ok(crd, "no gateway-api-inference-extension module in the Go module cache (npm run peers)");
    beside = await startIstiodBeside({
      selectLabel: SELECT_LABEL,
      name: "inference-pool",
      env: { ENABLE_GATEWAY_API_INFERENCE_EXTENSION: "true" },
      prepare: (cluster) => cluster.installCrdFiles([crd]),
    });
    cluster = beside.cluster;
    sides = beside.namespaces;
    sluice = await startGatewayControllers(cluster.kubeConfig(), FEATURES, [
      { matchLabels: { [SELECT_LABEL]: "sluice" } },
    ]);
    for (const ns of [sides.istiod, sides.sluice]) {
      for (const obj of objects()) await cluster.must("POST", collection(obj, ns), obj);
    }
  });

  after(async () => {
    sluice?.stop();
    await beside?.stop();
  });

  const read = async (ns: string, path: string) => (await cluster.request("GET", `${path}`.replace("<ns>", ns))).body;
  const servicePath = `/api/v1/namespaces/<ns>/services/${inferencePoolServiceName(POOL)}`;
  const poolPath = `/apis/inference.networking.k8s.io/v1/namespaces/<ns>/inferencepools/${POOL}`;
  const routePath = "/apis/gateway.networking.k8s.io/v1/namespaces/<ns>/httproutes/route";

  test("the pool's shadow Service is istiod's, field managers included", async () => {
    for (const ns of [sides.istiod, sides.sluice]) {
      await waitFor(async () => (await cluster.request("GET", servicePath.replace("<ns>", ns))).status === 200, ns);
    }
    const [istiod, sluice] = await Promise.all([read(sides.istiod, servicePath), read(sides.sluice, servicePath)]);
    const { managedFields: istiodFields, ...istiodService } = istiod.metadata;
    const { managedFields: sluiceFields, ...sluiceService } = sluice.metadata;
    assert.deepEqual(
      comparable({ ...sluice, metadata: sluiceService }, sides.sluice),
      comparable({ ...istiod, metadata: istiodService }, sides.istiod),
    );
    assert.deepEqual(comparable(sluiceFields, sides.sluice), comparable(istiodFields, sides.istiod));
  });

  test("the pool's and the route's statuses are istiod's, but for the pool's parent group", async () => {
    const parents = async (ns: string) => ((await read(ns, poolPath)).status?.parents ?? []).length;
    for (const ns of [sides.istiod, sides.sluice]) await waitFor(async () => (await parents(ns)) > 0, `${ns} pool`);
    for (const path of [poolPath, routePath]) {
      const [istiod, sluice] = await Promise.all([read(sides.istiod, path), read(sides.sluice, path)]);
      // istiod names its own Gateway kind's group (gvk.Gateway) for the Gateway API Gateway (DIFFERENCES.md).
      for (const parent of path === poolPath ? istiod.status.parents : []) {
        assert.equal(parent.parentRef.group, "networking.istio.io");
        parent.parentRef.group = "gateway.networking.k8s.io";
      }
      assert.deepEqual(comparable(sluice.status, sides.sluice), comparable(istiod.status, sides.istiod), path);
    }
  });
});
