// gateway.ConflictingGatewayAnalyzer: Gateways selecting the same workloads must not declare the same
// port with the same host and bind. A selector that matches no Gateway's workloads is reported too.
import type { AnalysisContext, Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { firstSelectorKey, selectorMatches, selectorString } from "../labels.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import {
  asArray,
  asRecord,
  asString,
  asStringArray,
  asStringMap,
  fullName,
  labelsOf,
  type Resource,
  specOf,
} from "../resource.ts";

/** host → bind of one Gateway's servers on one port. */
type HostsBind = Map<string, string>;
/** "<selector>~<port>" → gateway full name → its hosts. */
type GatewaysByKey = Map<string, Map<string, HostsBind>>;

export const conflictingGatewayAnalyzer: Analyzer = {
  name: "gateway.ConflictingGatewayAnalyzer",
  description: "Checks a gateway's selector, port number and hosts",
  inputs: [K.Gateway, K.Pod],
  analyze(ctx) {
    const byKey = gatewaysByKey(ctx);
    for (const gateway of ctx.list(K.Gateway)) analyzeGateway(ctx, gateway, byKey);
  },
};

function analyzeGateway(ctx: AnalysisContext, gateway: Resource, byKey: GatewaysByKey): void {
  const name = fullName(gateway);
  const selector = asStringMap(specOf(gateway).selector);
  const selectorText = selectorString(selector);
  const sameWorkloads: GatewaysByKey = new Map();
  for (const [key, gateways] of byKey) {
    const otherSelectorText = splitKey(key).selector;
    let matched = selectorText === otherSelectorText;
    if (!matched && (otherSelectorText.includes(selectorText) || selectorText.includes(otherSelectorText))) {
      const otherSelector = parseSelector(otherSelectorText);
      matched = ctx
        .list(K.Pod)
        .some((pod) => selectorMatches(selector, labelsOf(pod)) && selectorMatches(otherSelector, labelsOf(pod)));
    }
    if (matched) sameWorkloads.set(key, gateways);
  }
  if (selectorText !== "" && sameWorkloads.size === 0) {
    ctx.report(
      atField(
        newMessage(MESSAGES.ReferencedResourceNotFound, gateway, "selector", selectorText),
        `{.spec.selector.${firstSelectorKey(selectorText)}}`,
      ),
    );
    return;
  }
  for (const server of asArray(specOf(gateway).servers).map(asRecord)) {
    const port = portText(server);
    const conflicting: string[] = [];
    for (const [key, gateways] of sameWorkloads) {
      if (splitKey(key).port !== port) continue;
      for (const [otherName, hostsBind] of gateways) {
        if (otherName !== name && hasDuplicates(asStringArray(server.hosts), asString(server.bind), hostsBind)) {
          conflicting.push(otherName);
        }
      }
    }
    if (conflicting.length === 0) continue;
    const hosts = asStringArray(server.hosts).join(",");
    ctx.report(
      newMessage(MESSAGES.ConflictingGateways, gateway, conflicting.sort().join(","), selectorText, port, hosts),
    );
  }
}

/**
 * Istio's model.CheckDuplicates: the hosts already known with the same bind. When there are none it
 * records these hosts as known, in the shared map, as Istio does.
 */
function hasDuplicates(hosts: string[], bind: string, known: HostsBind): boolean {
  const duplicates = hosts.filter((h) => known.has(h) && known.get(h) === bind);
  if (duplicates.length === 0) for (const h of hosts) known.set(h, bind);
  return duplicates.length > 0;
}

function gatewaysByKey(ctx: AnalysisContext): GatewaysByKey {
  const byKey: GatewaysByKey = new Map();
  for (const gateway of ctx.list(K.Gateway)) {
    const selectorText = selectorString(asStringMap(specOf(gateway).selector));
    for (const server of asArray(specOf(gateway).servers).map(asRecord)) {
      const key = `${selectorText}~${portText(server)}`;
      const gateways = byKey.get(key) ?? new Map<string, HostsBind>();
      byKey.set(key, gateways);
      const bind = asString(server.bind);
      gateways.set(fullName(gateway), new Map(asStringArray(server.hosts).map((h) => [h, bind])));
    }
  }
  return byKey;
}

function portText(server: Record<string, unknown>): string {
  return String(Math.trunc(Number(asRecord(server.port).number ?? 0)) || 0);
}

function splitKey(key: string): { selector: string; port: string } {
  const parts = key.split("~");
  return parts.length === 2 ? { selector: parts[0], port: parts[1] } : { selector: "", port: "" };
}

function parseSelector(text: string): Record<string, string> {
  const selector: Record<string, string> = {};
  for (const pair of text.split(",")) {
    const kv = pair.split("=");
    if (kv.length === 2) selector[kv[0]] = kv[1];
  }
  return selector;
}
