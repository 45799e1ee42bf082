// Downstream TLS: the sidecar's inbound mTLS context (pilot/pkg/security/authn/utils BuildInboundTLS)
// and a Gateway server's context (listener.go BuildListenerTLSContext), with certificates from SDS:
// workload certs `default`/`ROOTCA` over `sds-grpc`, gateway credentials `kubernetes://…` over ADS.
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { core, matcher, packAny, quicTransport, tls } from "../../api/index.ts";
import type { MeshConfig, ServerTlsSettings } from "../../config/index.ts";

export const SDS_DEFAULT = "default";
export const SDS_ROOTCA = "ROOTCA";
const SDS_CLUSTER = "sds-grpc";
const TLS_TRANSPORT_SOCKET = "envoy.transport_sockets.tls";
const CA_SUFFIX = "-cacert";

/** Istio's SupportedCiphers for mesh mTLS. */
export const MESH_CIPHER_SUITES: readonly string[] = Object.freeze([
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "AES256-GCM-SHA384",
  "AES128-GCM-SHA256",
]);
export const ALPN_HTTP: readonly string[] = Object.freeze(["h2", "http/1.1"]);
export const ALPN_DOWNSTREAM_WITH_MX: readonly string[] = Object.freeze(["istio-peer-exchange", "h2", "http/1.1"]);
export const ALPN_HTTP3: readonly string[] = Object.freeze(["h3"]);
const QUIC_TRANSPORT_SOCKET = "envoy.transport_sockets.quic";

type TlsVersion = NonNullable<ServerTlsSettings["minProtocolVersion"]>;

const TLS_VERSIONS: Readonly<Record<TlsVersion, tls.TlsParameters_TlsProtocol>> = {
  TLS_AUTO: tls.TlsParameters_TlsProtocol.TLS_AUTO,
  TLSV1_0: tls.TlsParameters_TlsProtocol.TLSv1_0,
  TLSV1_1: tls.TlsParameters_TlsProtocol.TLSv1_1,
  TLSV1_2: tls.TlsParameters_TlsProtocol.TLSv1_2,
  TLSV1_3: tls.TlsParameters_TlsProtocol.TLSv1_3,
};

/** A workload secret (`default`, `ROOTCA`, `file-cert:…`) served by the agent's SDS over `sds-grpc`. */
export function workloadSdsSecret(name: string): tls.SdsSecretConfig {
  return create(tls.SdsSecretConfigSchema, {
    name,
    sdsConfig: create(core.ConfigSourceSchema, {
      configSourceSpecifier: {
        case: "apiConfigSource",
        value: create(core.ApiConfigSourceSchema, {
          apiType: core.ApiConfigSource_ApiType.GRPC,
          setNodeOnFirstMessageOnly: true,
          transportApiVersion: core.ApiVersion.V3,
          grpcServices: [
            create(core.GrpcServiceSchema, {
              targetSpecifier: {
                case: "envoyGrpc",
                value: create(core.GrpcService_EnvoyGrpcSchema, { clusterName: SDS_CLUSTER }),
              },
            }),
          ],
        }),
      },
      resourceApiVersion: core.ApiVersion.V3,
      initialFetchTimeout: create(DurationSchema, {}),
    }),
  });
}

/**
 * A credentialName as its SDS secret, served by the control plane over ADS (Istio's
 * ConstructSdsSecretConfigForCredential): `builtin://` is the workload cert; `kubernetes://`,
 * `kubernetes-gateway://` and `configmap://` names are kept; `sds://x` is asked for as `x`;
 * a bare name becomes `kubernetes://<name>`.
 */
export function credentialSdsSecret(credentialName: string): tls.SdsSecretConfig {
  if (credentialName === "builtin://") return workloadSdsSecret(SDS_DEFAULT);
  if (credentialName === `builtin://${CA_SUFFIX}`) return workloadSdsSecret(SDS_ROOTCA);
  const name = credentialName.startsWith("sds://") ? credentialName.slice("sds://".length) : credentialName;
  return create(tls.SdsSecretConfigSchema, {
    name: credentialResourceName(name),
    sdsConfig: create(core.ConfigSourceSchema, {
      configSourceSpecifier: { case: "ads", value: create(core.AggregatedConfigSourceSchema) },
      resourceApiVersion: core.ApiVersion.V3,
    }),
  });
}

function credentialResourceName(name: string): string {
  if (name.startsWith("builtin://")) return SDS_DEFAULT;
  const explicit = ["kubernetes://", "kubernetes-gateway://", "configmap://"];
  return explicit.some((prefix) => name.startsWith(prefix)) ? name : `kubernetes://${name}`;
}

