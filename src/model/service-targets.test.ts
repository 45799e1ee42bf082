// PushSnapshot.serviceTargets: selector matches and, as in Istio, endpoints at the proxy's IPs.
import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_MESH_CONFIG } from "../config/index.ts";
import type { ServiceEndpoint } from "../registry/index.ts";
import { PushSnapshot } from "./push-snapshot.ts";
import { svc } from "./test-fixtures.ts";

function endpoint(hostname: string, namespace: string, address: string, port: number): ServiceEndpoint {
  return {
    hostname,
    namespace,
    servicePort: 80,
    servicePortName: "http",
    address,
    port,
    health: "Healthy",
    labels: {},
    serviceAccount: "",
    identity: "",
    locality: "",
    clusterId: "Kubernetes",
    network: "",
    tlsMode: "disabled",
    workloadName: "",
    workloadNamespace: namespace,
    workloadKind: "WorkloadEntry",
    weight: 1,
  };
}

test("serviceTargets: a proxy at an endpoint's IP is an instance of that service, in its namespace only", () => {
  const vm = svc("vm", "ns", { registry: "External", selector: null, hostname: "vm.example.com" });
  const other = svc("other", "elsewhere", { selector: null });
  const byLabel = svc("app", "ns");
  const snap = new PushSnapshot({
    configs: [],
    services: [vm, other, byLabel],
    endpoints: [
      { hostname: vm.hostname, namespace: "ns", port: 80, endpoints: [endpoint(vm.hostname, "ns", "1.1.1.1", 9090)] },
      {
        hostname: other.hostname,
        namespace: "elsewhere",
        port: 80,
        endpoints: [endpoint(other.hostname, "elsewhere", "1.1.1.1", 80)],
      },
      // The selector match already names this port: no duplicate.
      {
        hostname: byLabel.hostname,
        namespace: "ns",
        port: 80,
        endpoints: [endpoint(byLabel.hostname, "ns", "1.1.1.1", 8080)],
      },
    ],
    mesh: DEFAULT_MESH_CONFIG,
  });
  const targets = snap.serviceTargets({ configNamespace: "ns", labels: { app: "app" }, ipAddresses: ["1.1.1.1"] });
  assert.deepEqual(
    targets.map(({ service, port }) => [service.hostname, port.port, port.targetPort]),
    [
      [byLabel.hostname, 80, 8080],
      [vm.hostname, 80, 9090],
    ],
  );
  assert.deepEqual(snap.serviceTargets({ configNamespace: "ns", labels: {}, ipAddresses: ["2.2.2.2"] }), []);
});
