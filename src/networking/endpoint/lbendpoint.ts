// One Envoy LbEndpoint per Istio endpoint (Istio's buildEnvoyLbEndpoint and util.AppendLbEndpointMetadata):
// address, health, weight, and the metadata the client sidecar reads: `envoy.transport_socket_match`
// selects the mTLS socket of auto-mTLS clusters, `istio.workload` names the workload for telemetry.
// The messages are written as literals rather than through protobuf-es `create()`, which walks every
// member of the schema and converts the init object on each call (most of an endpoint's build time);
// the message types make the compiler insist on every field `create()` would set.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { core, endpoint, preEncoded } from "../../api/index.ts";
import type { Labels } from "../../krt/index.ts";
import type { HealthStatus, ServiceEndpoint } from "../../registry/index.ts";
import { type Memos, weakTable } from "../../util/index.ts";

export const TRANSPORT_SOCKET_MATCH_KEY = "envoy.transport_socket_match";
export const ISTIO_METADATA_KEY = "istio";

// Read once: each `core.` access goes through the API's module namespace getters.
const ENVOY_HEALTH = core.HealthStatus;
const TCP = core.SocketAddress_Protocol.TCP;

export function envoyHealth(health: HealthStatus): core.HealthStatus {
  switch (health) {
    case "Healthy":
      return ENVOY_HEALTH.HEALTHY;
    case "UnHealthy":
      return ENVOY_HEALTH.UNHEALTHY;
    case "Draining":
      return ENVOY_HEALTH.DRAINING;
    default:
      return ENVOY_HEALTH.UNKNOWN;
  }
}

/**
 * An Envoy address: a socket address, or a pipe for a unix socket (an address without port, as the
 * registry keeps unix endpoints, or one still written `unix://`), as Istio's util.BuildAddress.
 */
export function endpointAddress(address: string, port: number): core.Address {
  if (port === 0 || address.startsWith("unix://")) {
    const path = address.startsWith("unix://") ? address.slice(7) : address;
    const pipe: core.Pipe = { $typeName: "envoy.config.core.v3.Pipe", path, mode: 0 };
    return { $typeName: "envoy.config.core.v3.Address", address: { case: "pipe", value: pipe } };
  }
  const socketAddress: core.SocketAddress = {
    $typeName: "envoy.config.core.v3.SocketAddress",
    protocol: TCP,
    address,
    portSpecifier: { case: "portValue", value: port },
    resolverName: "",
    ipv4Compat: false,
  };
  return { $typeName: "envoy.config.core.v3.Address", address: { case: "socketAddress", value: socketAddress } };
}

// Each registry endpoint's LbEndpoints (one per variant: a cluster's DestinationRule or the workload's
// PeerAuthentication may turn its tlsMode off, and a waypoint reaches it over HBONE), kept for as long
// as the registry keeps the endpoint, as Istio kept IstioEndpoint's precomputed EnvoyEndpoint: a push
// rebuilding a load assignment builds only the endpoints that changed. Messages are never changed once
// built, and are pre-encoded: a load assignment copies each endpoint's bytes (encoding them was most of EDS).
type LbEndpointVariant = "mtls" | "plain" | "tunnelMtls" | "tunnelPlain";
const LB_ENDPOINTS = weakTable<ServiceEndpoint, Partial<Record<LbEndpointVariant, endpoint.LbEndpoint>>>(
  "endpoint/lbEndpoints",
);

/** The listener filter metadata an HBONE endpoint's original destination is kept under. */
export const ORIGINAL_DST_METADATA_KEY = "envoy.filters.listener.original_dst";
/** The internal listener (and cluster) that wraps a waypoint's upstream connections in HBONE. */
export const CONNECT_ORIGINATE = "connect_originate";

/**
 * The LbEndpoint of a registry endpoint, with `weight` (its own, scaled for multi-network meshes).
 * `tunnel`: a waypoint's inbound VIP cluster reaches it over HBONE, through the connect_originate
 * listener, its address kept as the original destination (Istio's buildEnvoyLbEndpoint with a tunnel).
 */
