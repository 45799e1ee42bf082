// Gateway API objects live in sluiced's discovery service: a router pod of a Gateway API Gateway gets
// the listener and routes converted from it over ADS, and a changed HTTPRoute is pushed to it.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Any } from "@bufbuild/protobuf/wkt";
import { route, unpackAny } from "../../src/api/index.ts";
import type { ConfigObject } from "../../src/config/index.ts";
import { ConfigStore, MemorySource } from "../../src/sources/index.ts";
import { type Discovery, TypeUrl } from "../../src/xds/index.ts";
import { names, SotwClient } from "../support/ads-client.ts";
import { assertValidResources } from "../support/pgv.ts";
import { startStoreDiscovery } from "../support/store-discovery.ts";
import { CART_SERVICE, shopRoute, WEB_GATEWAY } from "./fixtures.ts";

const objects: ConfigObject[] = [
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web-istio", namespace: "infra" },
    spec: {
      clusterIP: "10.96.0.9",
      ports: [{ name: "http", port: 80 }],
      selector: { "gateway.networking.k8s.io/gateway-name": "web" },
    },
  },
  CART_SERVICE,
  WEB_GATEWAY,
];

let store: ConfigStore;
let memory: MemorySource;
let discovery: Discovery;

before(async () => {
  store = new ConfigStore();
  memory = new MemorySource(store, "file");
  for (const obj of [...objects, shopRoute("/cart")]) assert.deepEqual(memory.apply(obj).errors, []);
  discovery = await startStoreDiscovery(store);
});

after(async () => {
  await discovery.stop(0);
});

/** The path prefixes of the routes of the shop.example.com virtual host (Gateway API prefixes are path-separated). */
function prefixes(any: Any | undefined): string[] {
  const config = any && unpackAny(any, route.RouteConfigurationSchema);
  const vhost = config?.virtualHosts.find((v) => v.domains.includes("shop.example.com"));
  return (vhost?.routes ?? []).map((r) => `${r.match?.pathSpecifier.case}:${r.match?.pathSpecifier.value}`);
}

test("the Gateway's router gets its listener and the HTTPRoute over ADS, and the route's change is pushed", async () => {
  const client = SotwClient.connect(`127.0.0.1:${discovery.ports.grpcPort}`);
  try {
    const node = {
      id: "router~10.0.0.9~web-istio-5d8f.infra~infra.svc.cluster.local",
      metadata: {
        NAMESPACE: "infra",
        ISTIO_VERSION: "1.24.0",
        LABELS: { "gateway.networking.k8s.io/gateway-name": "web" },
      },
    };
    const lds = await client.requestAndAck({ node, typeUrl: TypeUrl.Listener });
    assertValidResources(lds);
    assert.deepEqual(names(lds), ["0.0.0.0_80"]);

    const rds = await client.requestAndAck({ typeUrl: TypeUrl.Route, resourceNames: ["http.80"] });
    assertValidResources(rds);
    assert.deepEqual(prefixes(rds.resources[0]), ["pathSeparatedPrefix:/cart"]);

    memory.apply(shopRoute("/basket"));
    let update = await client.next();
    // A full push may re-send listeners first; the routes follow.
    while (update.typeUrl !== TypeUrl.Route) {
      client.ack(update);
      update = await client.next();
    }
    assert.deepEqual(prefixes(update.resources[0]), ["pathSeparatedPrefix:/basket"]);
  } finally {
    client.close();
  }
});
