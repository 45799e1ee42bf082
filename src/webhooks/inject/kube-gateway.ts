// Istio's built-in `kube-gateway` template (istio-discovery files/kube-gateway.yaml) as a function: the
// ServiceAccount, Deployment, Service, HorizontalPodAutoscaler and PodDisruptionBudget that run a
// Gateway API Gateway of class `istio`. The autoscaler and the disruption budget are rendered but kept
// only when an overlay asks for them (the controller decides). The pieces both Gateway templates share
// (all but the Deployment) are here too, for waypoint.ts.

import { parse as parseYaml } from "yaml";
import type { MeshConfig, ProxyConfig } from "../../config/index.ts";
import { imageUrl } from "./inject.ts";
import { strategicMergeObject } from "./merge.ts";
import type { Container, EnvVar, JsonObject, Volume } from "./pod.ts";
import { PROXY_CONTAINER } from "./pod.ts";
import type { InjectionSettings } from "./settings.ts";
import {
  caCertVolumes,
  envVar,
  fieldRef,
  gatewayProxyMounts,
  identityEnv,
  imagePullSecrets,
  meshIdEnv,
  ownerEnv,
  PODINFO_VOLUME,
  PROXY_UID,
  podAnnotation,
  proxyConfigJson,
  proxyImage,
  proxyMetadataEnv,
  pullPolicy,
  resourceRef,
  tokenVolume,
} from "./templates.ts";

export const GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";
export const GATEWAY_CLASS_LABEL = "gateway.networking.k8s.io/gateway-class-name";
export const GATEWAY_MANAGED_LABEL = "gateway.istio.io/managed";
/** The managed label's value for the `istio` class's controller (istio.io/gateway-controller). */
const GATEWAY_MANAGED_VALUE = "istio.io-gateway-controller";
const NETWORK_LABEL = "topology.istio.io/network";
const OPENSHIFT_UID_RANGE = "openshift.io/sa.scc.uid-range";
const OPENSHIFT_SUPPLEMENTAL_GROUPS = "openshift.io/sa.scc.supplemental-groups";
/** Annotations of the Gateway that are its controller's settings, not the deployment's. */
const NOT_COPIED_ANNOTATIONS = [
  "kubectl.kubernetes.io/last-applied-configuration",
  "gateway.istio.io/name-override",
  "gateway.istio.io/service-account",
  "gateway.istio.io/controller-version",
];

export interface ServicePort {
  name: string;
  port: number;
  protocol: string;
  appProtocol: string;
}

/** Istio's TemplateInput and derivedInput: the Gateway and what the controller worked out for it. */
export interface GatewayTemplateInput {
  gateway: {
    metadata: { name: string; namespace: string; uid: string; annotations?: Record<string, string> };
    spec?: { addresses?: { type?: string; value: string }[] };
  };
  gatewayClass: string;
  /** The class's controller with "/" made "-" (istio.io-mesh-controller), labelling what it manages. */
  controllerLabel: string;
  deploymentName: string;
  serviceAccount: string;
  ports: ServicePort[];
  serviceType: string;
  /** The control plane's CLUSTER_ID. */
  clusterId: string;
  /** The API server's version as major and minor digits (1.35 → 135). */
  kubeVersion: number;
  revision: string;
  /** The Gateway's namespace's: OpenShift's preallocated ids choose the proxy's user and group. */
  namespaceAnnotations: Record<string, string>;
  infrastructureLabels: Record<string, string>;
  infrastructureAnnotations: Record<string, string>;
  proxyConfig: ProxyConfig;
  mesh: MeshConfig;
  settings: InjectionSettings;
}

const isEmpty = (value: Record<string, unknown>) => Object.keys(value).length === 0;

function copiedAnnotations(input: GatewayTemplateInput): Record<string, string> {
  const out = { ...input.infrastructureAnnotations };
  for (const key of NOT_COPIED_ANNOTATIONS) delete out[key];
  return out;
}

export function metadata(
  input: GatewayTemplateInput,
  name: string,
  extraLabels: Record<string, string> = {},
): JsonObject {
  const { gateway } = input;
  return {
    name,
    namespace: gateway.metadata.namespace,
    annotations: copiedAnnotations(input),
    labels: {
      ...input.infrastructureLabels,
      [GATEWAY_NAME_LABEL]: gateway.metadata.name,
      [GATEWAY_CLASS_LABEL]: input.gatewayClass,
      ...extraLabels,
    },
    ownerReferences: [
      {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "Gateway",
        name: gateway.metadata.name,
        uid: gateway.metadata.uid,
      },
    ],
  };
}

