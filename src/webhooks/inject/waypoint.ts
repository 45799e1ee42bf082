// Istio's built-in `waypoint` template (istio-discovery files/waypoint.yaml) as a function: the
// ServiceAccount, Deployment, Service, HorizontalPodAutoscaler and PodDisruptionBudget that run a
// waypoint (class `istio-waypoint`) or an ambient east-west gateway (class `istio-east-west`). All but
// the Deployment are kube-gateway's; the Service also asks for traffic close to the client.

import {
  deploymentOwnerEnv,
  type GatewayTemplateInput,
  gatewayDeployment,
  gatewayProxyImage,
  gatewayProxyPorts,
  gatewayTemplateObjects,
  logLevelArgs,
  readyProbe,
} from "./kube-gateway.ts";
import type { Container, EnvVar, JsonObject, Volume } from "./pod.ts";
import { PROXY_CONTAINER } from "./pod.ts";
import {
  envVar,
  fieldRef,
  identityEnv,
  imagePullSecrets,
  meshIdEnv,
  mount,
  PODINFO_VOLUME,
  PROXY_UID,
  proxyConfigJson,
  proxyMetadataEnv,
  pullPolicy,
  resourceRef,
} from "./templates.ts";

const NETWORK_LABEL = "topology.istio.io/network";
/** An east-west gateway's controller label: its proxy asks for its own network's view. */
const EASTWEST_CONTROLLER_LABEL = "istio.io-eastwest-controller";

const isEmpty = (value: object) => Object.keys(value).length === 0;

function proxyArgs(input: GatewayTemplateInput): string[] {
  const { settings } = input;
  const args = [
    "proxy",
    "waypoint",
    "--domain",
    `$(POD_NAMESPACE).svc.${settings.clusterDomain}`,
    "--serviceCluster",
    `${input.serviceAccount}.$(POD_NAMESPACE)`,
    ...logLevelArgs(input),
  ];
  if (settings.logAsJson) args.push("--log_as_json");
  if (settings.outlierLogPath) args.push(`--outlierLogPath=${settings.outlierLogPath}`);
  return args;
}

function proxyEnv(input: GatewayTemplateInput): EnvVar[] {
  const { settings, proxyConfig } = input;
  const network = input.infrastructureLabels[NETWORK_LABEL] || settings.network;
  return [
    fieldRef("ISTIO_META_SERVICE_ACCOUNT", "spec.serviceAccountName"),
    fieldRef("ISTIO_META_NODE_NAME", "spec.nodeName"),
    ...identityEnv(settings),
    resourceRef("ISTIO_CPU_LIMIT", "limits.cpu"),
    { name: "PROXY_CONFIG", value: `${proxyConfigJson(proxyConfig)}\n` },
    ...proxyMetadataEnv(proxyConfig),
    resourceRef("GOMEMLIMIT", "limits.memory"),
    resourceRef("GOMAXPROCS", "limits.cpu"),
    // The values' cluster name, else "Kubernetes": unlike kube-gateway, not the control plane's CLUSTER_ID.
    { name: "ISTIO_META_CLUSTER_ID", value: settings.clusterName || "Kubernetes" },
    ...(network ? [envVar("ISTIO_META_NETWORK", network)] : []),
    ...(network && input.controllerLabel === EASTWEST_CONTROLLER_LABEL
      ? [envVar("ISTIO_META_REQUESTED_NETWORK_VIEW", network)]
      : []),
    { name: "ISTIO_META_INTERCEPTION_MODE", value: "REDIRECT" },
    ...deploymentOwnerEnv(input),
    ...meshIdEnv(input),
  ];
}

function proxyContainer(input: GatewayTemplateInput): Container {
  const { settings } = input;
  const resources = settings.waypoint.resources;
  return {
    name: PROXY_CONTAINER,
    ports: gatewayProxyPorts() as Container["ports"],
    image: gatewayProxyImage(input),
    ...pullPolicy(input),
    args: proxyArgs(input),
    env: proxyEnv(input),
    ...(isEmpty(resources) ? {} : { resources: structuredClone(resources) }),
    startupProbe: readyProbe(30, 1, 1),
    readinessProbe: readyProbe(4, 0, 15),
    securityContext: {
      privileged: false,
      // On OpenShift the namespace's assigned ids apply (the kube-gateway template reads them instead).
      ...(settings.platform === "openshift" ? {} : { runAsGroup: PROXY_UID, runAsUser: PROXY_UID }),
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      ...(isEmpty(settings.gatewaySeccompProfile)
        ? {}
        : { seccompProfile: structuredClone(settings.gatewaySeccompProfile) }),
    },
    volumeMounts: [
      mount("workload-socket", "/var/run/secrets/workload-spiffe-uds"),
      mount("istiod-ca-cert", "/var/run/secrets/istio"),
      mount("istio-data", "/var/lib/istio/data"),
      mount("istio-envoy", "/etc/istio/proxy"),
      mount("istio-token", "/var/run/secrets/tokens"),
      mount("istio-podinfo", "/etc/istio/pod"),
    ] as Container["volumeMounts"],
  };
}

/** The values' waypoint scheduling, each only when set. */
function scheduling(input: GatewayTemplateInput): JsonObject {
  const { affinity, topologySpreadConstraints, nodeSelector, tolerations } = input.settings.waypoint;
  const out: JsonObject = {};
  if (!isEmpty(affinity)) out.affinity = structuredClone(affinity) as JsonObject;
  if (topologySpreadConstraints.length > 0) out.topologySpreadConstraints = structuredClone(topologySpreadConstraints);
  if (!isEmpty(nodeSelector)) out.nodeSelector = structuredClone(nodeSelector) as JsonObject;
  if (tolerations.length > 0) out.tolerations = structuredClone(tolerations);
  return out;
}

function deployment(input: GatewayTemplateInput): JsonObject {
  const volumes: Volume[] = [
    // The template's `emptyDir:` with nothing after it; the API server defaults it to {}.
    { emptyDir: null, name: "workload-socket" },
    { emptyDir: { medium: "Memory" }, name: "istio-envoy" },
    { emptyDir: { medium: "Memory" }, name: "go-proxy-envoy" },
    { emptyDir: {}, name: "istio-data" },
    { emptyDir: {}, name: "go-proxy-data" },
    PODINFO_VOLUME,
    {
      name: "istio-token",
      // Always the istio-ca audience here, whatever the values' global.sds.token.aud.
      projected: {
        sources: [{ serviceAccountToken: { audience: "istio-ca", expirationSeconds: 43200, path: "istio-token" } }],
      },
    },
    { name: "istiod-ca-cert", configMap: { name: "istio-ca-root-cert" } },
  ];
  // The proxy is the waypoint: the ambient data plane does not capture its traffic.
  return gatewayDeployment(
    input,
    input.controllerLabel,
    { "istio.io/dataplane-mode": "none" },
    {
      ...scheduling(input),
      serviceAccountName: input.serviceAccount,
      containers: [proxyContainer(input)],
      volumes,
      ...imagePullSecrets(input),
    },
  );
}

/** The template's objects, in its order, with the overlays laid over (see kubeGatewayObjects). */
export function waypointObjects(
  input: GatewayTemplateInput,
  overlays: readonly Record<string, string>[] = [],
): JsonObject[] {
  const serviceAnnotations = { "networking.istio.io/traffic-distribution": "PreferClose" };
  return gatewayTemplateObjects(input, deployment(input), serviceAnnotations, overlays);
}