export function buildLbEndpoint(
  memos: Memos,
  ep: ServiceEndpoint,
  mtlsEnabled: boolean,
  weight: number,
  tunnel = false,
): endpoint.LbEndpoint {
  const lbEndpointsOf = memos.weak(LB_ENDPOINTS);
  let variants = lbEndpointsOf.get(ep);
  if (!variants) {
    variants = {};
    lbEndpointsOf.set(ep, variants);
  }
  const variant: LbEndpointVariant = tunnel
    ? mtlsEnabled
      ? "tunnelMtls"
      : "tunnelPlain"
    : mtlsEnabled
      ? "mtls"
      : "plain";
  let lb = variants[variant];
  if (lb?.loadBalancingWeight !== weight) {
    const workload = workloadTelemetry(ep.workloadName, ep.workloadNamespace || ep.namespace, ep.labels, ep.clusterId);
    const metadata = endpointMetadata(mtlsEnabled ? ep.tlsMode : "", workload);
    let address = endpointAddress(ep.address, ep.port);
    if (tunnel) {
      const target = hostPort(ep.address, ep.port);
      address = create(core.AddressSchema, {
        address: {
          case: "envoyInternalAddress",
          value: {
            addressNameSpecifier: { case: "serverListenerName", value: CONNECT_ORIGINATE },
            endpointId: target,
          },
        },
      });
      metadata.filterMetadata[ORIGINAL_DST_METADATA_KEY] = { local: target };
    }
    lb = preEncoded(endpoint.LbEndpointSchema, lbEndpoint(address, metadata, weight, envoyHealth(ep.health)));
    variants[variant] = lb;
  }
  return lb;
}

/** `ip:port`, an IPv6 address in brackets (Go's net.JoinHostPort). */
function hostPort(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}

/** An LbEndpoint at `address`; `health` is left UNKNOWN for gateways standing in for remote endpoints. */
export function lbEndpoint(
  address: core.Address,
  metadata: core.Metadata,
  weight: number,
  health = ENVOY_HEALTH.UNKNOWN,
): endpoint.LbEndpoint {
  const host: endpoint.Endpoint = {
    $typeName: "envoy.config.endpoint.v3.Endpoint",
    address,
    hostname: "",
    additionalAddresses: [],
  };
  return {
    $typeName: "envoy.config.endpoint.v3.LbEndpoint",
    hostIdentifier: { case: "endpoint", value: host },
    healthStatus: health,
    metadata,
    loadBalancingWeight: weight,
  };
}

export function endpointWeight(ep: ServiceEndpoint): number {
  return ep.weight > 0 ? ep.weight : 1;
}

/** The filter metadata of an endpoint: tlsMode (unless empty or `disabled`) and the compressed workload telemetry. */
export function endpointMetadata(tlsMode: string, workload: string): core.Metadata {
  const filterMetadata: Record<string, JsonObject> = {};
  if (tlsMode !== "" && tlsMode !== "disabled") filterMetadata[TRANSPORT_SOCKET_MATCH_KEY] = { tlsMode };
  filterMetadata[ISTIO_METADATA_KEY] = { workload };
  return { $typeName: "envoy.config.core.v3.Metadata", filterMetadata, typedFilterMetadata: {} };
}

/** Istio's `workload;namespace;canonical name;canonical revision;cluster` (a `latest` revision left empty). */
export function workloadTelemetry(workloadName: string, namespace: string, labels: Labels, clusterId: string): string {
  const { name, revision } = canonicalService(labels, workloadName);
  return `${workloadName};${namespace};${name};${revision === "latest" ? "" : revision};${clusterId}`;
}

/** Istio's kube labels.CanonicalService: the canonical name and revision of a workload, with its defaults. */
export function canonicalService(labels: Labels, workloadName: string): { name: string; revision: string } {
  const name =
    labels["service.istio.io/canonical-name"] || labels["app.kubernetes.io/name"] || labels.app || workloadName;
  const revision =
    labels["service.istio.io/canonical-revision"] || labels["app.kubernetes.io/version"] || labels.version || "latest";
  return { name, revision };
}
