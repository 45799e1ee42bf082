import assert from "node:assert/strict";
import { test } from "node:test";
import type { ConfigObject, gatewayapi, ServiceEntry } from "../config/index.ts";
import { DebugRegistry, StaticCollection } from "../krt/index.ts";
import { liveConversion } from "./live.ts";
import type { RegistryService } from "./model.ts";

const GW_API = "gateway.networking.k8s.io/v1";

function route(name: string, path: string): ConfigObject {
  return {
    apiVersion: GW_API,
    kind: "HTTPRoute",
    metadata: { name, namespace: "infra" },
    spec: { parentRefs: [{ name: "web" }], rules: [{ matches: [{ path: { value: path } }] }] },
  };
}

test("a changed route recomputes itself and the assembly, not the Gateways or the other routes", () => {
  const collection = <T extends ConfigObject = ConfigObject>() => new StaticCollection<T>();
  const gateways = collection<gatewayapi.Gateway>();
  const httpRoutes = collection();
  const debug = new DebugRegistry();
  const conversion = liveConversion(
    {
      gatewayApi: {
        gatewayClasses: collection<gatewayapi.GatewayClass>(),
        gateways,
        listenerSets: collection(),
        referenceGrants: collection(),
        backendTLSPolicies: collection(),
        xBackends: collection<gatewayapi.XBackend>(),
        xBackendTrafficPolicies: collection<gatewayapi.XBackendTrafficPolicy>(),
        routes: [httpRoutes],
      },
      cluster: {
        services: collection(),
        secrets: collection(),
        configMaps: collection(),
        namespaces: collection(),
        serviceEntries: collection<ServiceEntry>(),
      },
      servicesByHostname: new StaticCollection<RegistryService>([], { keyOf: (s) => s.hostname }).addIndex(
        "by-hostname",
        (s) => [s.hostname],
      ),
      debug,
    },
    { domainSuffix: "cluster.local" },
  );
  gateways.upsert({
    apiVersion: GW_API,
    kind: "Gateway",
    metadata: { name: "web", namespace: "infra" },
    spec: { gatewayClassName: "istio", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
  });
  httpRoutes.upsert(route("a", "/a"), route("b", "/b"));
  const recomputes = () => new Map(debug.snapshot().map((c) => [c.name, c.recomputes]));
  const before = recomputes();
  httpRoutes.upsert(route("a", "/a2"));
  const after = recomputes();
  const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
  assert.equal(delta("gatewayapi/gateways"), 0);
  assert.equal(delta(`gatewayapi/routes/${httpRoutes.name}`), 1);
  assert.equal(delta("gatewayapi/conversion"), 1);
  const paths = JSON.stringify(conversion.get()?.config.find((c) => c.kind === "VirtualService")?.spec);
  assert.match(paths, /\/a2/);
  assert.match(paths, /"\/b"/);
});
