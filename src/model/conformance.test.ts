// Every file of Istio's sample configs (../shared/conformance/istio/inputs) builds a push context
// on its own, and every lookup a generator makes works for a sidecar and a router.
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { CONFORMANCE_INPUTS, readInputs, staticInputs } from "../../test/support/registry-inputs.ts";
import { readConfigPaths } from "../config/decode.ts";
import { DEFAULT_MESH_CONFIG } from "../config/index.ts";
import type { Gateway } from "../config/types/index.ts";
import { ServiceRegistry } from "../registry/index.ts";
import { buildPushContext } from "./mesh-push.ts";

for (const file of readdirSync(CONFORMANCE_INPUTS).filter((f) => f.endsWith(".yaml"))) {
  test(`${file}: builds a push context, scopes a sidecar and merges gateways`, () => {
    const configs = readInputs([join(CONFORMANCE_INPUTS, file)]);
    const registry = new ServiceRegistry(staticInputs(configs));
    const snap = buildPushContext({ configs, services: registry.services.list(), mesh: DEFAULT_MESH_CONFIG }).snapshot;

    const namespaces = new Set(["default", ...configs.map((c) => c.metadata.namespace ?? "default")]);
    for (const namespace of namespaces) {
      const sidecar = { type: "sidecar" as const, configNamespace: namespace, labels: { app: "test" } };
      const scope = snap.sidecarScope(sidecar);
      assert.ok(scope.egressListeners.length > 0);
      for (const service of scope.services) {
        assert.equal(scope.service(service.hostname), service);
        scope.destinationRule("outbound", sidecar.labels, service.hostname);
      }
      snap.mtlsMode(sidecar, 9080);
      snap.envoyFiltersFor(sidecar);
      snap.authorizationPoliciesFor(sidecar);
    }
    const gateways = configs.filter((c) => c.kind === "Gateway" && c.apiVersion.startsWith("networking.istio.io/"));
    for (const gateway of gateways as Gateway[]) {
      const labels = gateway.spec?.selector ?? {};
      const router = { type: "router" as const, configNamespace: gateway.metadata.namespace ?? "default", labels };
      const merged = snap.mergedGateway(router);
      assert.ok(merged);
      assert.ok(merged.gatewayNames.includes(`${router.configNamespace}/${gateway.metadata.name}`));
      snap.sidecarScope(router);
      for (const name of merged.gatewayNames) snap.virtualServicesForGateway(router.configNamespace, name);
    }
  });
}

test("rule-ingressgateway.yaml: a short gateway name binds in the VirtualService's namespace, short hosts expand", () => {
  const configs = readConfigPaths([join(CONFORMANCE_INPUTS, "rule-ingressgateway.yaml")]).flatMap((d) =>
    d.object ? [d.object] : [],
  );
  const snap = buildPushContext({ configs, services: [], mesh: DEFAULT_MESH_CONFIG }).snapshot;
  assert.deepEqual(snap.virtualServicesForGateway("testns", "mesh"), []);
  const [bound] = snap.virtualServicesForGateway("istio-system", "testns/istio-ingressgateway");
  assert.equal(bound?.metadata.name, "gateway-bound-route");
  assert.equal(bound.spec?.http?.[0].route?.[0].destination.host, "c.testns.svc.cluster.local");
});
