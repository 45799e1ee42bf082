// envoy.filters.http.dynamic_forward_proxy, just before the router on sidecar outbound HTTP connection
// managers built for a DYNAMIC_DNS wildcard ServiceEntry (Istio's BuildSidecarOutboundDynamicForwardProxyFilter):
// it resolves the Host into the DNS cache that service's cluster reads.
import { create } from "@bufbuild/protobuf";
import { httpDfp } from "../../api/index.ts";
import { typedHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

export const DFP_HTTP_FILTER = "envoy.filters.http.dynamic_forward_proxy";

export const dynamicForwardProxy: HttpFilterPlugin = {
  name: DFP_HTTP_FILTER,
  httpFilters: (context) => {
    const cache = context.forwardProxyDnsCache;
    if (!cache || context.listenerClass !== "sidecarOutbound") return [];
    const config = create(httpDfp.FilterConfigSchema, {
      implementationSpecifier: { case: "dnsCacheConfig", value: cache },
    });
    return [typedHttpFilter(DFP_HTTP_FILTER, httpDfp.FilterConfigSchema, config)];
  },
};
