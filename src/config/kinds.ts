// The registry of every kind Sluice knows: Istio's CRDs, the Gateway API kinds, and the Kubernetes
// built-ins the mesh reads. Versions and short names follow Istio's metadata.yaml and crd-all.gen.yaml.

export interface KindInfo {
  group: string;
  kind: string;
  /** The version Sluice stores and prefers; always in `versions`. */
  preferredVersion: string;
  /** Every served version (including aliases Istio accepts as the same schema). */
  versions: readonly string[];
  plural: string;
  shortNames: readonly string[];
  namespaced: boolean;
  /** Which family the kind belongs to; decides which validators apply. */
  family: "istio" | "gateway-api" | "kubernetes";
  /** False for kinds Sluice recognises but does not act on (UDPRoute). */
  supported: boolean;
  /** The istiod environment flag (off by default) without which istiod neither reads nor writes the kind. */
  feature?: KindFeature;
  /** False when Sluice carries no schema for the kind (its CRD is not among those it is generated from). */
  hasSchema: boolean;
}

/** The istiod flags that gate kinds: the experimental Gateway API kinds, and the inference extension. */
export type KindFeature = "PILOT_ENABLE_ALPHA_GATEWAY_API" | "ENABLE_GATEWAY_API_INFERENCE_EXTENSION";

/** A kind of the registry, or one a controller or analyzer reads beside it (no short names then). */
export function makeKind(
  family: KindInfo["family"],
  group: string,
  kindName: string,
  versions: string[],
  opts: {
    plural?: string;
    short?: string[];
    clusterScoped?: boolean;
    unsupported?: boolean;
    feature?: KindFeature;
    noSchema?: boolean;
  } = {},
): KindInfo {
  return {
    family,
    group,
    kind: kindName,
    preferredVersion: versions[0],
    versions,
    plural: opts.plural ?? `${kindName.toLowerCase()}s`,
    shortNames: opts.short ?? [],
    namespaced: !opts.clusterScoped,
    supported: !opts.unsupported,
    ...(opts.feature && { feature: opts.feature }),
    hasSchema: family !== "kubernetes" && !opts.noSchema,
  };
}

const NET = "networking.istio.io";
const SEC = "security.istio.io";
const GW = "gateway.networking.k8s.io";
const ISTIO_NET_VERSIONS = ["v1", "v1alpha3", "v1beta1"];
const GW_VERSIONS = ["v1", "v1beta1", "v1alpha2"];
const GWX = "gateway.networking.x-k8s.io";
const ALPHA = "PILOT_ENABLE_ALPHA_GATEWAY_API";

