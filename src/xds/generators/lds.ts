// LDS: a proxy's listeners (Istio's pilot/pkg/xds/lds.go): whether a push concerns them, and the
// response built from configgen's buildListeners.
import { listenerResources, type XdsCache } from "../../configgen/index.ts";
import type { PushSnapshot } from "../../model/index.ts";
import type { EndpointLookup } from "../../registry/index.ts";
import type { Generator } from "../generator.ts";
import { ldsNeedsPush, waypointNeedsPush } from "./needs-push.ts";

/** LDS is wildcard: every listener, on pushes that may change listeners. */
export function ldsGenerator(endpoints: EndpointLookup, cache: XdsCache): Generator<PushSnapshot> {
  return {
    generate(proxy, _watched, req) {
      if (!ldsNeedsPush(req, proxy) && !waypointNeedsPush(req, proxy)) return undefined;
      const listeners = listenerResources(req.push, proxy, endpoints, cache);
      return { resources: listeners.map((l) => ({ name: l.name, resource: l })) };
    },
  };
}
