// istio.alpn: on outbound and gateway connections, offers the Istio ALPN values for the upstream
// HTTP version, so the server side recognises mesh traffic (pilot/pkg/xds/filters Alpn).

import { create } from "@bufbuild/protobuf";
import { istioAlpn } from "../../api/index.ts";
import { typedHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

const { HTTP10, HTTP11, HTTP2 } = istioAlpn.FilterConfig_Protocol;
const filter = typedHttpFilter(
  "istio.alpn",
  istioAlpn.FilterConfigSchema,
  create(istioAlpn.FilterConfigSchema, {
    alpnOverride: [
      { upstreamProtocol: HTTP10, alpnOverride: ["istio-http/1.0", "istio", "http/1.0"] },
      { upstreamProtocol: HTTP11, alpnOverride: ["istio-http/1.1", "istio", "http/1.1"] },
      { upstreamProtocol: HTTP2, alpnOverride: ["istio-h2", "istio", "h2"] },
    ],
  }),
);

export const alpn: HttpFilterPlugin = {
  name: "istio.alpn",
  httpFilters: (context) => (context.listenerClass === "sidecarInbound" ? [] : [filter]),
};
