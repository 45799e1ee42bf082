// mTLS for proxyless gRPC (Istio's grpcgen buildCommonTLSContext and buildInboundFilterChains): the
// workload certificate and roots come from the bootstrap's certificate provider instance `default`
// (the agent's file_watcher over OUTPUT_CERTS). Clients get it from an explicit DestinationRule ISTIO_MUTUAL only
// (gRPC cannot tell whether the server takes mTLS, so no auto-mTLS); servers from PeerAuthentication.
import { create } from "@bufbuild/protobuf";
import { tls } from "../../api/index.ts";
import type { MtlsMode } from "../../model/index.ts";

/** The bootstrap's certificate provider instance the agent writes. */
export const CERTIFICATE_PROVIDER_INSTANCE = "default";
const WORKLOAD_CERTIFICATE = "default";
const ROOT_CERTIFICATE = "ROOTCA";
/** The workload label saying the proxy takes mTLS (auto-mTLS clients will send it). */
const TLS_MODE_LABEL = "security.istio.io/tlsMode";

/**
 * The common context over provider `default`, peers checked against `sans` (exact) when any. Istio
 * also sends the deprecated provider fields inside a combined validation context for gRPC before
 * 1.66; Envoy's rules require an SDS config in a combined context, so the current fields alone are
 * sent, in a plain validation context (grpc-js-xds and gRPC 1.66+ read them).
 */
export function grpcCommonTlsContext(sans: readonly string[]): tls.CommonTlsContext {
  const provider = (certificateName: string) => ({ instanceName: CERTIFICATE_PROVIDER_INSTANCE, certificateName });
  return create(tls.CommonTlsContextSchema, {
    tlsCertificateProviderInstance: provider(WORKLOAD_CERTIFICATE),
    validationContextType: {
      case: "validationContext",
      value: {
        matchSubjectAltNames: sans.map((san) => ({ matchPattern: { case: "exact" as const, value: san } })),
        caCertificateProviderInstance: provider(ROOT_CERTIFICATE),
      },
    },
  });
}

/** A client cluster's context for ISTIO_MUTUAL: the server must be one of the service's identities. */
export function grpcUpstreamTlsContext(sans: readonly string[]): tls.UpstreamTlsContext {
  return create(tls.UpstreamTlsContextSchema, { commonTlsContext: grpcCommonTlsContext(sans) });
}

/**
 * The server listener's context for a port's PeerAuthentication mode; undefined means plaintext.
 * gRPC's filter chain match cannot tell TLS from plaintext, so PERMISSIVE serves plaintext, unless
 * the workload is labelled for mTLS (its clients will use it): then it is STRICT.
 */
export function grpcServerTlsContext(
  mode: MtlsMode,
  labels: Readonly<Record<string, string>>,
): tls.DownstreamTlsContext | undefined {
  const effective = mode === "PERMISSIVE" && labels[TLS_MODE_LABEL] === "istio" ? "STRICT" : mode;
  if (effective !== "STRICT") return undefined;
  // Istio leaves SAN matching out on the server: gRPC servers do not support it.
  return create(tls.DownstreamTlsContextSchema, {
    commonTlsContext: grpcCommonTlsContext([]),
    requireClientCertificate: true,
  });
}
