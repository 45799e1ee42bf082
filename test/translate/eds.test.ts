// EDS reads the endpoint's own PeerAuthentication: a workload with mTLS disabled loses the
// tlsMode metadata that makes clients originate Istio mTLS to it.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type admin, endpoint, unpackAny } from "../../src/api/index.ts";
import { translate } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";

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