function serviceAccount(input: GatewayTemplateInput): JsonObject {
  const meta = metadata(input, input.serviceAccount);
  // Owned by the Gateway only from Kubernetes 1.28, which keeps a ServiceAccount's token valid then.
  if (input.kubeVersion < 128) delete meta.ownerReferences;
  return { apiVersion: "v1", kind: "ServiceAccount", metadata: meta };
}

function podSecurityContext(settings: InjectionSettings): JsonObject {
  if (!isEmpty(settings.gatewaySecurityContext)) return structuredClone(settings.gatewaySecurityContext) as JsonObject;
  return {
    sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: "0" }],
    ...(isEmpty(settings.gatewaySeccompProfile)
      ? {}
      : { seccompProfile: structuredClone(settings.gatewaySeccompProfile) as JsonObject }),
  };
}

/** The proxy's log level arguments: the Gateway's annotations, else the values'. */
export function logLevelArgs(input: GatewayTemplateInput): string[] {
  const { settings, gateway } = input;
  return [
    "--proxyLogLevel",
    podAnnotation(gateway, "sidecar.istio.io/logLevel", settings.logLevel),
    "--proxyComponentLogLevel",
    podAnnotation(gateway, "sidecar.istio.io/componentLogLevel", settings.componentLogLevel),
    "--log_output_level",
    podAnnotation(gateway, "sidecar.istio.io/agentLogLevel", settings.agentLogLevel),
  ];
}

function proxyArgs(input: GatewayTemplateInput): string[] {
  const { settings } = input;
  const args = [
    "proxy",
    "router",
    "--domain",
    `$(POD_NAMESPACE).svc.${settings.clusterDomain}`,
    ...logLevelArgs(input),
  ];
  if (settings.stsPort) args.push(`--stsPort=${settings.stsPort}`);
  if (settings.logAsJson) args.push("--log_as_json");
  return args;
}

function proxyEnv(input: GatewayTemplateInput): EnvVar[] {
  const { settings, proxyConfig } = input;
  const network = input.infrastructureLabels[NETWORK_LABEL] || settings.network;
  const requestedNetwork = input.infrastructureLabels[NETWORK_LABEL];
  return [
    ...identityEnv(settings),
    resourceRef("ISTIO_CPU_LIMIT", "limits.cpu"),
    { name: "PROXY_CONFIG", value: `${proxyConfigJson(proxyConfig)}\n` },
    { name: "ISTIO_META_POD_PORTS", value: "[]" },
    // Written out empty, as the template does (the API server then drops it).
    { name: "ISTIO_META_APP_CONTAINERS", value: "" },
    resourceRef("GOMEMLIMIT", "limits.memory"),
    resourceRef("GOMAXPROCS", "limits.cpu"),
    { name: "ISTIO_META_CLUSTER_ID", value: settings.clusterName || input.clusterId },
    fieldRef("ISTIO_META_NODE_NAME", "spec.nodeName"),
    { name: "ISTIO_META_INTERCEPTION_MODE", value: proxyConfig.interceptionMode ?? "REDIRECT" },
    ...(network ? [{ name: "ISTIO_META_NETWORK", value: network }] : []),
    ...deploymentOwnerEnv(input),
    ...meshIdEnv(input),
    ...proxyMetadataEnv(proxyConfig),
    ...(requestedNetwork ? [envVar("ISTIO_META_REQUESTED_NETWORK_VIEW", requestedNetwork)] : []),
  ];
}

/** ISTIO_META_WORKLOAD_NAME and ISTIO_META_OWNER: the Deployment the template makes. */
export function deploymentOwnerEnv(input: GatewayTemplateInput): EnvVar[] {
  const owner = {
    typeMeta: { apiVersion: "apps/v1", kind: "Deployment" },
    deploy: { name: input.deploymentName, namespace: input.gateway.metadata.namespace },
  };
  return ownerEnv(owner, input.deploymentName);
}

/** Istio's inject.ProxyImage: the values' image, with the proxy config's image type; a Gateway's annotation may name another. */
export function gatewayProxyImage(input: GatewayTemplateInput): string {
  const { settings } = input;
  const values = imageUrl(
    settings,
    settings.proxyImage,
    String(input.proxyConfig.image?.imageType ?? ""),
    input.gateway,
  );
  return proxyImage({ pod: input.gateway, settings, proxyImage: values });
}

/** The proxy container's ports, in both templates. */
export const gatewayProxyPorts = (): JsonObject[] => [
  { containerPort: 15020, name: "metrics", protocol: "TCP" },
  { containerPort: 15021, name: "status-port", protocol: "TCP" },
  { containerPort: 15090, protocol: "TCP", name: "http-envoy-prom" },
];

