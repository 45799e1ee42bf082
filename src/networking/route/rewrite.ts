// VirtualService `rewrite` → Envoy prefix_rewrite or regex_rewrite, and the authority as
// host_rewrite_literal (Istio route.go applyHTTPRouteDestination).
import { create } from "@bufbuild/protobuf";
import { matcher, type route } from "../../api/index.ts";
import type { VirtualServiceHttpRewrite } from "../../config/index.ts";
import { quoteMeta } from "../authz/matchers.ts";

/**
 * Applies the path rewrite to `action`; returns the authority to rewrite to ("" when none).
 * `separatedPrefix` is the path-separated prefix a Gateway API route matched: rewriting it to `/`
 * removes the prefix (keeping a `/` when the whole path goes).
 */
export function applyRewrite(
  action: route.RouteAction,
  rewrite: VirtualServiceHttpRewrite,
  separatedPrefix?: string,
): string {
  const regex = rewrite.uriRegexRewrite;
  if (regex) {
    action.regexRewrite = create(matcher.RegexMatchAndSubstituteSchema, {
      pattern: create(matcher.RegexMatcherSchema, { regex: regex.match ?? "" }),
      substitution: regex.rewrite ?? "",
    });
  } else if (rewrite.uri === "/" && separatedPrefix !== undefined) {
    action.regexRewrite = create(matcher.RegexMatchAndSubstituteSchema, {
      pattern: create(matcher.RegexMatcherSchema, { regex: `^${quoteMeta(separatedPrefix)}(/?)(.*)` }),
      substitution: "/\\2",
    });
  } else if (rewrite.uri) {
    action.prefixRewrite = rewrite.uri;
  }
  return rewrite.authority ?? "";
}
