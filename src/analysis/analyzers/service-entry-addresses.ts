// serviceentry.Analyzer: a ServiceEntry without addresses needs them for TCP (or unset protocol) ports,
// unless an address was allocated (status) or the mesh's proxies capture DNS and auto-allocate.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, asStringMap, specOf } from "../resource.ts";

export const serviceEntryAddressesAnalyzer: Analyzer = {
  name: "serviceentry.Analyzer",
  description: "Checks the validity of ServiceEntry",
  inputs: [K.ServiceEntry, K.MeshConfig],
  analyze(ctx) {
    let autoAllocated = false;
    for (const mesh of ctx.list(K.MeshConfig)) {
      const metadata = asStringMap(asRecord(specOf(mesh).defaultConfig).proxyMetadata);
      if (metadata.ISTIO_META_DNS_CAPTURE !== "true") continue;
      if (metadata.ISTIO_META_DNS_AUTO_ALLOCATE === "true" || metadata.PILOT_ENABLE_IP_AUTOALLOCATE === "true") {
        autoAllocated = true;
      }
    }
    for (const entry of ctx.list(K.ServiceEntry)) {
      const spec = specOf(entry);
      const allocated = asArray(asRecord(entry.object.status).addresses).length > 0;
      // An empty list decodes to no addresses in Go, as an absent one does.
      if (asArray(spec.addresses).length > 0 || allocated || autoAllocated) continue;
      for (const [index, port] of asArray(spec.ports).map(asRecord).entries()) {
        const protocol = asString(port.protocol);
        if (protocol === "" || protocol.toUpperCase() === "TCP") {
          ctx.report(
            atField(newMessage(MESSAGES.ServiceEntryAddressesRequired, entry), `{.spec.ports[${index}].name}`),
          );
        }
      }
    }
  },
};