export const readyProbe = (failureThreshold: number, initialDelaySeconds: number, periodSeconds: number) => ({
  failureThreshold,
  httpGet: { path: "/healthz/ready", port: 15021, scheme: "HTTP" },
  initialDelaySeconds,
  periodSeconds,
  successThreshold: 1,
  timeoutSeconds: 1,
});

function proxyContainer(input: GatewayTemplateInput): Container {
  const { settings } = input;
  const ids = proxyIds(input.namespaceAnnotations);
  const resources = settings.resources;
  return {
    name: PROXY_CONTAINER,
    image: gatewayProxyImage(input),
    ...(isEmpty(resources as Record<string, unknown>) ? {} : { resources: structuredClone(resources) }),
    ...pullPolicy(input),
    securityContext: {
      capabilities: { drop: ["ALL"] },
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsUser: ids.uid,
      runAsGroup: ids.gid,
      runAsNonRoot: true,
    },
    ports: gatewayProxyPorts() as Container["ports"],
    args: proxyArgs(input),
    ...(isEmpty(settings.proxyLifecycle) ? {} : { lifecycle: structuredClone(settings.proxyLifecycle) }),
    env: proxyEnv(input),
    startupProbe: readyProbe(30, 1, 1),
    readinessProbe: readyProbe(4, 0, 15),
    volumeMounts: gatewayProxyMounts(settings),
  };
}

function deployment(input: GatewayTemplateInput): JsonObject {
  const volumes: Volume[] = [
    // The template's `emptyDir:` with nothing after it; the API server defaults it to {}.
    { emptyDir: null, name: "workload-socket" },
    { emptyDir: {}, name: "credential-socket" },
    { emptyDir: {}, name: "workload-certs" },
    { emptyDir: { medium: "Memory" }, name: "istio-envoy" },
    { name: "istio-data", emptyDir: {} },
    PODINFO_VOLUME,
    tokenVolume(input),
    ...caCertVolumes(input, false),
  ];
  return gatewayDeployment(
    input,
    GATEWAY_MANAGED_VALUE,
    {},
    {
      securityContext: podSecurityContext(input.settings),
      serviceAccountName: input.serviceAccount,
      containers: [proxyContainer(input)],
      volumes,
      ...imagePullSecrets(input),
    },
  );
}

/**
 * A Gateway template's Deployment of `podSpec`, labelled and annotated as both templates do:
 * `managedBy` is its gateway.istio.io/managed label, `podLabels` come first (the Gateway's override them).
 */
export function gatewayDeployment(
  input: GatewayTemplateInput,
  managedBy: string,
  podLabels: Record<string, string>,
  podSpec: JsonObject,
): JsonObject {
  const name = input.gateway.metadata.name;
  const managed = { [GATEWAY_MANAGED_LABEL]: managedBy };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: metadata(input, input.deploymentName, managed),
    spec: {
      selector: { matchLabels: { [GATEWAY_NAME_LABEL]: name } },
      template: {
        metadata: {
          annotations: {
            ...copiedAnnotations(input),
            "istio.io/rev": input.revision || "default",
            "prometheus.io/path": "/stats/prometheus",
            "prometheus.io/port": "15020",
            "prometheus.io/scrape": "true",
          },
          labels: {
            "sidecar.istio.io/inject": "false",
            ...podLabels,
            "service.istio.io/canonical-name": input.deploymentName,
            "service.istio.io/canonical-revision": "latest",
            ...input.infrastructureLabels,
            [GATEWAY_NAME_LABEL]: name,
            [GATEWAY_CLASS_LABEL]: input.gatewayClass,
            ...managed,
          },
        },
        spec: podSpec,
      },
    },
  };
}

function service(input: GatewayTemplateInput, annotations: Record<string, string>): JsonObject {
  const { gateway } = input;
  const meta = metadata(input, input.deploymentName);
  const addresses = gateway.spec?.addresses ?? [];
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { ...meta, annotations: { ...annotations, ...(meta.annotations as Record<string, string>) } },
    spec: {
      ipFamilyPolicy: "PreferDualStack",
      ports: input.ports.map((p) => ({ ...p })),
      selector: { [GATEWAY_NAME_LABEL]: gateway.metadata.name },
      ...(addresses.length > 0 && input.serviceType === "LoadBalancer" ? { loadBalancerIP: addresses[0].value } : {}),
      type: input.serviceType,
    },
  };
}

function autoscaler(input: GatewayTemplateInput): JsonObject {
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: metadata(input, input.deploymentName),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: input.deploymentName },
      maxReplicas: 1,
    },
  };
}

function disruptionBudget(input: GatewayTemplateInput): JsonObject {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: metadata(input, input.deploymentName),
    spec: { selector: { matchLabels: { [GATEWAY_NAME_LABEL]: input.gateway.metadata.name } } },
  };
}

