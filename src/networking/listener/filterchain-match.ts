// The inbound filter chain matches per port protocol and mTLS mode (filterchain_options.go): mesh
// mTLS is told apart from plaintext by transport protocol and Istio's ALPN values.

import { PLAINTEXT_HTTP_ALPN, RAW_BUFFER_TRANSPORT, TLS_TRANSPORT } from "./sniffing.ts";
import type { MtlsMode } from "./types.ts";

/** ALPN a sidecar client offers for mesh HTTP. */
export const MTLS_HTTP_ALPN: readonly string[] = Object.freeze(["istio-http/1.0", "istio-http/1.1", "istio-h2"]);
/** Every ALPN a sidecar client may offer with mesh mTLS. */
export const ALL_ISTIO_MTLS_ALPN: readonly string[] = Object.freeze([
  "istio",
  "istio-peer-exchange",
  "istio-http/1.0",
  "istio-http/1.1",
  "istio-h2",
]);
/** ALPN of mesh TCP with metadata exchange. */
export const MTLS_TCP_WITH_MX_ALPN: readonly string[] = Object.freeze(["istio-peer-exchange", "istio"]);

/** One filter chain of an inbound port. */
export interface InboundChainOption {
  /** HTTP connection manager, else tcp_proxy. */
  http: boolean;
  /** Terminates mesh mTLS (carries the DownstreamTlsContext). */
  mtls: boolean;
  transportProtocol: typeof TLS_TRANSPORT | typeof RAW_BUFFER_TRANSPORT;
  applicationProtocols: readonly string[];
}

type InboundClass = "http" | "tcp" | "auto";

function option(
  http: boolean,
  transportProtocol: InboundChainOption["transportProtocol"],
  mtls = false,
  applicationProtocols: readonly string[] = [],
): InboundChainOption {
  return Object.freeze({ http, mtls, transportProtocol, applicationProtocols });
}

const OPTIONS: Readonly<Record<InboundClass, Readonly<Record<MtlsMode, readonly InboundChainOption[]>>>> = {
  auto: {
    PERMISSIVE: [
      option(true, TLS_TRANSPORT, true, MTLS_HTTP_ALPN),
      option(true, RAW_BUFFER_TRANSPORT, false, PLAINTEXT_HTTP_ALPN),
      option(false, TLS_TRANSPORT, true, MTLS_TCP_WITH_MX_ALPN),
      option(false, RAW_BUFFER_TRANSPORT),
      // TLS that is not mesh mTLS (the application's own), passed through.
      option(false, TLS_TRANSPORT),
    ],
    STRICT: [option(true, TLS_TRANSPORT, true, MTLS_HTTP_ALPN), option(false, TLS_TRANSPORT, true)],
    DISABLE: [option(true, RAW_BUFFER_TRANSPORT, false, PLAINTEXT_HTTP_ALPN), option(false, RAW_BUFFER_TRANSPORT)],
  },
  http: {
    PERMISSIVE: [option(true, TLS_TRANSPORT, true, ALL_ISTIO_MTLS_ALPN), option(true, RAW_BUFFER_TRANSPORT)],
    STRICT: [option(true, TLS_TRANSPORT, true)],
    DISABLE: [option(true, RAW_BUFFER_TRANSPORT)],
  },
  tcp: {
    PERMISSIVE: [
      option(false, TLS_TRANSPORT, true, ALL_ISTIO_MTLS_ALPN),
      option(false, TLS_TRANSPORT),
      option(false, RAW_BUFFER_TRANSPORT),
    ],
    STRICT: [option(false, TLS_TRANSPORT, true)],
    DISABLE: [option(false, RAW_BUFFER_TRANSPORT)],
  },
};

/** The chains of an inbound port, in Istio's order. Passthrough chains use the `auto` class. */
export function inboundChainOptions(protocol: InboundClass, mode: MtlsMode): readonly InboundChainOption[] {
  return OPTIONS[protocol][mode];
}
