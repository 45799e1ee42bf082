// VirtualService `mirror` (with mirrorPercentage or the legacy mirrorPercent) and `mirrors` → Envoy
// request_mirror_policies (Istio route.go MirrorPercent, MirrorPercentByPolicy,
// TranslateRequestMirrorPolicy). No percentage mirrors everything; an explicit 0 mirrors nothing.
import { create } from "@bufbuild/protobuf";
import { type core, route } from "../../api/index.ts";
import type { VirtualServiceHttp } from "../../config/index.ts";
import { routeDestinationCluster } from "./destination.ts";
import { integerToFractional, percentToFractional, runtimeFraction } from "./percent.ts";
import type { RouteContext } from "./types.ts";

function mirrorFraction(percentage: { value?: number } | undefined, legacyPercent: number | null | undefined) {
  if (percentage !== undefined) {
    const value = percentage.value ?? 0;
    return value > 0 ? runtimeFraction(percentToFractional(value)) : undefined;
  }
  if (legacyPercent !== undefined && legacyPercent !== null) {
    return legacyPercent > 0 ? runtimeFraction(integerToFractional(legacyPercent)) : undefined;
  }
  return runtimeFraction(integerToFractional(100));
}

function mirrorPolicy(cluster: string, fraction: core.RuntimeFractionalPercent): route.RouteAction_RequestMirrorPolicy {
  return create(route.RouteAction_RequestMirrorPolicySchema, {
    cluster,
    runtimeFraction: fraction,
    traceSampled: false,
    // Istio's DISABLE_SHADOW_HOST_SUFFIX (default true): the mirrored Host keeps its name, no "-shadow".
    disableShadowHostSuffixAppend: true,
  });
}

export function translateMirrors(http: VirtualServiceHttp, ctx: RouteContext): route.RouteAction_RequestMirrorPolicy[] {
  const out: route.RouteAction_RequestMirrorPolicy[] = [];
  if (http.mirror) {
    const fraction = mirrorFraction(http.mirrorPercentage, http.mirrorPercent ?? http.mirror_percent);
    if (fraction) {
      const cluster = routeDestinationCluster(http.mirror, ctx);
      out.push(mirrorPolicy(cluster, fraction));
    }
  }
  for (const m of http.mirrors ?? []) {
    const fraction = mirrorFraction(m.percentage, undefined);
    if (fraction && m.destination) {
      const cluster = routeDestinationCluster(m.destination, ctx);
      out.push(mirrorPolicy(cluster, fraction));
    }
  }
  return out;
}
