// sluiced in a real cluster takes its mesh config from the `istio` ConfigMap of its namespace, as
// istiod does without a mounted file, and follows it (issue 29): bin/sluiced.js with --kubeconfig and
// no --meshConfig, a sidecar on SotW ADS. A change of the ConfigMap's `mesh` key is in force at once
// (/debug/mesh) and pushed (the sidecar's outbound catch-all no longer passes traffic through once
// the outbound policy becomes REGISTRY_ONLY); a change that does not load is logged and changes nothing.
// A change of its `meshNetworks` key is in force too (/debug/networkz lists the new gateway).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { discovery } from "../../src/api/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { SotwClient, sidecarNode } from "../support/ads-client.ts";
import { eventually, type Sluiced, startSluiced } from "./mesh.ts";

const skip = clusterSkipReason();
const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";

describe("sluiced follows the mesh config in the istio ConfigMap", { skip }, () => {
  let cluster: Cluster;
  let system: string;
  let app: string;
  let label: string;
  let sluiced: Sluiced | undefined;
  let client: SotwClient | undefined;
  const configMapPath = () => `/api/v1/namespaces/${system}/configmaps/istio`;
  const meshText = (extra: string) => `discoverySelectors:\n- matchLabels:\n    sluice.test/mesh: ${label}\n${extra}`;
  const setMesh = async (text: string) => {
    const current = await cluster.must("GET", configMapPath());
    await cluster.must("PUT", configMapPath(), { ...current.body, data: { mesh: text } });
  };
  const activeMesh = async () => (await sluiced?.debug("mesh")) as { outboundTrafficPolicy?: { mode?: string } };
  /** The sidecar's virtualOutbound listener, as bytes read as text. */
  const catchAll = (res: discovery.DiscoveryResponse) =>
    res.resources.map((r) => Buffer.from(r.value).toString("latin1")).find((l) => l.includes("virtualOutbound")) ?? "";

  before(async () => {
    cluster = await sharedCluster();
    label = `mesh-config-${Date.now().toString(36)}`;
    system = await cluster.namespace("sluice-mesh", { "sluice.test/mesh": label });
    app = await cluster.namespace("mesh-app", { "sluice.test/mesh": label });
    await cluster.must("POST", `/api/v1/namespaces/${system}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "istio" },
      data: { mesh: meshText("") },
    });
    sluiced = await startSluiced(cluster.kubeconfigPath, {
      env: { POD_NAMESPACE: system, POD_NAME: "sluiced-mesh-0" },
    });
    client = SotwClient.connect(sluiced.grpcAddress);
  });
  after(async () => {
    client?.close();
    await sluiced?.stop();
  });

  test("a changed mesh key is in force and pushed; one that does not load changes nothing", async () => {
    assert.equal((await activeMesh()).outboundTrafficPolicy?.mode, "ALLOW_ANY");
    const first = await (client as SotwClient).requestAndAck({ node: sidecarNode("app-1", app), typeUrl: LDS });
    assert.ok(catchAll(first).includes("PassthroughCluster"), "ALLOW_ANY passes unknown traffic through");

    await setMesh(meshText("outboundTrafficPolicy:\n  mode: REGISTRY_ONLY\n"));
    const pushed = await (client as SotwClient).next();
    client?.ack(pushed);
    assert.equal(pushed.typeUrl, LDS);
    assert.ok(!catchAll(pushed).includes("PassthroughCluster"), "REGISTRY_ONLY passes nothing through");
    assert.equal((await activeMesh()).outboundTrafficPolicy?.mode, "REGISTRY_ONLY");

    await setMesh(meshText("connectTimeout: 1x\n"));
    await eventually("the refused change logged", async () => ({
      ok: sluiced?.tail(50).includes("mesh config not changed: it does not load") ?? false,
      seen: sluiced?.tail(3),
    }));
    assert.equal((await activeMesh()).outboundTrafficPolicy?.mode, "REGISTRY_ONLY");
  });

  test("a changed meshNetworks key is in force: its gateways are pushed", async () => {
    const current = await cluster.must("GET", configMapPath());
    await cluster.must("PUT", configMapPath(), {
      ...current.body,
      data: {
        ...current.body.data,
        meshNetworks:
          "networks: {west: {endpoints: [{fromRegistry: west}], gateways: [{address: 192.0.2.7, port: 15443}]}}\n",
      },
    });
    await eventually("the new network gateway in force", async () => {
      const gateways = JSON.stringify(await sluiced?.debug("networkz"));
      return { ok: gateways.includes("192.0.2.7"), seen: gateways };
    });
    assert.ok(sluiced?.tail(100).includes("mesh networks changed"));
  });
});