export const KINDS: readonly KindInfo[] = [
  makeKind("istio", NET, "VirtualService", ISTIO_NET_VERSIONS, { short: ["vs"] }),
  makeKind("istio", NET, "DestinationRule", ISTIO_NET_VERSIONS, { short: ["dr"] }),
  makeKind("istio", NET, "Gateway", ISTIO_NET_VERSIONS, { short: ["gw"] }),
  makeKind("istio", NET, "ServiceEntry", ISTIO_NET_VERSIONS, { plural: "serviceentries", short: ["se"] }),
  makeKind("istio", NET, "Sidecar", ISTIO_NET_VERSIONS),
  makeKind("istio", NET, "WorkloadEntry", ISTIO_NET_VERSIONS, { plural: "workloadentries", short: ["we"] }),
  makeKind("istio", NET, "WorkloadGroup", ISTIO_NET_VERSIONS, { short: ["wg"] }),
  makeKind("istio", NET, "EnvoyFilter", ["v1alpha3"]),
  makeKind("istio", NET, "ProxyConfig", ["v1beta1"]),
  makeKind("istio", SEC, "AuthorizationPolicy", ["v1", "v1beta1"], { plural: "authorizationpolicies", short: ["ap"] }),
  makeKind("istio", SEC, "PeerAuthentication", ["v1", "v1beta1"], { short: ["pa"] }),
  makeKind("istio", SEC, "RequestAuthentication", ["v1", "v1beta1"], { short: ["ra"] }),
  makeKind("istio", "telemetry.istio.io", "Telemetry", ["v1", "v1alpha1"], {
    plural: "telemetries",
    short: ["telemetry"],
  }),
  makeKind("istio", "extensions.istio.io", "WasmPlugin", ["v1alpha1"]),
  makeKind("istio", "extensions.istio.io", "TrafficExtension", ["v1alpha1"]),

  makeKind("gateway-api", GW, "GatewayClass", GW_VERSIONS, {
    plural: "gatewayclasses",
    short: ["gc"],
    clusterScoped: true,
  }),
  makeKind("gateway-api", GW, "Gateway", GW_VERSIONS, { short: ["gtw"] }),
  makeKind("gateway-api", GW, "HTTPRoute", GW_VERSIONS),
  makeKind("gateway-api", GW, "GRPCRoute", ["v1", "v1alpha2"]),
  makeKind("gateway-api", GW, "TCPRoute", ["v1", "v1alpha2"]),
  makeKind("gateway-api", GW, "TLSRoute", ["v1", "v1alpha2"]),
  makeKind("gateway-api", GW, "ReferenceGrant", ["v1beta1", "v1alpha2"], { short: ["refgrant"] }),
  makeKind("gateway-api", GW, "BackendTLSPolicy", ["v1"], { plural: "backendtlspolicies", short: ["btlspolicy"] }),
  makeKind("gateway-api", GW, "ListenerSet", ["v1"], { short: ["lset"] }),
  makeKind("gateway-api", GW, "UDPRoute", ["v1alpha2"], { unsupported: true }),
  makeKind("gateway-api", GWX, "XBackend", ["v1alpha1"], { short: ["xbackend"], feature: ALPHA }),
  makeKind("gateway-api", GWX, "XBackendTrafficPolicy", ["v1alpha1"], {
    plural: "xbackendtrafficpolicies",
    short: ["xbtrafficpolicy"],
    feature: ALPHA,
  }),
  // The inference extension's CRD is not among Istio's and the Gateway API's: no schema, the API server's only.
  makeKind("gateway-api", "inference.networking.k8s.io", "InferencePool", ["v1"], {
    short: ["infpool"],
    feature: "ENABLE_GATEWAY_API_INFERENCE_EXTENSION",
    noSchema: true,
  }),

  makeKind("kubernetes", "", "Namespace", ["v1"], { short: ["ns"], clusterScoped: true }),
  makeKind("kubernetes", "", "Service", ["v1"], { short: ["svc"] }),
  makeKind("kubernetes", "", "Endpoints", ["v1"], { plural: "endpoints", short: ["ep"] }),
  makeKind("kubernetes", "discovery.k8s.io", "EndpointSlice", ["v1"]),
  makeKind("kubernetes", "", "Pod", ["v1"], { short: ["po"] }),
  makeKind("kubernetes", "", "Node", ["v1"], { short: ["no"], clusterScoped: true }),
  makeKind("kubernetes", "", "Secret", ["v1"]),
  makeKind("kubernetes", "", "ConfigMap", ["v1"], { short: ["cm"] }),
  makeKind("kubernetes", "", "ServiceAccount", ["v1"], { short: ["sa"] }),
  makeKind("kubernetes", "networking.k8s.io", "Ingress", ["v1"], { plural: "ingresses", short: ["ing"] }),
  makeKind("kubernetes", "networking.k8s.io", "IngressClass", ["v1"], {
    plural: "ingressclasses",
    clusterScoped: true,
  }),
];

/** Whether istiod reads the kind with these flags (`flag(name)` answers an env flag, default off). */
export function kindEnabled(kind: KindInfo, flag: (name: KindFeature) => boolean): boolean {
  return kind.feature === undefined || flag(kind.feature);
}

/**
 * "group/Kind" (group empty for the core API): the identity of a kind regardless of version. Typed as the
 * literal it makes, so `store.collection(kindKey(group, kind))` is typed by the kind (KindObjects).
 */
export function kindKey<G extends string, K extends string>(group: G, kindName: K): `${G}/${K}` {
  return `${group}/${kindName}`;
}

const byKey = new Map(KINDS.map((k) => [kindKey(k.group, k.kind), k]));

/** Splits an apiVersion ("networking.istio.io/v1", "v1") into group and version. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf("/");
  return slash < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** The kind an object's apiVersion and kind name, if Sluice knows that kind at that version. */
export function lookupKind(apiVersion: string, kindName: string): KindInfo | undefined {
  const info = lookupKindAnyVersion(apiVersion, kindName);
  return info?.versions.includes(parseApiVersion(apiVersion).version) ? info : undefined;
}

/** The kind of an object's API group and kind name, whatever the version. */
export function lookupKindAnyVersion(apiVersion: string, kindName: string): KindInfo | undefined {
  return byKey.get(kindKey(parseApiVersion(apiVersion).group, kindName));
}

/** Finds a kind by what a user types on a command line: Kind, plural, short name, or "kind.group". */
export function resolveKindName(name: string): KindInfo[] {
  const lower = name.toLowerCase();
  const dot = lower.indexOf(".");
  const [bare, group] = dot < 0 ? [lower, undefined] : [lower.slice(0, dot), lower.slice(dot + 1)];
  return KINDS.filter(
    (k) =>
      (group === undefined || k.group === group) &&
      (k.kind.toLowerCase() === bare || k.plural === bare || k.shortNames.includes(bare)),
  );
}
