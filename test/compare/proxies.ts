// The proxies a comparison connects, and the node each presents: what istio-agent (pkg/bootstrap)
// sends for a sidecar, a router or a waypoint Envoy, and what its gRPC bootstrap
// (pkg/istio-agent/grpcxds) sends for a proxyless client. Both control planes see the same node id and
// metadata.
import type { JsonObject } from "@bufbuild/protobuf";

export type ProxyKind = "sidecar" | "router" | "proxyless" | "ztunnel" | "waypoint";

/** One entry of a scenario's `proxies.yaml`. */
export interface ProxySpec {
  /** The Pod's name; the node id is `<type>~<ip>~<name>.<namespace>~<namespace>.svc.cluster.local`. */
  name: string;
  kind: ProxyKind;
  namespace: string;
  ip: string;
  labels: Record<string, string>;
  serviceAccount: string;
  /** Pod annotations (also sent as the ANNOTATIONS metadata). */
  annotations?: Record<string, string>;
  /** More node metadata (e.g. DNS_CAPTURE), merged over what the agent sends. */
  metadata?: JsonObject;
  /** Proxyless: the `xds:///` targets the client dials (`host:port`), its LDS names. */
  targets?: string[];
}

/** The Istio version the proxies announce: the istiod peer's (test/peers/versions.json). */
export const PROXY_ISTIO_VERSION = "1.31.0";

/** The mesh's default ProxyConfig as the agent resolves and sends it (PROXY_CONFIG). */
const PROXY_CONFIG: JsonObject = {
  binaryPath: "/usr/local/bin/envoy",
  configPath: "./etc/istio/proxy",
  controlPlaneAuthPolicy: "MUTUAL_TLS",
  discoveryAddress: "istiod.istio-system.svc:15012",
  drainDuration: "45s",
  proxyAdminPort: 15000,
  serviceCluster: "istio-proxy",
  statNameLength: 189,
  statusPort: 15020,
  terminationDrainDuration: "5s",
};

export const nodeType = (p: ProxySpec) => (p.kind === "proxyless" ? "sidecar" : p.kind);
export const nodeId = (p: ProxySpec) =>
  `${nodeType(p)}~${p.ip}~${p.name}.${p.namespace}~${p.namespace}.svc.cluster.local`;

/** The workload name the agent reports: the Deployment's, i.e. the `app` label or the pod name. */
const workloadName = (p: ProxySpec) => p.labels.app ?? p.name;

/** The labels the waypoint template (kube-gateway's waypoint.yaml) gives its Pods, besides the Gateway's name. */
const WAYPOINT_LABELS = {
  "sidecar.istio.io/inject": "false",
  "istio.io/dataplane-mode": "none",
  "gateway.networking.k8s.io/gateway-class-name": "istio-waypoint",
  "gateway.istio.io/managed": "istio.io-mesh-controller",
};

/** The labels the agent reports: the Pod's plus those injection (or the waypoint template) adds. */
export function podLabels(p: ProxySpec): Record<string, string> {
  if (p.kind === "proxyless" || p.kind === "ztunnel") return p.labels;
  return {
    "service.istio.io/canonical-name": workloadName(p),
    "service.istio.io/canonical-revision": p.labels.version ?? "latest",
    ...(p.kind === "sidecar" ? { "security.istio.io/tlsMode": "istio" } : {}),
    ...(p.kind === "waypoint" ? WAYPOINT_LABELS : {}),
    ...p.labels,
  };
}

/** The Node message (as protobuf JSON init) the proxy's first request carries. */
export function proxyNode(p: ProxySpec): { id: string; cluster: string; metadata: JsonObject; locality: JsonObject } {
  const labels = podLabels(p);
  const common: JsonObject = {
    CLUSTER_ID: "Kubernetes",
    INSTANCE_IPS: p.ip,
    ISTIO_VERSION: PROXY_ISTIO_VERSION,
    LABELS: labels,
    NAMESPACE: p.namespace,
    NAME: p.name,
    SERVICE_ACCOUNT: p.serviceAccount,
    MESH_ID: "cluster.local",
    NODE_NAME: "node-0",
    WORKLOAD_NAME: workloadName(p),
    OWNER: `kubernetes://apis/apps/v1/namespaces/${p.namespace}/deployments/${workloadName(p)}`,
  };
  // ztunnel sends little of what istio-agent does: who it is, where, and its version.
  const ztunnel: JsonObject = {
    CLUSTER_ID: common.CLUSTER_ID,
    INSTANCE_IPS: common.INSTANCE_IPS,
    ISTIO_VERSION: common.ISTIO_VERSION,
    NAME: common.NAME,
    NAMESPACE: common.NAMESPACE,
    NODE_NAME: common.NODE_NAME,
    SERVICE_ACCOUNT: common.SERVICE_ACCOUNT,
  };
  const metadata: JsonObject =
    p.kind === "proxyless"
      ? { ...common, GENERATOR: "grpc" }
      : p.kind === "ztunnel"
        ? ztunnel
        : {
            ...common,
            ANNOTATIONS: p.annotations ?? {},
            ENVOY_PROMETHEUS_PORT: 15090,
            ENVOY_STATUS_PORT: 15021,
            PILOT_SAN: ["istiod.istio-system.svc"],
            POD_PORTS: "[]",
            PROXY_CONFIG,
            ...(p.kind === "sidecar" ? { APP_CONTAINERS: "app", INTERCEPTION_MODE: "REDIRECT" } : {}),
            // The waypoint template sets ISTIO_META_INTERCEPTION_MODE; its Pod has no app container.
            ...(p.kind === "waypoint" ? { INTERCEPTION_MODE: "REDIRECT" } : {}),
            ...(p.kind === "router" ? { UNPRIVILEGED_POD: "true" } : {}),
          };
  return {
    id: nodeId(p),
    cluster: `${workloadName(p)}.${p.namespace}`,
    metadata: { ...metadata, ...p.metadata },
    locality: {},
  };
}

/** The Pod (and its status, set by the harness for want of a kubelet) that backs a proxy. */
export function proxyPod(p: ProxySpec): { pod: JsonObject; status: JsonObject } {
  const containers: JsonObject[] = [{ name: "app", image: "app" }];
  if (p.kind === "ztunnel") containers.splice(0, 1, { name: "istio-proxy", image: "ztunnel" });
  else if (p.kind === "waypoint") containers.splice(0, 1, { name: "istio-proxy", image: "proxyv2" });
  else if (p.kind !== "proxyless") containers.push({ name: "istio-proxy", image: "proxyv2" });
  return {
    pod: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: p.name,
        namespace: p.namespace,
        labels: podLabels(p),
        annotations: p.annotations ?? {},
      },
      spec: { serviceAccountName: p.serviceAccount, nodeName: "node-0", containers },
    },
    status: {
      phase: "Running",
      podIP: p.ip,
      podIPs: [{ ip: p.ip }],
      conditions: [{ type: "Ready", status: "True" }],
    },
  };
}
