// Upstream TLS of an outbound cluster (Istio's cluster_tls.go): DestinationRule tls modes DISABLE,
// SIMPLE, MUTUAL, ISTIO_MUTUAL, and auto-mTLS, where the Istio TLS socket is used only for endpoints
// labelled `tlsMode: istio` (transport_socket_matches) and plaintext for the rest.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { cluster, core, encodeMessage, packAny, preEncoded, rawBuffer, tls, typeUrl } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { DestinationRuleTrafficPolicyTls } from "../../config/types/index.ts";
import { anyMessage, transportSocketMatchMessage, transportSocketMessage } from "./message.ts";

type CommonTlsInit = MessageInitShape<typeof tls.CommonTlsContextSchema>;
type SdsSecretConfigInit = MessageInitShape<typeof tls.SdsSecretConfigSchema>;

export const TLS_TRANSPORT_SOCKET = "envoy.transport_sockets.tls";
export const RAW_BUFFER_TRANSPORT_SOCKET = "envoy.transport_sockets.raw_buffer";
/** The SDS cluster the agent serves workload certificates on (bootstrap). */
export const SDS_CLUSTER = "sds-grpc";
export const SDS_DEFAULT_RESOURCE = "default";
export const SDS_ROOT_RESOURCE = "ROOTCA";

const ALPN_IN_MESH = ["istio-peer-exchange", "istio"];
const ALPN_IN_MESH_H2 = ["istio-peer-exchange", "istio", "h2"];
const ALPN_H2_ONLY = ["h2"];

const TLS_V1_2 = tls.TlsParameters_TlsProtocol.TLSv1_2;
const TLS_V1_3 = tls.TlsParameters_TlsProtocol.TLSv1_3;

/**
 * The encoded common_tls_context field (tag, length, CommonTlsContext) of Istio mTLS by its inputs
 * (ALPN and SANs), shared by clusters: clusters differ in SNI and rarely in SANs, and building plus
 * encoding the context per cluster was most of CDS generation.
 */
export type IstioTlsContextCache = Map<string, Uint8Array>;

/** A bound on a context cache, as SANs come and go with services; the few in use are encoded again. */
const MAX_ISTIO_TLS_CONTEXTS = 1000;

export interface UpstreamTlsInput {
  clusterName: string;
  /** The DestinationRule tls for this cluster (port and subset merged), if any. */
  tls: DestinationRuleTrafficPolicyTls | undefined;
  /**
   * The service's identities (trust-domain aliases expanded): SANs for Istio mTLS without rule SANs,
   * and for SIMPLE/MUTUAL to a ServiceEntry without SANs.
   */
  serviceAccounts: readonly string[];
  /** `outbound_.<port>_.<subset>_.<host>`; "" for a dynamic forward proxy cluster. */
  istioSni: string;
  /** Whether auto-mTLS may apply (mesh enableAutoMtls, service not external, its mTLS mode not DISABLE/UNKNOWN). */
  autoMtls: boolean;
  /** The service is a ServiceEntry (its SANs fill in for a SIMPLE/MUTUAL rule without SANs). */
  external: boolean;
  /** The cluster is explicit HTTP/2 (ALPN gets h2). */
  http2: boolean;
  /** ORIGINAL_DST clusters get the Istio socket directly, not through transport socket matches. */
  originalDst: boolean;
  /** Secrets by credentialName may be read: on gateways, and on sidecars only for a rule with a workloadSelector. */
  credentialNameAllowed: boolean;
  /**
   * A dynamic forward proxy cluster: no SNI of its own (each host's name is its SNI), and its SANs
   * checked against that name unless verification is skipped.
   */
  dynamicForwardProxy?: boolean;
  mesh: MeshConfig;
  /** Shares the encoded Istio mTLS contexts between clusters; without it each encodes its own. */
  istioTlsContexts?: IstioTlsContextCache;
}

export interface UpstreamTls {
  transportSocket?: core.TransportSocket;
  transportSocketMatches?: cluster.Cluster_TransportSocketMatch[];
  /** HttpProtocolOptions upstream_http_protocol_options wanted (SIMPLE/MUTUAL without sni). */
  autoSni?: boolean;
  autoSanValidation?: boolean;
  /** A dynamic forward proxy cluster must allow TLS without auto SNI or auto SAN validation explicitly. */
  allowInsecureClusterOptions?: boolean;
  /** Istio marks SIMPLE/MUTUAL clusters `alpn_override: "false"` so its ALPN filter leaves them alone. */
  alpnOverride: boolean;
}

