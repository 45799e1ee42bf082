// telemetry.SelectorAnalyzer and telemetry.DefaultSelectorAnalyzer: a Telemetry's selector must match pods
// of its namespace and no pod may be selected by two Telemetries; at most one selector-less Telemetry
// per namespace. telemetry.LightstepAnalyzer: the Lightstep tracing provider is deprecated.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { firstSelectorKey, selectorMatches, selectorString } from "../labels.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, asStringMap, fullName, labelsOf, type Resource, specOf } from "../resource.ts";

export const telemetrySelectorAnalyzer: Analyzer = {
  name: "telemetry.SelectorAnalyzer",
  description:
    "Validates that telemetries that define a selector match at least one pod, and that there aren't multiple telemetry resources that select overlapping pods",
  inputs: [K.Telemetry, K.Pod],
  analyze(ctx) {
    const podTelemetries = new Map<string, { pod: Resource; telemetries: Resource[] }>();
    for (const telemetry of ctx.list(K.Telemetry)) {
      const selector = asStringMap(asRecord(specOf(telemetry).selector).matchLabels);
      if (Object.keys(selector).length === 0) continue;
      let found = false;
      for (const pod of ctx.list(K.Pod)) {
        if (pod.namespace !== telemetry.namespace || !selectorMatches(selector, labelsOf(pod))) continue;
        found = true;
        const entry = podTelemetries.get(fullName(pod)) ?? { pod, telemetries: [] };
        podTelemetries.set(fullName(pod), entry);
        entry.telemetries.push(telemetry);
      }
      if (!found)
        ctx.report(
          atField(
            newMessage(MESSAGES.ReferencedResourceNotFound, telemetry, "selector", selectorString(selector)),
            `{.spec.selector.matchLabels.${firstSelectorKey(selectorString(selector))}}`,
          ),
        );
    }
    for (const { pod, telemetries } of podTelemetries.values()) {
      if (telemetries.length === 1) continue;
      const names = telemetries.map((t) => t.name).sort();
      for (const telemetry of telemetries) {
        const m = newMessage(MESSAGES.ConflictingTelemetryWorkloadSelectors, telemetry, names, pod.namespace, pod.name);
        ctx.report(atField(m, "{.metadata.name}"));
      }
    }
  },
};

export const telemetryDefaultSelectorAnalyzer: Analyzer = {
  name: "telemetry.DefaultSelectorAnalyzer",
  description: "Validates that there aren't multiple telemetry resources that have no selector",
  inputs: [K.Telemetry],
  analyze(ctx) {
    const byNamespace = new Map<string, Resource[]>();
    for (const telemetry of ctx.list(K.Telemetry)) {
      const selector = specOf(telemetry).selector;
      if (selector !== undefined && selector !== null) continue;
      byNamespace.set(telemetry.namespace, [...(byNamespace.get(telemetry.namespace) ?? []), telemetry]);
    }
    for (const [ns, telemetries] of byNamespace) {
      if (telemetries.length < 2) continue;
      const names = telemetries.map((t) => t.name).sort();
      for (const telemetry of telemetries) {
        ctx.report(newMessage(MESSAGES.MultipleTelemetriesWithoutWorkloadSelectors, telemetry, names, ns));
      }
    }
  },
};

export const telemetryLightstepAnalyzer: Analyzer = {
  name: "telemetry.LightstepAnalyzer",
  description: "Validates that lightstep provider is still used",
  inputs: [K.Telemetry, K.MeshConfig],
  analyze(ctx) {
    const lightstep = new Set(
      asArray(ctx.meshConfig().extensionProviders)
        .map(asRecord)
        .filter((p) => p.lightstep !== undefined && p.lightstep !== null)
        .map((p) => asString(p.name)),
    );
    if (lightstep.size === 0) return;
    for (const telemetry of ctx.list(K.Telemetry)) {
      for (const tracing of asArray(specOf(telemetry).tracing).map(asRecord)) {
        for (const provider of asArray(tracing.providers).map(asRecord)) {
          const name = asString(provider.name);
          if (!lightstep.has(name)) continue;
          const detail = `The Lightstep provider ${name} is deprecated, please migrate to OpenTelemetry provider.`;
          ctx.report(newMessage(MESSAGES.Deprecated, telemetry, detail));
        }
      }
    }
  },
};
