import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { agentProxyConfig, podGrpcBootstrap } from "./agent.ts";

test("the ProxyConfig: Istio's defaults, the mesh file's defaultConfig, then PROXY_CONFIG field by field", async () => {
  const dir = await mkdtemp(join(tmpdir(), "agent-mesh-"));
  try {
    const defaults = agentProxyConfig({}, join(dir, "absent"));
    assert.equal(defaults.discoveryAddress, "istiod.istio-system.svc:15012");
    assert.equal(defaults.statusPort, 15020);
    assert.equal(defaults.controlPlaneAuthPolicy, "MUTUAL_TLS");

    const meshFile = join(dir, "mesh");
    await writeFile(
      meshFile,
      "defaultConfig:\n  discoveryAddress: istiod.mesh:15012\n  proxyMetadata:\n    ISTIO_META_DNS_CAPTURE: 'true'\n",
    );
    const merged = agentProxyConfig(
      { PROXY_CONFIG: "statusPort: 16020\nproxyMetadata:\n  ISTIO_META_NETWORK: net1\n" },
      meshFile,
    );
    assert.equal(merged.discoveryAddress, "istiod.mesh:15012");
    assert.equal(merged.statusPort, 16020);
    assert.deepEqual(merged.proxyMetadata, { ISTIO_META_DNS_CAPTURE: "true", ISTIO_META_NETWORK: "net1" });
    assert.throws(() => agentProxyConfig({ PROXY_CONFIG: "- a list" }, meshFile), /not a ProxyConfig/);
  } finally {
    await rm(dir, { recursive: true });
  }
});

test("the pod's bootstrap under Istio's defaults: istiod's address, its SAN, and the ProxyConfig in the metadata", () => {
  const proxyConfig = agentProxyConfig({}, "/nonexistent/mesh");
  const bootstrap = podGrpcBootstrap({
    env: { POD_NAME: "a-1", POD_NAMESPACE: "ns", INSTANCE_IP: "10.1.1.1" },
    proxyConfig,
    podInfoDir: "/nonexistent",
    hostIPs: [],
  });
  assert.equal(bootstrap.xds_servers[0].server_uri, "istiod.istio-system.svc:15012");
  assert.equal(bootstrap.node.id, "sidecar~10.1.1.1~a-1.ns~ns.svc.cluster.local");
  assert.deepEqual(bootstrap.node.metadata.PILOT_SAN, ["istiod.istio-system.svc"]);
  assert.deepEqual(bootstrap.node.metadata.PROXY_CONFIG, JSON.parse(JSON.stringify(proxyConfig)));
  assert.equal(bootstrap.node.metadata.INSTANCE_IPS, "10.1.1.1,127.0.0.1,::1");
  assert.deepEqual(bootstrap.node.locality, {});
});