/**
 * The sidecar's inbound mTLS context: client certificates required and checked against the mesh
 * root (`ROOTCA`) and the trust domains; HTTP chains offer `h2, http/1.1`, TCP chains add
 * `istio-peer-exchange` for metadata exchange.
 */
export function inboundMtlsContext(
  chain: "http" | "tcp",
  mesh: MeshConfig,
  trustDomains: readonly string[],
): tls.DownstreamTlsContext {
  const minVersion = mesh.meshMTLS?.minProtocolVersion === "TLSV1_3" ? "TLSV1_3" : "TLSV1_2";
  return create(tls.DownstreamTlsContextSchema, {
    requireClientCertificate: true,
    commonTlsContext: create(tls.CommonTlsContextSchema, {
      alpnProtocols: [...(chain === "tcp" ? ALPN_DOWNSTREAM_WITH_MX : ALPN_HTTP)],
      tlsParams: create(tls.TlsParametersSchema, {
        cipherSuites: [...(mesh.meshMTLS?.cipherSuites ?? MESH_CIPHER_SUITES)],
        tlsMinimumProtocolVersion: TLS_VERSIONS[minVersion],
        tlsMaximumProtocolVersion: tls.TlsParameters_TlsProtocol.TLSv1_3,
      }),
      tlsCertificateSdsSecretConfigs: [workloadSdsSecret(SDS_DEFAULT)],
      validationContextType: combinedValidation(
        trustDomains.map((td) => sanMatcher({ case: "prefix", value: `spiffe://${td}/` })),
        workloadSdsSecret(SDS_ROOTCA),
      ),
    }),
  });
}

/**
 * A Gateway server's downstream TLS context. `tcpIstioMutual`: an ISTIO_MUTUAL server terminating
 * TLS for TCP, which also offers `istio-peer-exchange`. `quic`: the context of its HTTP/3 listener,
 * ALPN h3 and no client certificate required (Envoy's QUIC cannot require one): only credentialName
 * servers keep their client validation.
 */
export function gatewayTlsContext(
  settings: ServerTlsSettings,
  mesh: MeshConfig,
  tcpIstioMutual = false,
  quic = false,
): tls.DownstreamTlsContext {
  const mode = settings.mode ?? "SIMPLE";
  const requireClientCertificate = (mode === "MUTUAL" || mode === "ISTIO_MUTUAL") && !quic;
  const validateClient = requireClientCertificate || mode === "OPTIONAL_MUTUAL";
  const alpn = quic ? ALPN_HTTP3 : mode === "ISTIO_MUTUAL" && tcpIstioMutual ? ALPN_DOWNSTREAM_WITH_MX : ALPN_HTTP;
  const common = create(tls.CommonTlsContextSchema, { alpnProtocols: [...alpn] });
  const credentialNames = settings.credentialNames?.length
    ? settings.credentialNames
    : settings.credentialName
      ? [settings.credentialName]
      : [];

  if (mode === "ISTIO_MUTUAL") {
    common.tlsCertificateSdsSecretConfigs = [workloadSdsSecret(SDS_DEFAULT)];
    if (validateClient) {
      common.validationContextType = combinedValidation(exactSans(settings), workloadSdsSecret(SDS_ROOTCA), settings);
    }
  } else if (credentialNames.length > 0) {
    common.tlsCertificateSdsSecretConfigs = credentialNames.map(credentialSdsSecret);
    const caName = settings.caCertCredentialName || `${credentialNames[0]}${CA_SUFFIX}`;
    // By mode, not by whether a certificate is required: a QUIC MUTUAL server keeps its CA (as Istio).
    if (mode === "MUTUAL" || mode === "OPTIONAL_MUTUAL") {
      const validation = create(tls.CertificateValidationContextSchema, {
        matchSubjectAltNames: exactSans(settings),
        verifyCertificateSpki: settings.verifyCertificateSpki ?? [],
        verifyCertificateHash: settings.verifyCertificateHash ?? [],
      });
      if (settings.insecureSkipVerify) {
        validation.trustChainVerification = tls.CertificateValidationContext_TrustChainVerification.ACCEPT_UNTRUSTED;
      }
      common.validationContextType = {
        case: "combinedValidationContext",
        value: create(tls.CommonTlsContext_CombinedCertificateValidationContextSchema, {
          defaultValidationContext: validation,
          validationContextSdsSecretConfig: credentialSdsSecret(caName),
        }),
      };
    } else if ((settings.subjectAltNames ?? []).length > 0) {
      common.validationContextType = {
        case: "validationContext",
        value: create(tls.CertificateValidationContextSchema, { matchSubjectAltNames: exactSans(settings) }),
      };
    }
  } else {
    // Certificates mounted in the gateway pod, served by the agent's SDS from the files.
    common.tlsCertificateSdsSecretConfigs = fileCertificateNames(settings).map(workloadSdsSecret);
    if (validateClient) {
      const root = settings.caCertificates ? `file-root:${settings.caCertificates}` : SDS_ROOTCA;
      common.validationContextType = combinedValidation(exactSans(settings), workloadSdsSecret(root), settings);
    }
  }

  if (mode === "SIMPLE" || mode === "MUTUAL" || mode === "OPTIONAL_MUTUAL") applyTlsParams(common, mesh, settings);
  return create(tls.DownstreamTlsContextSchema, { commonTlsContext: common, requireClientCertificate });
}