export function buildUpstreamTls(input: UpstreamTlsInput): UpstreamTls {
  const built = buildTls(input);
  if (!input.dynamicForwardProxy || !(built.transportSocket || built.transportSocketMatches)) return built;
  return { ...built, ...forwardProxyValidation(input.tls) };
}

/**
 * Istio's setAutoSniAndAutoSanValidation for dynamic forward proxy clusters: SNI from the host asked
 * for unless the rule names one, that host checked against the certificate unless verification is
 * skipped; either missing must be allowed explicitly.
 */
function forwardProxyValidation(
  rule: DestinationRuleTrafficPolicyTls | undefined,
): Pick<UpstreamTls, "autoSni" | "autoSanValidation" | "allowInsecureClusterOptions"> {
  const skipVerify = rule?.insecureSkipVerify === true;
  const autoSni = !rule?.sni;
  return { autoSni, autoSanValidation: !skipVerify, allowInsecureClusterOptions: skipVerify || !autoSni };
}

function buildTls(input: UpstreamTlsInput): UpstreamTls {
  const rule = input.tls;
  if (rule) {
    switch (rule.mode) {
      case "ISTIO_MUTUAL": {
        const socket = istioMutualSocket(input, rule.sni || input.istioSni, sansOr(rule, input.serviceAccounts));
        return { transportSocket: socket, alpnOverride: false };
      }
      case "SIMPLE":
      case "MUTUAL":
        return userTls(input, rule);
      default:
        return { alpnOverride: false };
    }
  }
  if (!input.autoMtls) return { alpnOverride: false };
  const socket = istioMutualSocket(input, input.istioSni, input.serviceAccounts);
  if (input.originalDst) return { transportSocket: socket, alpnOverride: false };
  const istioMatch = transportSocketMatchMessage("tlsMode-istio", TLS_MODE_ISTIO, socket);
  return { transportSocketMatches: [istioMatch, TLS_MODE_DISABLED], alpnOverride: false };
}

const UPSTREAM_TLS_TYPE_URL = typeUrl(tls.UpstreamTlsContextSchema);
const UPSTREAM_TLS_FIELDS = tls.UpstreamTlsContextSchema.field;
const COMMON_TLS_CONTEXT_TAG = lengthDelimitedTag(UPSTREAM_TLS_FIELDS.commonTlsContext.number);
const SNI_TAG = lengthDelimitedTag(UPSTREAM_TLS_FIELDS.sni.number);

/**
 * Istio's client side of mesh mTLS: workload certificate and root CA from the agent's SDS. The
 * UpstreamTlsContext is written as toBinary would write it (common_tls_context, then sni when not empty):
 * the encoded common_tls_context field is shared through the cache, and each cluster appends its SNI.
 */
function istioMutualSocket(input: UpstreamTlsInput, sni: string, sans: readonly string[]): core.TransportSocket {
  // Most services have no SANs: their key is a constant, not a new string to build and hash.
  const alpn = input.http2 ? "h2" : "h1";
  const key = sans.length === 0 ? alpn : `${alpn}${JSON.stringify(sans)}`;
  let commonField = input.istioTlsContexts?.get(key);
  if (!commonField) {
    const common = encodeMessage(
      tls.CommonTlsContextSchema,
      create(tls.CommonTlsContextSchema, istioCommonTls(input.http2, sans)),
    );
    commonField = new Uint8Array(1 + varintSize(common.length) + common.length);
    commonField.set(common, writeFieldHeader(commonField, 0, COMMON_TLS_CONTEXT_TAG, common.length));
    if (input.istioTlsContexts && input.istioTlsContexts.size >= MAX_ISTIO_TLS_CONTEXTS) input.istioTlsContexts.clear();
    input.istioTlsContexts?.set(key, commonField);
  }
  const clusterSni = sni || (input.dynamicForwardProxy ? "" : input.clusterName);
  let value = commonField;
  if (clusterSni !== "") {
    const sniLength = Buffer.byteLength(clusterSni);
    // From Node's pool: a fresh ArrayBuffer per cluster cost more than the bytes it holds.
    const withSni = Buffer.allocUnsafe(commonField.length + 1 + varintSize(sniLength) + sniLength);
    withSni.set(commonField);
    withSni.write(clusterSni, writeFieldHeader(withSni, commonField.length, SNI_TAG, sniLength), sniLength, "utf8");
    value = withSni;
  }
  return transportSocketMessage(TLS_TRANSPORT_SOCKET, anyMessage(UPSTREAM_TLS_TYPE_URL, value));
}