/** The overlay key of each kind the template makes, and whether the kind is made only when overlaid. */
const OVERLAYS: Readonly<Record<string, { overlay: string; required: boolean }>> = {
  ServiceAccount: { overlay: "serviceAccount", required: false },
  Deployment: { overlay: "deployment", required: false },
  Service: { overlay: "service", required: false },
  HorizontalPodAutoscaler: { overlay: "horizontalPodAutoscaler", required: true },
  PodDisruptionBudget: { overlay: "podDisruptionBudget", required: true },
};
const OVERLAY_KEYS = new Set(Object.values(OVERLAYS).map((k) => k.overlay));

/**
 * The template's objects, in its order, each with the overlays (ConfigMap data: overlay key → YAML,
 * the class defaults' then the Gateway's parameters') laid over; throws when an overlay is not one or
 * changes an object's identity.
 */
export function kubeGatewayObjects(
  input: GatewayTemplateInput,
  overlays: readonly Record<string, string>[] = [],
): JsonObject[] {
  return gatewayTemplateObjects(input, deployment(input), {}, overlays);
}

/**
 * A Gateway template's objects around its `deployment`, the Service with `serviceAnnotations` (the
 * Gateway's win), each with the overlays laid over, those made only when overlaid left out.
 */
export function gatewayTemplateObjects(
  input: GatewayTemplateInput,
  deployment: JsonObject,
  serviceAnnotations: Record<string, string>,
  overlays: readonly Record<string, string>[],
): JsonObject[] {
  const objects = [
    serviceAccount(input),
    deployment,
    service(input, serviceAnnotations),
    autoscaler(input),
    disruptionBudget(input),
  ];
  return objects.flatMap((object) => {
    const overlaid = applyOverlays(object, overlays);
    return overlaid ? [overlaid] : [];
  });
}

/**
 * `object` with every overlay that names its kind laid over it (strategic merge), in order; undefined
 * for a kind that is made only when an overlay asks (autoscaler, disruption budget) and none does.
 * An overlay may not change the object's identity.
 */
function applyOverlays(object: JsonObject, overlays: readonly Record<string, string>[]): JsonObject | undefined {
  const made = OVERLAYS[String(object.kind)];
  let out = object;
  let applied = false;
  for (const overlay of overlays) {
    for (const key of Object.keys(overlay)) {
      if (!OVERLAY_KEYS.has(key)) {
        throw new Error(`unsupported overlay "${key}" (supported: [${[...OVERLAY_KEYS].sort().join(" ")}])`);
      }
    }
    const text = overlay[made.overlay];
    if (text === undefined) continue;
    const patch: unknown = parseYaml(text);
    if (patch !== null && (typeof patch !== "object" || Array.isArray(patch))) {
      throw new Error(`overlay "${made.overlay}" is not a map`);
    }
    out = strategicMergeObject(out, (patch ?? {}) as JsonObject);
    applied = true;
  }
  if (!applied && made.required) return undefined;
  const identity = (o: JsonObject) => {
    const meta = (o.metadata ?? {}) as Record<string, unknown>;
    return JSON.stringify(
      ["name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp"]
        .map((k) => meta[k])
        .concat([meta.deletionTimestamp, meta.deletionGracePeriodSeconds, meta.ownerReferences, meta.finalizers]),
    );
  };
  const managedFields = (o: JsonObject) => ((o.metadata ?? {}) as Record<string, unknown>).managedFields;
  if (identity(object) !== identity(out) || managedFields(out) !== undefined)
    throw new Error("illegal metadata change");
  return out;
}

/** An OpenShift "start/size" or "start-end" block's last id. */
function blockEnd(block: string): number | undefined {
  const slash = /^(\d+)\/(\d+)$/.exec(block.trim());
  if (slash) return Number(slash[1]) + Number(slash[2]) - 1;
  const dash = /^(\d+)-(\d+)$/.exec(block.trim());
  return dash ? Number(dash[2]) : undefined;
}

/** Istio's GetProxyIDs: 1337, or on OpenShift the top of the namespace's preallocated ranges. */
function proxyIds(annotations: Record<string, string>): { uid: number; gid: number } {
  const uidRange = annotations[OPENSHIFT_UID_RANGE];
  const groups = annotations[OPENSHIFT_SUPPLEMENTAL_GROUPS] ?? uidRange;
  const uid = uidRange ? blockEnd(uidRange) : undefined;
  const gid = groups ? blockEnd(groups.split(",")[0]) : undefined;
  return { uid: uid ?? PROXY_UID, gid: gid ?? PROXY_UID };
}
