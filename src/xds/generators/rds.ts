// RDS: the route configurations a proxy asks for by name (Istio's pilot/pkg/xds/rds.go): whether a
// push concerns them, and each built by configgen's buildRouteConfiguration.
import { buildRouteConfiguration, type XdsCache } from "../../configgen/index.ts";
import type { PushSnapshot } from "../../model/index.ts";
import { buildNamed, type Generator } from "../generator.ts";
import { rdsNeedsPush } from "./needs-push.ts";

/**
 * RDS is named: the routes the proxy subscribes to, on pushes that may change routes. A route
 * configuration that throws while being built is left out (an error of the result); the others go.
 */
export function rdsGenerator(cache: XdsCache): Generator<PushSnapshot> {
  return {
    generate(proxy, watched, req) {
      if (!rdsNeedsPush(req)) return undefined;
      return buildNamed(watched.resourceNames, (name) => buildRouteConfiguration(req.push, proxy, name, cache));
    },
  };
}