/** The one-byte tag of a length-delimited field numbered below 16. */
function lengthDelimitedTag(fieldNumber: number): number {
  if (fieldNumber >= 16) throw new Error(`tls: field ${fieldNumber} does not have a one-byte tag`);
  return (fieldNumber << 3) | WireType.LengthDelimited;
}

function varintSize(n: number): number {
  let size = 1;
  for (let rest = n >>> 7; rest > 0; rest >>>= 7) size++;
  return size;
}

/** Writes a one-byte tag and the varint length at `pos`; returns where the field's bytes go. */
function writeFieldHeader(out: Uint8Array, pos: number, tag: number, length: number): number {
  out[pos++] = tag;
  let rest = length;
  while (rest > 0x7f) {
    out[pos++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  out[pos++] = rest;
  return pos;
}

function istioCommonTls(http2: boolean, sans: readonly string[]): CommonTlsInit {
  return {
    tlsParams: { tlsMinimumProtocolVersion: TLS_V1_2, tlsMaximumProtocolVersion: TLS_V1_3 },
    alpnProtocols: http2 ? ALPN_IN_MESH_H2 : ALPN_IN_MESH,
    tlsCertificateSdsSecretConfigs: [agentSdsSecret(SDS_DEFAULT_RESOURCE)],
    validationContextType: {
      case: "combinedValidationContext",
      value: {
        defaultValidationContext: { matchSubjectAltNames: exactSans(sans) },
        validationContextSdsSecretConfig: agentSdsSecret(SDS_ROOT_RESOURCE),
      },
    },
  };
}

/**
 * SIMPLE and MUTUAL: the user's CA (files through the agent's SDS, or a Secret by credentialName). A
 * sidecar may not read Secrets by a rule that selects no workloads: it gets no TLS at all.
 */
function userTls(input: UpstreamTlsInput, rule: DestinationRuleTrafficPolicyTls): UpstreamTls {
  const credential = rule.credentialName ?? "";
  const privilegedCredential =
    credential !== "" && !credential.startsWith("configmap://") && credential !== "invalid://";
  if (privilegedCredential && !input.credentialNameAllowed) return { alpnOverride: true };
  const skipVerify = rule.insecureSkipVerify === true;
  const autoSni = !rule.sni;
  const autoSanValidation = autoSni && (rule.subjectAltNames?.length ?? 0) === 0 && !skipVerify;
  const sans =
    input.external && (rule.subjectAltNames?.length ?? 0) === 0
      ? [...input.serviceAccounts]
      : (rule.subjectAltNames ?? []);
  const tlsDefaults = input.mesh.tlsDefaults;
  const common: CommonTlsInit = {
    tlsParams: {
      tlsMinimumProtocolVersion: TLS_V1_2,
      tlsMaximumProtocolVersion: TLS_V1_3,
      ecdhCurves: tlsDefaults?.ecdhCurves ?? [],
      cipherSuites: tlsDefaults?.cipherSuites ?? [],
    },
  };
  if (credential !== "") {
    if (rule.mode === "MUTUAL") common.tlsCertificateSdsSecretConfigs = [credentialSecret(credential)];
    if (!skipVerify) {
      common.validationContextType = {
        case: "combinedValidationContext",
        value: {
          defaultValidationContext: { matchSubjectAltNames: exactSans(sans) },
          validationContextSdsSecretConfig: credentialSecret(`${credential}-cacert`),
        },
      };
    }
  } else {
    if (rule.mode === "MUTUAL") {
      // Istio builds no TLS context for MUTUAL without both files (validation rejects such rules).
      if (!rule.clientCertificate || !rule.privateKey) return { alpnOverride: true, autoSni, autoSanValidation };
      common.tlsCertificateSdsSecretConfigs = [
        agentSdsSecret(`file-cert:${rule.clientCertificate}~${rule.privateKey}`),
      ];
    }
    const ca = rule.caCertificates || "system";
    common.validationContextType = skipVerify
      ? { case: "validationContext", value: {} }
      : {
          case: "combinedValidationContext",
          value: {
            defaultValidationContext: {
              matchSubjectAltNames: exactSans(sans),
              crl: rule.caCrl ? { specifier: { case: "filename", value: rule.caCrl } } : undefined,
            },
            validationContextSdsSecretConfig: agentSdsSecret(`file-root:${ca}`),
          },
        };
  }
  if (input.http2) common.alpnProtocols = ALPN_H2_ONLY;
  return {
    transportSocket: tlsSocket({ commonTlsContext: common, sni: rule.sni ?? "" }),
    autoSni,
    autoSanValidation,
    alpnOverride: true,
  };
}

function sansOr(rule: DestinationRuleTrafficPolicyTls, fallback: readonly string[]): readonly string[] {
  return rule.subjectAltNames && rule.subjectAltNames.length > 0 ? rule.subjectAltNames : fallback;
}

function exactSans(sans: readonly string[]): { matchPattern: { case: "exact"; value: string } }[] {
  return sans.map((san) => ({ matchPattern: { case: "exact", value: san } }));
}

/** SPIFFE identities also under every trust domain alias (Istio's ExpandWithTrustDomains), sorted and unique. */
export function expandTrustDomains(sans: readonly string[], mesh: MeshConfig): string[] {
  const aliases = mesh.trustDomainAliases ?? [];
  const out = new Set(sans);
  if (aliases.length > 0) {
    const domains = [mesh.trustDomain ?? "cluster.local", ...aliases];
    for (const san of sans) {
      const m = /^spiffe:\/\/([^/]+)(\/.*)$/.exec(san);
      if (!m) continue;
      for (const domain of domains) out.add(`spiffe://${domain}${m[2]}`);
    }
  }
  return [...out].sort();
}

/**
 * A secret the agent serves over SDS on the `sds-grpc` bootstrap cluster (Istio's ConstructSdsSecretConfig):
 * only the workload's own certificate and root wait for it without timeout (initial_fetch_timeout 0s);
 * a file-mounted one keeps Envoy's default.
 */
export function agentSdsSecret(name: string): SdsSecretConfigInit {
  const workloadSecret = name === "default" || name === "ROOTCA";
  return {
    name,
    sdsConfig: {
      configSourceSpecifier: {
        case: "apiConfigSource",
        value: {
          apiType: core.ApiConfigSource_ApiType.GRPC,
          setNodeOnFirstMessageOnly: true,
          transportApiVersion: core.ApiVersion.V3,
          grpcServices: [{ targetSpecifier: { case: "envoyGrpc", value: { clusterName: SDS_CLUSTER } } }],
        },
      },
      initialFetchTimeout: workloadSecret ? {} : undefined,
      resourceApiVersion: core.ApiVersion.V3,
    },
  };
}

/** A Kubernetes Secret served by the control plane over ADS (Istio's ConstructSdsSecretConfigForCredential). */
export function credentialSecret(credentialName: string): SdsSecretConfigInit {
  const name = credentialName.includes("://") ? credentialName : `kubernetes://${credentialName}`;
  return {
    name,
    sdsConfig: { configSourceSpecifier: { case: "ads", value: {} }, resourceApiVersion: core.ApiVersion.V3 },
  };
}

function tlsSocket(context: MessageInitShape<typeof tls.UpstreamTlsContextSchema>): core.TransportSocket {
  return transportSocketMessage(
    TLS_TRANSPORT_SOCKET,
    packAny(tls.UpstreamTlsContextSchema, create(tls.UpstreamTlsContextSchema, context)),
  );
}

// The same for every cluster; generated messages are never changed after they are built, so one is shared.
const RAW_BUFFER_CONFIG = packAny(rawBuffer.RawBufferSchema, create(rawBuffer.RawBufferSchema, {}));

/** The plaintext socket, the same message for every cluster. */
export const RAW_BUFFER_SOCKET = transportSocketMessage(RAW_BUFFER_TRANSPORT_SOCKET, RAW_BUFFER_CONFIG);

/** The plaintext socket named as Istio's util.RawBufferTransport names it (inside wrapping sockets). */
export const INNER_RAW_BUFFER_SOCKET = transportSocketMessage("raw_buffer", RAW_BUFFER_CONFIG);

/** Auto mTLS's match of Istio endpoints, the same (never changed) struct for every cluster. */
const TLS_MODE_ISTIO = preEncoded("google.protobuf.Struct", { tlsMode: "istio" });

/** Auto mTLS's plaintext match, the same message for every cluster. */
const TLS_MODE_DISABLED = preEncoded(
  cluster.Cluster_TransportSocketMatchSchema,
  transportSocketMatchMessage("tlsMode-disabled", {}, RAW_BUFFER_SOCKET),
);
