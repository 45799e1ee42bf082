// The kinds istiod reads only under a flag (XBackend and XBackendTrafficPolicy with
// PILOT_ENABLE_ALPHA_GATEWAY_API, InferencePool with ENABLE_GATEWAY_API_INFERENCE_EXTENSION), in a real
// cluster: watched into the store, converted live into what the static conversion (`sluice x convert`)
// makes of the same objects, and their statuses written through the status subresource. The
// InferencePool CRD comes from the Go module cache; its shadow Service is made by the InferencePoolServices
// controller, as sluiced runs it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ConfigObject, DEFAULT_MESH_CONFIG, kindKey } from "../../src/config/index.ts";
import {
  convertResources,
  inferencePoolServiceName,
  registryServiceView,
  staticServiceLookup,
} from "../../src/gatewayapi/index.ts";
import { kindClient } from "../../src/library/kube.ts";
import { storeGatewayConversion, storeRegistry } from "../../src/model/store-push.ts";
import { type Cluster, clusterSkipReason, inferencePoolCrdFile, sharedCluster } from "../cluster/index.ts";
import { normalise } from "../conformance/gateway-api-conversion.ts";
import { type GatewayControllers, startGatewayControllers } from "../support/gateway-controllers.ts";
import { waitFor } from "../support/xds-fixtures.ts";
import { GATED_BACKEND_REFS, GATEWAY_API_VERSION, gatedKindObjects, WEB_GATEWAY } from "./fixtures.ts";

const skip = clusterSkipReason();
const GWX = "gateway.networking.x-k8s.io/v1alpha1";
const INFERENCE = "inference.networking.k8s.io/v1";
const FEATURES = { alphaGatewayApi: true, inferenceExtension: true };

interface Condition {
  type: string;
  status: string;
  reason: string;
}
interface ParentStatus {
  parentRef?: { kind?: string; name?: string };
  ancestorRef?: { kind?: string; name?: string };
  conditions: Condition[];
}

describe("XBackend, XBackendTrafficPolicy and InferencePool, live", { skip }, () => {
  let cluster: Cluster;
  let ns: string;
  let sluice: GatewayControllers;

  const status = async (apiVersion: string, plural: string, name: string) =>
    (await cluster.must("GET", `/apis/${apiVersion}/namespaces/${ns}/${plural}/${name}`)).body.status ?? {};
  const accepted = (parents: ParentStatus[] | undefined, kind: string) =>
    parents?.find((p) => (p.parentRef ?? p.ancestorRef)?.kind === kind)?.conditions.find((c) => c.type === "Accepted");

  before(async () => {
    cluster = await sharedCluster();
    const crd = inferencePoolCrdFile();
    assert.ok(crd, "no gateway-api-inference-extension module in the Go module cache (npm run peers)");
    await cluster.installCrdFiles([crd]);
    ns = await cluster.namespace("gated");
    const route: ConfigObject = {
      apiVersion: GATEWAY_API_VERSION,
      kind: "HTTPRoute",
      metadata: { name: "shop", namespace: ns },
      spec: {
        parentRefs: [{ name: "web" }],
        hostnames: ["shop.example.com"],
        rules: [
          { backendRefs: [{ name: "web", port: 80 }] },
          ...GATED_BACKEND_REFS.map((ref) => ({ backendRefs: [ref] })),
        ],
      },
    };
    const web: ConfigObject = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: ns },
      spec: { ports: [{ name: "http", port: 80 }] },
    };
    const gateway = { ...WEB_GATEWAY, metadata: { ...WEB_GATEWAY.metadata, namespace: ns } };
    for (const obj of [gateway, web, ...gatedKindObjects(ns), route]) {
      await kindClient(cluster.kubeConfig(), obj.apiVersion, obj.kind).create(obj);
    }
    sluice = await startGatewayControllers(cluster.kubeConfig(), FEATURES);
  });

  after(() => sluice?.stop());

  test("each gets its status: XBackend and InferencePool parents, the traffic policy's ancestor", async () => {
    const xbackend = async () => (await status(GWX, "xbackends", "external")).parents as ParentStatus[] | undefined;
    await waitFor(async () => accepted(await xbackend(), "Gateway")?.status === "True", "XBackend's Gateway parent");
    assert.equal(accepted(await xbackend(), "XBackend")?.status, "True", "the XBackend itself, for the mesh");
    const policy = async () =>
      (await status(GWX, "xbackendtrafficpolicies", "web")).ancestors as ParentStatus[] | undefined;
    await waitFor(async () => accepted(await policy(), "Service")?.status === "True", "the policy's Service ancestor");
    // The pool's parents follow the route's status: the Gateway that accepted the route.
    const pool = async () => (await status(INFERENCE, "inferencepools", "pool")).parents as ParentStatus[] | undefined;
    await waitFor(async () => accepted(await pool(), "Gateway")?.status === "True", "the pool's Gateway parent");
    const resolved = (await pool())?.[0]?.conditions.find((c) => c.type === "ResolvedRefs");
    assert.equal(resolved?.status, "True", "the endpoint picker Service resolves");
  });

  test("the live conversion makes what the static one makes of the same objects", async () => {
    const shadow = { kind: kindKey("", "Service"), namespace: ns, name: inferencePoolServiceName("pool") };
    await waitFor(() => sluice.store.get(shadow) !== undefined, "the pool's shadow Service, made by the controller");
    await sluice.statuses.idle();
    const registry = storeRegistry(sluice.store, DEFAULT_MESH_CONFIG, "cluster.local");
    const live = storeGatewayConversion(sluice.store, registry, "cluster.local", FEATURES).get();
    assert.ok(live, "the conversion has run");
    // What the cluster holds: not the Istio config the live conversion wrote back into the store.
    const read = sluice.store
      .list()
      .filter((s) => s.source === "kubernetes")
      .map((s) => s.object);
    const services = staticServiceLookup(registryServiceView(registry).collection.list());
    const batch = convertResources(read, { domainSuffix: "cluster.local", alphaGatewayApi: true }, services);
    assert.deepEqual(normalise(live.config), normalise(batch.config));
    const kinds = new Set(live.config.map((c) => c.kind));
    assert.ok(kinds.has("DestinationRule"), "the XBackend's TLS and the traffic policy's retry budget");
    const routes = JSON.stringify(live.config.filter((c) => c.kind === "VirtualService"));
    assert.match(routes, /api\.example\.net/, "the route to the XBackend");
    assert.match(routes, new RegExp(`${inferencePoolServiceName("pool")}\\.${ns}`), "the route to the pool");
  });
});
