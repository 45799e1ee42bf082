// Istio's sample configs (../shared/conformance/istio/inputs) through the registry and into the CDS
// and EDS builders: every service port, with the DestinationRule naming its host, for a sidecar and
// a gateway, gives clusters and load assignments that Envoy's constraints accept.
import assert from "node:assert/strict";
import { test } from "node:test";
import { makeMesh, makeProxy } from "../../../test/support/cluster-fixtures.ts";
import { readInputs, staticInputs } from "../../../test/support/registry-inputs.ts";
import { cluster, endpoint } from "../../api/index.ts";
import { checkMessage } from "../../api/pgv/index.ts";
import type { DestinationRuleSpec } from "../../config/index.ts";
import type { Service } from "../../registry/index.ts";
import { ServiceRegistry } from "../../registry/index.ts";
import { buildClusterLoadAssignment } from "../endpoint/index.ts";
import { envoyViolations } from "../httpfilter/index.ts";
import {
  type AppliedDestinationRule,
  assembleClusters,
  buildInboundCluster,
  buildOutboundClusters,
  buildSniDnatClusters,
  effectiveTrafficPolicy,
  parseClusterName,
} from "./index.ts";

function load(): { registry: ServiceRegistry; rules: AppliedDestinationRule[] } {
  const objects = readInputs();
  const rules = objects
    .filter((o) => o.kind === "DestinationRule" && o.spec)
    .map((o) => ({
      name: o.metadata.name ?? "",
      namespace: o.metadata.namespace ?? "default",
      spec: o.spec as DestinationRuleSpec,
    }));
  return { registry: new ServiceRegistry(staticInputs(objects)), rules };
}

/** The rule whose host names the service (FQDN, or short name in the rule's namespace), as the push context picks. */
function ruleFor(service: Service, rules: readonly AppliedDestinationRule[]): AppliedDestinationRule | undefined {
  return rules.find(
    (r) =>
      r.spec.host === service.hostname ||
      (r.namespace === service.namespace && service.hostname.startsWith(`${r.spec.host}.${r.namespace}.`)),
  );
}

test("every service port of Istio's sample inputs builds valid clusters and load assignments for sidecars and gateways", () => {
  const { registry, rules } = load();
  const mesh = makeMesh();
  let clusterCount = 0;
  let ruleCount = 0;
  for (const proxy of [makeProxy(), makeProxy({ type: "router" })]) {
    const outbound: cluster.Cluster[] = [];
    const inbound: cluster.Cluster[] = [];
    const sniDnat: cluster.Cluster[] = [];
    for (const service of registry.services.list()) {
      const rule = ruleFor(service, rules);
      if (rule) ruleCount++;
      for (const port of service.ports) {
        const endpoints = registry.endpointsFor(service.hostname, port.port, service.namespace);
        const input = { service, port, destinationRule: rule, proxy, mesh, endpoints };
        const built = buildOutboundClusters(input);
        outbound.push(...built);
        if (proxy.type === "router") sniDnat.push(...buildSniDnatClusters(input));
        else inbound.push(buildInboundCluster({ targetPort: port.port, port, services: [service], proxy, mesh }));
        for (const c of built.filter((b) => b.edsClusterConfig)) {
          const subset = parseClusterName(c.name)?.subset ?? "";
          const cla = buildClusterLoadAssignment({
            clusterName: c.name,
            port: port.port,
            endpoints,
            subsetLabels: rule?.spec.subsets?.find((s) => s.name === subset)?.labels,
            proxy,
            mesh,
            policy: effectiveTrafficPolicy(rule?.spec, port.port, subset),
          });
          assert.deepEqual(checkMessage(endpoint.ClusterLoadAssignmentSchema, cla), [], c.name);
        }
      }
    }
    const all = assembleClusters({ proxy, mesh, outbound, inbound, sniDnat });
    for (const c of all) {
      const violations = envoyViolations(cluster.ClusterSchema, c);
      assert.deepEqual(violations, [], c.name);
    }
    assert.equal(new Set(all.map((c) => c.name)).size, all.length, "cluster names are unique");
    clusterCount += all.length;
  }
  assert.ok(clusterCount > 100, `only ${clusterCount} clusters`);
  assert.ok(ruleCount > 0, "some DestinationRule applied");
});
