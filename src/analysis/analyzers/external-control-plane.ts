// externalcontrolplane.ExternalControlPlaneAnalyzer: the webhooks of a remote cluster's Istio must reach
// an external istiod by URL (not blank, parseable), preferably by hostname rather than IP.
import { isIP } from "node:net";
import type { AnalysisContext, Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, type Resource } from "../resource.ts";

const DEFAULT_VALIDATOR = "istiod-default-validator";
const VALIDATOR_PREFIX = "istio-validator";
const INJECTOR_PREFIX = "istio-sidecar-injector";

export const externalControlPlaneAnalyzer: Analyzer = {
  name: "externalcontrolplane.ExternalControlPlaneAnalyzer",
  description: "Checks that the remote IstioOperator resources reference an external control plane",
  inputs: [K.ValidatingWebhookConfiguration, K.MutatingWebhookConfiguration],
  analyze(ctx) {
    for (const r of ctx.list(K.ValidatingWebhookConfiguration)) {
      if (r.name === DEFAULT_VALIDATOR || r.name.startsWith(VALIDATOR_PREFIX)) checkWebhooks(ctx, r);
    }
    for (const r of ctx.list(K.MutatingWebhookConfiguration)) {
      if (r.name.startsWith(INJECTOR_PREFIX)) checkWebhooks(ctx, r);
    }
  },
};

function checkWebhooks(ctx: AnalysisContext, r: Resource): void {
  for (const hook of asArray(r.object.webhooks).map(asRecord)) {
    const hookName = asString(hook.name);
    const clientConfig = asRecord(hook.clientConfig);
    if (typeof clientConfig.url === "string") {
      const host = urlHostname(clientConfig.url);
      if (host === undefined) {
        ctx.report(
          newMessage(
            MESSAGES.InvalidExternalControlPlaneConfig,
            r,
            clientConfig.url,
            hookName,
            "was provided in an invalid format",
          ),
        );
      } else if (isIP(host) !== 0) {
        ctx.report(newMessage(MESSAGES.ExternalControlPlaneAddressIsNotAHostname, r, clientConfig.url, hookName));
      }
    } else if (clientConfig.service === undefined || clientConfig.service === null) {
      ctx.report(newMessage(MESSAGES.InvalidExternalControlPlaneConfig, r, "", hookName, "is blank"));
    }
  }
}

/** Go's url.Parse(u).Hostname(): the host without brackets or port; undefined when Go would not parse it. */
function urlHostname(url: string): string | undefined {
  // Go rejects ASCII control characters anywhere in a URL.
  if ([...url].some((ch) => (ch.codePointAt(0) ?? 0) < 0x20 || ch === "\x7f")) return undefined;
  const authority = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)/.exec(url)?.[1];
  if (authority === undefined) return "";
  const hostPort = authority.slice(authority.lastIndexOf("@") + 1);
  if (hostPort.startsWith("[")) {
    const end = hostPort.indexOf("]");
    if (end < 0) return undefined;
    const rest = hostPort.slice(end + 1);
    if (rest !== "" && !/^:\d*$/.test(rest)) return undefined;
    return hostPort.slice(1, end);
  }
  const colon = hostPort.lastIndexOf(":");
  if (colon < 0) return hostPort;
  if (!/^\d*$/.test(hostPort.slice(colon + 1))) return undefined;
  return hostPort.slice(0, colon);
}
