// xDS type URLs (Istio's pkg/model/xds.go; the constants are api's) and the short names its logs and metrics use.
import { TypeUrl } from "../api/index.ts";

export { TypeUrl };

/** Type URLs under this prefix are served by the `event` (status) generator: syncz, config_dump. */
export const DEBUG_TYPE_PREFIX = "istio.io/debug/";

const SHORT: ReadonlyMap<string, string> = new Map([
  [TypeUrl.Cluster, "CDS"],
  [TypeUrl.Listener, "LDS"],
  [TypeUrl.Route, "RDS"],
  [TypeUrl.VirtualHost, "VHDS"],
  [TypeUrl.Endpoint, "EDS"],
  [TypeUrl.Secret, "SDS"],
  [TypeUrl.ExtensionConfiguration, "ECDS"],
  [TypeUrl.NameTable, "NDS"],
  [TypeUrl.ProxyConfig, "PCDS"],
  [TypeUrl.Address, "WDS"],
  [TypeUrl.Workload, "WDS"],
  [TypeUrl.WorkloadAuthorization, "WADS"],
]);

/** `CDS`, `EDS`, ... for the known types; the type URL itself otherwise (Istio's GetShortType). */
export function shortType(typeUrl: string): string {
  return SHORT.get(typeUrl) ?? typeUrl;
}

/** The `type` label of pilot_xds_* metrics: `cds`, `eds`, ..., `bds`, or the type URL. */
export function metricType(typeUrl: string): string {
  if (typeUrl === TypeUrl.Bootstrap) return "bds";
  const short = SHORT.get(typeUrl);
  return short ? short.toLowerCase() : typeUrl;
}

/**
 * Whether an empty subscription means "everything". The xDS spec makes LDS and CDS wildcard and
 * SDS, EDS, RDS, VHDS and ECDS named-only; Istio treats its own types as wildcard.
 */
export function isWildcardTypeUrl(typeUrl: string): boolean {
  return !(
    typeUrl === TypeUrl.Secret ||
    typeUrl === TypeUrl.Endpoint ||
    typeUrl === TypeUrl.Route ||
    typeUrl === TypeUrl.VirtualHost ||
    typeUrl === TypeUrl.ExtensionConfiguration
  );
}

/**
 * Whether Envoy subscribes to the type by namespace: VHDS (Envoy's use_namespace_matching) subscribes
 * to `<route configuration name>`, which covers every `<route configuration name>/<virtual host>`.
 */
export function subscribesByNamespace(typeUrl: string): boolean {
  return typeUrl === TypeUrl.VirtualHost;
}

/** The namespace of a resource name: the part before its last `/` (as Envoy reads it); undefined without one. */
export function resourceNamespace(name: string): string | undefined {
  const slash = name.lastIndexOf("/");
  return slash === -1 ? undefined : name.slice(0, slash);
}
