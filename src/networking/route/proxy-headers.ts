// The ProxyConfig proxyHeaders settings routes read (Istio util.GetProxyHeaders): the request attempt
// count header (on unless disabled) and x-forwarded-host on rewritten and passthrough routes (off unless enabled).
import type { MeshConfig } from "./types.ts";

export interface RouteProxyHeaders {
  includeRequestAttemptCount: boolean;
  appendXForwardedHost: boolean;
}

export function routeProxyHeaders(mesh: MeshConfig): RouteProxyHeaders {
  const headers = mesh.defaultConfig?.proxyHeaders;
  return {
    includeRequestAttemptCount: headers?.attemptCount?.disabled !== true,
    appendXForwardedHost: headers?.xForwardedHost?.enabled === true,
  };
}