/** `file-cert:<cert>~<key>` per certificate pair (tlsCertificates, else serverCertificate/privateKey), else `default`. */
function fileCertificateNames(settings: ServerTlsSettings): string[] {
  const pairs = settings.tlsCertificates?.length
    ? settings.tlsCertificates.map((c) => [c.serverCertificate ?? "", c.privateKey ?? ""])
    : [[settings.serverCertificate ?? "", settings.privateKey ?? ""]];
  return pairs.map(([cert, key]) => (cert !== "" && key !== "" ? `file-cert:${cert}~${key}` : SDS_DEFAULT));
}

/** Mesh tlsDefaults first, then the server's own settings on top; no tls_params when neither sets any. */
function applyTlsParams(common: tls.CommonTlsContext, mesh: MeshConfig, settings: ServerTlsSettings): void {
  const defaults = mesh.tlsDefaults ?? {};
  const ecdhCurves = settings.ecdhCurves?.length ? settings.ecdhCurves : defaults.ecdhCurves;
  const cipherSuites = settings.cipherSuites?.length ? settings.cipherSuites : defaults.cipherSuites;
  const minVersion = explicitVersion(settings.minProtocolVersion) ?? explicitVersion(defaults.minProtocolVersion);
  const maxVersion = explicitVersion(settings.maxProtocolVersion);
  if (!ecdhCurves?.length && !cipherSuites?.length && minVersion === undefined && maxVersion === undefined) return;
  common.tlsParams = create(tls.TlsParametersSchema, {
    ecdhCurves: [...(ecdhCurves ?? [])],
    cipherSuites: [...(cipherSuites ?? [])],
    tlsMinimumProtocolVersion: minVersion,
    tlsMaximumProtocolVersion: maxVersion,
  });
}

/** A TLS version other than TLS_AUTO, as Envoy's enum. */
function explicitVersion(version: string | undefined): tls.TlsParameters_TlsProtocol | undefined {
  return version && version !== "TLS_AUTO" && version in TLS_VERSIONS ? TLS_VERSIONS[version as TlsVersion] : undefined;
}

function exactSans(settings: ServerTlsSettings): matcher.StringMatcher[] {
  return (settings.subjectAltNames ?? []).map((san) => sanMatcher({ case: "exact", value: san }));
}

function sanMatcher(pattern: matcher.StringMatcher["matchPattern"]): matcher.StringMatcher {
  return create(matcher.StringMatcherSchema, { matchPattern: pattern });
}

function combinedValidation(
  sans: matcher.StringMatcher[],
  root: tls.SdsSecretConfig,
  settings?: ServerTlsSettings,
): tls.CommonTlsContext["validationContextType"] {
  const validation = create(tls.CertificateValidationContextSchema, { matchSubjectAltNames: sans });
  if (settings?.caCrl) {
    validation.crl = create(core.DataSourceSchema, { specifier: { case: "filename", value: settings.caCrl } });
  }
  if (settings?.insecureSkipVerify) {
    validation.trustChainVerification = tls.CertificateValidationContext_TrustChainVerification.ACCEPT_UNTRUSTED;
  }
  return {
    case: "combinedValidationContext",
    value: create(tls.CommonTlsContext_CombinedCertificateValidationContextSchema, {
      defaultValidationContext: validation,
      validationContextSdsSecretConfig: root,
    }),
  };
}

/** The TLS transport socket of a filter chain. */
export function downstreamTlsSocket(context: tls.DownstreamTlsContext): core.TransportSocket {
  return create(core.TransportSocketSchema, {
    name: TLS_TRANSPORT_SOCKET,
    configType: { case: "typedConfig", value: packAny(tls.DownstreamTlsContextSchema, context) },
  });
}

/** A QUIC listener's transport: QUIC with the TLS context inside (listener.go buildDownstreamQUICTransportSocket). */
export function downstreamQuicSocket(context: tls.DownstreamTlsContext): core.TransportSocket {
  const transport = create(quicTransport.QuicDownstreamTransportSchema, { downstreamTlsContext: context });
  return create(core.TransportSocketSchema, {
    name: QUIC_TRANSPORT_SOCKET,
    configType: { case: "typedConfig", value: packAny(quicTransport.QuicDownstreamTransportSchema, transport) },
  });
}
