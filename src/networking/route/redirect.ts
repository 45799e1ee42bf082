// VirtualService `redirect` → Envoy RedirectAction (Istio route.go ApplyRedirect). 301 by default;
// an explicit or derived port is dropped when it is the scheme's default (80 for http, 443 for https).
import { create } from "@bufbuild/protobuf";
import { route } from "../../api/index.ts";
import type { VirtualServiceHttpRedirect } from "../../config/index.ts";

const RESPONSE_CODES: ReadonlyMap<number, route.RedirectAction_RedirectResponseCode> = new Map([
  [301, route.RedirectAction_RedirectResponseCode.MOVED_PERMANENTLY],
  [302, route.RedirectAction_RedirectResponseCode.FOUND],
  [303, route.RedirectAction_RedirectResponseCode.SEE_OTHER],
  [307, route.RedirectAction_RedirectResponseCode.TEMPORARY_REDIRECT],
  [308, route.RedirectAction_RedirectResponseCode.PERMANENT_REDIRECT],
]);

/**
 * The redirect action; undefined for a code Envoy cannot send (Istio then leaves the route without an
 * action). `listenerPort` stands in for the request port (FROM_REQUEST_PORT); `isTls` picks the default scheme.
 */
export function translateRedirect(
  redirect: VirtualServiceHttpRedirect,
  listenerPort: number,
  isTls: boolean,
): route.RedirectAction | undefined {
  const responseCode = RESPONSE_CODES.get(redirect.redirectCode || 301);
  if (responseCode === undefined) return undefined;
  const out = create(route.RedirectActionSchema, {
    hostRedirect: redirect.authority ?? "",
    responseCode,
    pathRewriteSpecifier: redirect.prefixRewrite
      ? { case: "prefixRewrite", value: redirect.prefixRewrite }
      : { case: "pathRedirect", value: redirect.uri ?? "" },
  });
  if (redirect.scheme) out.schemeRewriteSpecifier = { case: "schemeRedirect", value: redirect.scheme };
  if (redirect.port !== undefined || redirect.derivePort !== undefined) {
    if (redirect.port !== undefined) out.portRedirect = redirect.port;
    else if (redirect.derivePort === "FROM_REQUEST_PORT") out.portRedirect = listenerPort;
    const scheme = redirect.scheme || (isTls ? "https" : "http");
    if ((out.portRedirect === 80 && scheme === "http") || (out.portRedirect === 443 && scheme === "https")) {
      out.portRedirect = 0;
    }
  }
  return out;
}
