// envoy.filters.http.dynamic_forward_proxy, just before the router on sidecar outbound HTTP connection
// managers: one for the DYNAMIC_DNS wildcard ServiceEntry the manager was built for (Istio's
// BuildSidecarOutboundDynamicForwardProxyFilter), resolving the Host into the cache its cluster reads;
// then, under ALLOW_ANY_DYNAMIC_DNS, one on every manager for the catch-all virtual host's cluster.
import { create } from "@bufbuild/protobuf";
import { httpDfp } from "../../api/index.ts";
import { typedHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

export const DFP_HTTP_FILTER = "envoy.filters.http.dynamic_forward_proxy";

export const dynamicForwardProxy: HttpFilterPlugin = {
  name: DFP_HTTP_FILTER,
  httpFilters: (context) => {
    if (context.listenerClass !== "sidecarOutbound") return [];
    const caches = [context.forwardProxyDnsCache, context.allowAnyDnsCache].filter((c) => c !== undefined);
    return caches.map((cache) =>
      typedHttpFilter(
        DFP_HTTP_FILTER,
        httpDfp.FilterConfigSchema,
        create(httpDfp.FilterConfigSchema, { implementationSpecifier: { case: "dnsCacheConfig", value: cache } }),
      ),
    );
  },
};
