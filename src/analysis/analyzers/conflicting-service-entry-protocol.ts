// serviceentry.ConflictingServiceEntryProtocolAnalyzer: ServiceEntries visible in the same scope must not
// declare the same host and port with different protocols; each ServiceEntry involved is reported once.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, asStringArray, fullName, type Resource, specOf } from "../resource.ts";
import { ALL_NAMESPACES, exportToScopes } from "../service-lookup.ts";

export const conflictingServiceEntryProtocolAnalyzer: Analyzer = {
  name: "serviceentry.ConflictingServiceEntryProtocolAnalyzer",
  description: "Checks if multiple ServiceEntries define the same host and port with different protocols",
  inputs: [K.ServiceEntry],
  analyze(ctx) {
    // "<scope>|<host>|<port>" → the ServiceEntries declaring it, with their protocols.
    const index = new Map<
      string,
      { scope: string; host: string; port: number; entries: { protocol: string; entry: Resource }[] }
    >();
    for (const entry of ctx.list(K.ServiceEntry)) {
      const spec = specOf(entry);
      for (const scope of exportToScopes(asStringArray(spec.exportTo), entry.namespace)) {
        for (const host of asStringArray(spec.hosts)) {
          for (const port of asArray(spec.ports).map(asRecord)) {
            const number = Number(port.number ?? 0);
            const key = `${scope}|${host}|${number}`;
            const slot = index.get(key) ?? { scope, host, port: number, entries: [] };
            index.set(key, slot);
            slot.entries.push({ protocol: asString(port.protocol), entry });
          }
        }
      }
    }
    const reported = new Set<string>();
    for (const slot of index.values()) {
      const entries =
        slot.scope === ALL_NAMESPACES
          ? slot.entries
          : [...slot.entries, ...(index.get(`${ALL_NAMESPACES}|${slot.host}|${slot.port}`)?.entries ?? [])];
      const protocols = [...new Set(entries.map((e) => e.protocol.toUpperCase()))].sort();
      if (protocols.length < 2) continue;
      const names = [...new Set(entries.map((e) => fullName(e.entry)))].sort().join(", ");
      for (const { entry } of entries) {
        if (reported.has(fullName(entry))) continue;
        reported.add(fullName(entry));
        const m = newMessage(
          MESSAGES.ConflictingServiceEntryProtocol,
          entry,
          names,
          slot.host,
          slot.port,
          protocols.join(", "),
        );
        ctx.report(atField(m, "{.metadata.name}"));
      }
    }
  },
};
