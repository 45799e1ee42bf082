// istio.alpn: on outbound and gateway connections, offers the Istio ALPN values for the upstream
// HTTP version, so the server side recognises mesh traffic (pilot/pkg/xds/filters Alpn).

import { ALPN_TYPE_URL } from "./extension-types.ts";
import { typedStructHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

const filter = typedStructHttpFilter("istio.alpn", ALPN_TYPE_URL, {
  alpn_override: [
    { upstream_protocol: "HTTP10", alpn_override: ["istio-http/1.0", "istio", "http/1.0"] },
    { upstream_protocol: "HTTP11", alpn_override: ["istio-http/1.1", "istio", "http/1.1"] },
    { upstream_protocol: "HTTP2", alpn_override: ["istio-h2", "istio", "h2"] },
  ],
});

export const alpn: HttpFilterPlugin = {
  name: "istio.alpn",
  httpFilters: (context) => (context.listenerClass === "sidecarInbound" ? [] : [filter]),
};
