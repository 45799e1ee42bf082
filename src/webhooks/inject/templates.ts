// Istio's built-in injection templates (istio-discovery files/injection-template.yaml,
// gateway-injection-template.yaml, grpc-agent.yaml, grpc-simple.yaml) as functions from the
// template inputs to the partial Pod that is strategically merged over the application's pod.
import { DEFAULT_MESH_CONFIG, type MeshConfig, type ProxyConfig } from "../../config/index.ts";
import type { Container, DeployMeta, EnvVar, JsonObject, Pod, TypeMeta, Volume } from "./pod.ts";
import { INIT_CONTAINER, PROXY_CONTAINER, VALIDATION_CONTAINER } from "./pod.ts";
import type { InjectionSettings, ResourceRequirements } from "./settings.ts";

/** Istio's SidecarTemplateData. */
export interface TemplateData {
  /** The pod being injected, without a previous injection. */
  pod: Pod;
  typeMeta: TypeMeta;
  deploy: DeployMeta;
  proxyConfig: ProxyConfig;
  mesh: MeshConfig;
  settings: InjectionSettings;
  nativeSidecar: boolean;
  proxyImage: string;
  proxyInitImage: string;
}

export type InjectionTemplate = (data: TemplateData) => JsonObject;

export const TEMPLATES: Readonly<Record<string, InjectionTemplate>> = {
  sidecar: sidecarTemplate,
  gateway: gatewayTemplate,
  "grpc-agent": grpcAgentTemplate,
  "grpc-simple": grpcSimpleTemplate,
};

export const PROXY_UID = 1337;
const ANNOTATION_STATUS_PORT = "status.sidecar.istio.io/port";
const ANNOTATION_INTERCEPTION = "sidecar.istio.io/interceptionMode";
const ANNOTATION_BOOTSTRAP_OVERRIDE = "sidecar.istio.io/bootstrapOverride";

/** What the templates' `annotation` function reads: a pod, or a Gateway for its deployment. */
type Annotated = { metadata: { annotations?: Record<string, string> } };

/** The template's `annotation` function: the object's annotation, else the default. */
export function podAnnotation(pod: Annotated, name: string, fallback: string | number | boolean): string {
  return pod.metadata.annotations?.[name] ?? String(fallback);
}

function hasAnnotation(pod: Pod, name: string): boolean {
  return pod.metadata.annotations?.[name] !== undefined;
}

function interceptionMode(data: TemplateData): string {
  return podAnnotation(data.pod, ANNOTATION_INTERCEPTION, data.proxyConfig.interceptionMode ?? "REDIRECT");
}

/** The template's `excludeInboundPort`: the status port added to the excluded inbound ports. */
function excludeInboundPort(statusPort: string, excluded: string): string {
  const port = statusPort.trim();
  if (port === "" || port === "0") return excluded;
  const ports = excluded.split(",");
  if (ports.includes(port)) return excluded;
  return [...ports.map((p) => p.trim()).filter((p) => p !== ""), port].join(",");
}

function appContainerNames(pod: Pod): string[] {
  return pod.spec.containers.map((c) => c.name).filter((name) => name !== PROXY_CONTAINER);
}

// ---- Pieces shared by the templates.

function canonicalLabels(data: TemplateData, trim: boolean): Record<string, string> {
  const labels = data.pod.metadata.labels ?? {};
  let name =
    labels["service.istio.io/canonical-name"] || labels["app.kubernetes.io/name"] || labels.app || data.deploy.name;
  // sprig's `trunc 63 | trimAll "-_."`
  if (trim) name = name.slice(0, 63).replace(/^[-_.]+|[-_.]+$/g, "");
  return {
    "service.istio.io/canonical-name": name,
    "service.istio.io/canonical-revision":
      labels["service.istio.io/canonical-revision"] ||
      labels["app.kubernetes.io/version"] ||
      labels.version ||
      "latest",
  };
}

function commonAnnotations(data: TemplateData): Record<string, string> {
  const out: Record<string, string> = { "istio.io/rev": data.settings.revision || "default" };
  const [first] = appContainerNames(data.pod);
  if (first !== undefined) {
    if (!hasAnnotation(data.pod, "kubectl.kubernetes.io/default-logs-container")) {
      out["kubectl.kubernetes.io/default-logs-container"] = first;
    }
    if (!hasAnnotation(data.pod, "kubectl.kubernetes.io/default-container")) {
      out["kubectl.kubernetes.io/default-container"] = first;
    }
  }
  return out;
}

export function proxyImage(data: { pod: Annotated } & Pick<TemplateData, "settings" | "proxyImage">): string {
  const requested = podAnnotation(data.pod, "sidecar.istio.io/proxyImage", data.settings.proxyImage);
  return requested.includes("/") ? requested : data.proxyImage;
}

function proxyArgs(data: TemplateData, kind: "sidecar" | "router"): string[] {
  const { pod, settings } = data;
  const args = [
    "proxy",
    kind,
    "--domain",
    `$(POD_NAMESPACE).svc.${settings.clusterDomain}`,
    `--proxyLogLevel=${podAnnotation(pod, "sidecar.istio.io/logLevel", settings.logLevel)}`,
    `--proxyComponentLogLevel=${podAnnotation(pod, "sidecar.istio.io/componentLogLevel", settings.componentLogLevel)}`,
    `--log_output_level=${podAnnotation(pod, "sidecar.istio.io/agentLogLevel", settings.agentLogLevel)}`,
  ];
  if (settings.logAsJson) args.push("--log_as_json");
  return args;
}

/** An env var; Kubernetes omits an empty value. */
export function envVar(name: string, value: string): EnvVar {
  return value === "" ? { name } : { name, value };
}

export function fieldRef(name: string, fieldPath: string): EnvVar {
  return { name, valueFrom: { fieldRef: { fieldPath } } };
}

export function resourceRef(name: string, resource: string): EnvVar {
  return { name, valueFrom: { resourceFieldRef: { resource, divisor: "1" } } };
}

function caAddress(settings: InjectionSettings): string {
  if (settings.caAddress) return settings.caAddress;
  const revision = settings.revision === "" ? "" : `-${settings.revision}`;
  return `istiod${revision}.${settings.istioNamespace}.svc:15012`;
}

/** PILOT_CERT_PROVIDER through HOST_IP, the same in every proxy template. */
export function identityEnv(settings: InjectionSettings): EnvVar[] {
  return [
    { name: "PILOT_CERT_PROVIDER", value: settings.pilotCertProvider },
    { name: "CA_ADDR", value: caAddress(settings) },
    fieldRef("POD_NAME", "metadata.name"),
    fieldRef("POD_NAMESPACE", "metadata.namespace"),
    fieldRef("INSTANCE_IP", "status.podIP"),
    fieldRef("SERVICE_ACCOUNT", "spec.serviceAccountName"),
    fieldRef("HOST_IP", "status.hostIP"),
  ];
}

/** The template's `protoToJSON .ProxyConfig`: the proxy config without the fields at Istio's defaults. */
export function proxyConfigJson(proxyConfig: ProxyConfig): string {
  const defaults: Readonly<Record<string, unknown>> = { ...DEFAULT_MESH_CONFIG.defaultConfig };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(proxyConfig)) {
    if (value === undefined || defaults[key] === value) continue;
    if (key === "proxyMetadata" && Object.keys(value as object).length === 0) continue;
    out[key] = value;
  }
  return JSON.stringify(out);
}

/** ISTIO_META_POD_PORTS: every container port as JSON, one per line, in Go's field order. */
function podPortsJson(pod: Pod): string {
  const ports = pod.spec.containers.flatMap((c) => c.ports ?? []);
  const lines = ports.map((p, i) => {
    const ordered = {
      name: p.name,
      hostPort: p.hostPort,
      containerPort: p.containerPort,
      protocol: p.protocol,
      hostIP: p.hostIP,
    };
    const json = JSON.stringify(ordered, (_key, v) => (v === "" || v === 0 ? undefined : v));
    return `\n    ${i > 0 ? "," : ""}${json}`;
  });
  return `[${lines.join("")}\n]`;
}

function trustDomain(data: Pick<TemplateData, "mesh" | "settings">): string {
  return data.mesh.trustDomain || data.settings.trustDomain;
}

/** From PROXY_CONFIG to ISTIO_META_CLUSTER_ID (the order varies a little between templates). */
function proxyConfigEnv(data: TemplateData): EnvVar[] {
  return [
    { name: "PROXY_CONFIG", value: `${proxyConfigJson(data.proxyConfig)}\n` },
    { name: "ISTIO_META_POD_PORTS", value: podPortsJson(data.pod) },
  ];
}

function clusterEnv(data: TemplateData): EnvVar[] {
  return [
    { name: "ISTIO_META_CLUSTER_ID", value: data.settings.clusterName || "Kubernetes" },
    fieldRef("ISTIO_META_NODE_NAME", "spec.nodeName"),
  ];
}

function networkEnv(data: TemplateData): EnvVar[] {
  return data.settings.network ? [{ name: "ISTIO_META_NETWORK", value: data.settings.network }] : [];
}

export function ownerEnv(data: Pick<TemplateData, "typeMeta" | "deploy">, workloadName: string): EnvVar[] {
  const out: EnvVar[] = [];
  if (workloadName) out.push({ name: "ISTIO_META_WORKLOAD_NAME", value: workloadName });
  const { apiVersion, kind } = data.typeMeta;
  if (apiVersion && data.deploy.name) {
    const namespace = data.deploy.namespace || "default";
    out.push({
      name: "ISTIO_META_OWNER",
      value: `kubernetes://apis/${apiVersion}/namespaces/${namespace}/${kind.toLowerCase()}s/${data.deploy.name}`,
    });
  }
  return out;
}

function bootstrapOverrideEnv(data: TemplateData): EnvVar[] {
  return hasAnnotation(data.pod, ANNOTATION_BOOTSTRAP_OVERRIDE)
    ? [{ name: "ISTIO_BOOTSTRAP_OVERRIDE", value: "/etc/istio/custom-bootstrap/custom_bootstrap.json" }]
    : [];
}

export function meshIdEnv(data: Pick<TemplateData, "mesh" | "settings">): EnvVar[] {
  const out: EnvVar[] = [];
  const domain = trustDomain(data);
  const meshId = data.settings.meshID || domain;
  if (meshId) out.push({ name: "ISTIO_META_MESH_ID", value: meshId });
  if (domain) out.push({ name: "TRUST_DOMAIN", value: domain });
  return out;
}

/** `range .ProxyConfig.ProxyMetadata`: Go ranges over a map in key order. */
export function proxyMetadataEnv(proxyConfig: ProxyConfig): EnvVar[] {
  const metadata = proxyConfig.proxyMetadata ?? {};
  return Object.keys(metadata)
    .sort()
    .map((name) => envVar(name, metadata[name]));
}

function localhostProbeEnv(data: TemplateData): EnvVar[] {
  return data.mesh.inboundTrafficPolicy?.mode === "LOCALHOST"
    ? [{ name: "REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION", value: "true" }]
    : [];
}

/** The template's "resources" block: the pod's proxyCPU/Memory annotations, else the values. */
function proxyResources(data: TemplateData): ResourceRequirements {
  const a = data.pod.metadata.annotations ?? {};
  const cpu = a["sidecar.istio.io/proxyCPU"];
  const memory = a["sidecar.istio.io/proxyMemory"];
  const cpuLimit = a["sidecar.istio.io/proxyCPULimit"];
  const memoryLimit = a["sidecar.istio.io/proxyMemoryLimit"];
  if (cpu === undefined && memory === undefined && cpuLimit === undefined && memoryLimit === undefined) {
    return structuredClone(data.settings.resources);
  }
  const out: ResourceRequirements = {};
  const pick = (values: Record<string, string | undefined>) =>
    Object.fromEntries(Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined));
  if (cpu !== undefined || memory !== undefined) out.requests = pick({ cpu, memory });
  if (cpuLimit !== undefined || memoryLimit !== undefined) out.limits = pick({ cpu: cpuLimit, memory: memoryLimit });
  return out;
}

function readinessProbe(data: TemplateData, port: number): JsonObject {
  const { pod, settings } = data;
  const initialDelay = Number(
    podAnnotation(pod, "readiness.status.sidecar.istio.io/initialDelaySeconds", settings.readinessInitialDelaySeconds),
  );
  return withoutZero({
    httpGet: { path: "/healthz/ready", port },
    initialDelaySeconds: initialDelay,
    periodSeconds: Number(
      podAnnotation(pod, "readiness.status.sidecar.istio.io/periodSeconds", settings.readinessPeriodSeconds),
    ),
    timeoutSeconds: 3,
    failureThreshold: Number(
      podAnnotation(pod, "readiness.status.sidecar.istio.io/failureThreshold", settings.readinessFailureThreshold),
    ),
  });
}

/** Kubernetes omits zero probe fields. */
function withoutZero(obj: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== 0));
}

function statusPortEnabled(data: TemplateData): boolean {
  return podAnnotation(data.pod, ANNOTATION_STATUS_PORT, data.settings.statusPort) !== "0";
}

export function mount(name: string, mountPath: string, readOnly?: boolean): JsonObject {
  return readOnly ? { name, mountPath, readOnly } : { name, mountPath };
}

/** A gateway proxy's mounts (both gateway templates'), `afterData` after the istio-data one. */
export function gatewayProxyMounts(
  settings: InjectionSettings,
  afterData: JsonObject[] = [],
): Container["volumeMounts"] {
  return [
    mount("workload-socket", "/var/run/secrets/workload-spiffe-uds"),
    mount("credential-socket", "/var/run/secrets/credential-uds"),
    mount("workload-certs", "/var/run/secrets/workload-spiffe-credentials"),
    ...(settings.pilotCertProvider === "istiod" ? [mount("istiod-ca-cert", "/var/run/secrets/istio")] : []),
    mount("istio-data", "/var/lib/istio/data"),
    ...afterData,
    mount("istio-envoy", "/etc/istio/proxy"),
    mount("istio-token", "/var/run/secrets/tokens"),
    mount("istio-podinfo", "/etc/istio/pod"),
  ] as Container["volumeMounts"];
}

function bootstrapOverrideMount(data: TemplateData): JsonObject[] {
  return hasAnnotation(data.pod, ANNOTATION_BOOTSTRAP_OVERRIDE)
    ? [mount("custom-bootstrap-volume", "/etc/istio/custom-bootstrap")]
    : [];
}

function bootstrapOverrideVolume(data: TemplateData): Volume[] {
  return hasAnnotation(data.pod, ANNOTATION_BOOTSTRAP_OVERRIDE)
    ? [
        {
          name: "custom-bootstrap-volume",
          configMap: { name: podAnnotation(data.pod, ANNOTATION_BOOTSTRAP_OVERRIDE, "") },
        },
      ]
    : [];
}

/** `sidecar.istio.io/userVolume` / `userVolumeMount`: JSON maps of name → volume (mount) fields. */
function userEntries(data: TemplateData, annotation: string): JsonObject[] {
  const text = data.pod.metadata.annotations?.[annotation];
  if (text === undefined) return [];
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return [];
  return Object.keys(parsed)
    .sort()
    .map((name) => ({ name, ...((parsed as Record<string, JsonObject>)[name] ?? {}) }));
}

export function caCertVolumes(data: Pick<TemplateData, "settings">, withCrl: boolean): Volume[] {
  if (data.settings.pilotCertProvider !== "istiod") return withCrl ? [crlVolume()] : [];
  const out: Volume[] = [{ name: "istiod-ca-cert", configMap: { name: "istio-ca-root-cert" } }];
  if (withCrl) out.push(crlVolume());
  return out;
}

function crlVolume(): Volume {
  return { name: "istio-ca-crl", configMap: { name: "istio-ca-crl", optional: true } };
}

export function tokenVolume(data: Pick<TemplateData, "settings">): Volume {
  return {
    name: "istio-token",
    projected: {
      sources: [
        {
          serviceAccountToken: { path: "istio-token", expirationSeconds: 43200, audience: data.settings.tokenAudience },
        },
      ],
    },
  };
}

export const PODINFO_VOLUME: Volume = {
  name: "istio-podinfo",
  downwardAPI: {
    items: [
      { path: "labels", fieldRef: { fieldPath: "metadata.labels" } },
      { path: "annotations", fieldRef: { fieldPath: "metadata.annotations" } },
    ],
  },
};

export function imagePullSecrets(data: Pick<TemplateData, "settings">): JsonObject {
  const secrets = data.settings.imagePullSecrets;
  return secrets.length > 0 ? { imagePullSecrets: secrets.map((name) => ({ name })) } : {};
}

export function pullPolicy(data: Pick<TemplateData, "settings">): JsonObject {
  return data.settings.imagePullPolicy ? { imagePullPolicy: data.settings.imagePullPolicy } : {};
}

// ---- sidecar

function sidecarTemplate(data: TemplateData): JsonObject {
  const { pod, settings, proxyConfig } = data;
  const mode = interceptionMode(data);
  const tproxy = mode === "TPROXY";
  const capNetBindService =
    podAnnotation(pod, "sidecar.istio.io/capNetBindService", settings.capNetBindService) === "true";
  const native =
    (pod.metadata.annotations?.["sidecar.istio.io/nativeSidecar"] || String(data.nativeSidecar)) !== "false";
  const hold =
    (proxyConfig.holdApplicationUntilProxyStarts === true || settings.holdApplicationUntilProxyStarts) && !native;
  const statusPort = podAnnotation(pod, ANNOTATION_STATUS_PORT, settings.statusPort);

  const labels: Record<string, string> = {
    "security.istio.io/tlsMode": pod.metadata.labels?.["security.istio.io/tlsMode"] || "istio",
  };
  if (proxyConfig.proxyMetadata?.ISTIO_META_ENABLE_HBONE === "true") {
    labels["networking.istio.io/tunnel"] = pod.metadata.labels?.["networking.istio.io/tunnel"] || "http";
  }
  Object.assign(labels, canonicalLabels(data, true));

  const initContainers: Container[] = [];
  if (mode !== "NONE") initContainers.push(initContainer(data, mode));

  const proxy: Container = {
    name: PROXY_CONTAINER,
    image: proxyImage(data),
    ...(native ? { restartPolicy: "Always" } : {}),
    ports: [{ containerPort: 15090, protocol: "TCP", name: "http-envoy-prom" }],
    args: proxyArgs(data, "sidecar"),
  };
  if (hold) proxy.lifecycle = { postStart: { exec: { command: ["pilot-agent", "wait"] } } };
  else if (native) {
    proxy.lifecycle = {
      preStop: { exec: { command: ["pilot-agent", "request", `--debug-port=${statusPort}`, "POST", "drain"] } },
    };
  }
  const podAnnotations = pod.metadata.annotations ?? {};
  proxy.env = [
    ...localhostProbeEnv(data),
    ...identityEnv(settings),
    resourceRef("ISTIO_CPU_LIMIT", "limits.cpu"),
    ...proxyConfigEnv(data),
    envVar("ISTIO_META_APP_CONTAINERS", appContainerNames(pod).join(",")),
    resourceRef("GOMEMLIMIT", "limits.memory"),
    ...clusterEnv(data),
    {
      name: "ISTIO_META_INTERCEPTION_MODE",
      value: podAnnotations[ANNOTATION_INTERCEPTION] || (proxyConfig.interceptionMode ?? "REDIRECT"),
    },
    ...networkEnv(data),
    ...ownerEnv(data, pod.metadata.labels?.["service.istio.io/workload-name"] || data.deploy.name),
    ...bootstrapOverrideEnv(data),
    ...meshIdEnv(data),
    ...proxyMetadataEnv(proxyConfig),
  ];
  Object.assign(proxy, pullPolicy(data));
  if (statusPortEnabled(data)) {
    if (settings.startupProbe.enabled) {
      proxy.startupProbe = {
        httpGet: { path: "/healthz/ready", port: 15021 },
        periodSeconds: 1,
        timeoutSeconds: 3,
        failureThreshold: settings.startupProbe.failureThreshold,
      };
    }
    proxy.readinessProbe = readinessProbe(data, 15021);
  }
  const elevated = tproxy || capNetBindService;
  const added = [...(tproxy ? ["NET_ADMIN"] : []), ...(capNetBindService ? ["NET_BIND_SERVICE"] : [])];
  // Tracing iptables needs the proxy privileged and root.
  proxy.securityContext =
    proxyConfig.proxyMetadata?.IPTABLES_TRACE_LOGGING === "true"
      ? {
          allowPrivilegeEscalation: true,
          capabilities: { add: ["NET_ADMIN"], drop: ["ALL"] },
          privileged: true,
          readOnlyRootFilesystem: true,
          runAsGroup: PROXY_UID,
          runAsNonRoot: false,
          runAsUser: 0,
        }
      : {
          allowPrivilegeEscalation: settings.privileged,
          capabilities: { ...(added.length > 0 ? { add: added } : {}), drop: ["ALL"] },
          privileged: settings.privileged,
          readOnlyRootFilesystem: true,
          ...(elevated
            ? { runAsNonRoot: false, runAsUser: 0, runAsGroup: PROXY_UID }
            : { runAsNonRoot: true, runAsUser: PROXY_UID, runAsGroup: PROXY_UID }),
        };
  proxy.resources = proxyResources(data);
  proxy.volumeMounts = [
    mount("workload-socket", "/var/run/secrets/workload-spiffe-uds"),
    mount("credential-socket", "/var/run/secrets/credential-uds"),
    mount("workload-certs", "/var/run/secrets/workload-spiffe-credentials"),
    ...(settings.pilotCertProvider === "istiod"
      ? [mount("istiod-ca-cert", "/var/run/secrets/istio"), mount("istio-ca-crl", "/var/run/secrets/istio/crl")]
      : []),
    mount("istio-data", "/var/lib/istio/data"),
    ...bootstrapOverrideMount(data),
    mount("istio-envoy", "/etc/istio/proxy"),
    mount("istio-token", "/var/run/secrets/tokens"),
    mount("istio-podinfo", "/etc/istio/pod"),
    ...userEntries(data, "sidecar.istio.io/userVolumeMount"),
  ] as Container["volumeMounts"];

  const spec: JsonObject = {
    initContainers: native ? [...initContainers, proxy] : initContainers,
    ...(native ? {} : { containers: [proxy] }),
    volumes: [
      { name: "workload-socket", emptyDir: {} },
      { name: "credential-socket", emptyDir: {} },
      { name: "workload-certs", emptyDir: {} },
      ...bootstrapOverrideVolume(data),
      { name: "istio-envoy", emptyDir: { medium: "Memory" } },
      { name: "istio-data", emptyDir: {} },
      PODINFO_VOLUME,
      tokenVolume(data),
      ...caCertVolumes(data, true),
      ...userEntries(data, "sidecar.istio.io/userVolume"),
    ],
    ...imagePullSecrets(data),
  };
  const annotations = { ...commonAnnotations(data), ...(settings.cni.enabled ? cniAnnotations(data, mode) : {}) };
  return { metadata: { labels, annotations }, spec };
}

function initContainer(data: TemplateData, mode: string): Container {
  const { pod, settings, mesh } = data;
  const a = (name: string, fallback: string | number) => podAnnotation(pod, name, fallback);
  const requested = a("sidecar.istio.io/proxyImage", settings.proxyInitImage);
  const excluded = excludeInboundPort(
    a(ANNOTATION_STATUS_PORT, settings.statusPort),
    a("traffic.sidecar.istio.io/excludeInboundPorts", settings.excludeInboundPorts),
  );
  const args = [
    "istio-iptables",
    "-p",
    String(mesh.proxyListenPort || 15001),
    "-z",
    String(mesh.proxyInboundListenPort || 15006),
    "-u",
    String(PROXY_UID),
    "-m",
    mode,
    "-i",
    a("traffic.sidecar.istio.io/includeOutboundIPRanges", settings.includeIPRanges),
    "-x",
    a("traffic.sidecar.istio.io/excludeOutboundIPRanges", settings.excludeIPRanges),
    "-b",
    a("traffic.sidecar.istio.io/includeInboundPorts", settings.includeInboundPorts),
    "-d",
    excluded ? `15090,15021,${excluded}` : "15090,15021",
  ];
  if (hasAnnotation(pod, "traffic.sidecar.istio.io/includeOutboundPorts") || settings.includeOutboundPorts !== "") {
    args.push("-q", a("traffic.sidecar.istio.io/includeOutboundPorts", settings.includeOutboundPorts));
  }
  if (hasAnnotation(pod, "traffic.sidecar.istio.io/excludeOutboundPorts") || settings.excludeOutboundPorts !== "") {
    args.push("-o", a("traffic.sidecar.istio.io/excludeOutboundPorts", settings.excludeOutboundPorts));
  }
  const reroute =
    pod.metadata.annotations?.["istio.io/reroute-virtual-interfaces"] ??
    pod.metadata.annotations?.["traffic.sidecar.istio.io/kubevirtInterfaces"];
  if (reroute !== undefined) args.push("-k", reroute);
  const excludeInterfaces = pod.metadata.annotations?.["traffic.sidecar.istio.io/excludeInterfaces"];
  if (excludeInterfaces !== undefined) args.push("-c", excludeInterfaces);
  args.push(`--log_output_level=${a("sidecar.istio.io/agentLogLevel", settings.agentLogLevel)}`);
  if (settings.logAsJson) args.push("--log_as_json");
  // With the CNI plugin the redirect is already in place: the init container only checks it.
  const cni = settings.cni.enabled;
  if (cni) args.push("--run-validation", "--skip-rule-apply");
  else if (settings.forceApplyIptables) args.push("--force-apply");
  if (settings.nativeNftables) args.push("--native-nftables");
  const env = proxyMetadataEnv(data.proxyConfig);
  return {
    name: cni ? VALIDATION_CONTAINER : INIT_CONTAINER,
    image: requested.includes("/") ? requested : data.proxyInitImage,
    args,
    ...pullPolicy(data),
    ...(env.length > 0 ? { env } : {}),
    resources: proxyResources(data),
    securityContext: {
      allowPrivilegeEscalation: settings.privileged,
      privileged: settings.privileged,
      capabilities: cni ? { drop: ["ALL"] } : { add: ["NET_ADMIN", "NET_RAW"], drop: ["ALL"] },
      ...(cni
        ? { readOnlyRootFilesystem: true, runAsGroup: PROXY_UID, runAsUser: PROXY_UID, runAsNonRoot: true }
        : { readOnlyRootFilesystem: false, runAsGroup: 0, runAsNonRoot: false, runAsUser: 0 }),
    },
  };
}

/** With the CNI plugin, the pod carries what the plugin needs to set up its redirect. */
function cniAnnotations(data: TemplateData, mode: string): Record<string, string> {
  const { pod, settings } = data;
  const a = (name: string, fallback: string | number) => podAnnotation(pod, name, fallback);
  const present = (name: string) => pod.metadata.annotations?.[name];
  const out: Record<string, string> = {};
  if (settings.cni.provider === "multus") {
    out["k8s.v1.cni.cncf.io/networks"] = appendMultusNetwork(
      present("k8s.v1.cni.cncf.io/networks") ?? "",
      "default/istio-cni",
    );
  }
  out[ANNOTATION_INTERCEPTION] = mode;
  const includeRanges = a("traffic.sidecar.istio.io/includeOutboundIPRanges", settings.includeIPRanges);
  if (includeRanges) out["traffic.sidecar.istio.io/includeOutboundIPRanges"] = includeRanges;
  const excludeRanges = a("traffic.sidecar.istio.io/excludeOutboundIPRanges", settings.excludeIPRanges);
  if (excludeRanges) out["traffic.sidecar.istio.io/excludeOutboundIPRanges"] = excludeRanges;
  out["traffic.sidecar.istio.io/includeInboundPorts"] = a(
    "traffic.sidecar.istio.io/includeInboundPorts",
    settings.includeInboundPorts,
  );
  out["traffic.sidecar.istio.io/excludeInboundPorts"] = excludeInboundPort(
    a(ANNOTATION_STATUS_PORT, settings.statusPort),
    a("traffic.sidecar.istio.io/excludeInboundPorts", settings.excludeInboundPorts),
  );
  for (const [name, value] of [
    ["traffic.sidecar.istio.io/includeOutboundPorts", settings.includeOutboundPorts],
    ["traffic.sidecar.istio.io/excludeOutboundPorts", settings.excludeOutboundPorts],
  ] as const) {
    if (present(name) !== undefined || value !== "") out[name] = a(name, value);
  }
  for (const name of [
    "traffic.sidecar.istio.io/kubevirtInterfaces",
    "istio.io/reroute-virtual-interfaces",
    "traffic.sidecar.istio.io/excludeInterfaces",
  ]) {
    const value = present(name);
    if (value) out[name] = value;
  }
  return out;
}

/** The template's appendMultusNetwork: `network` added to a Multus networks annotation (list or JSON). */
function appendMultusNetwork(existing: string, network: string): string {
  if (existing === "") return network;
  const close = existing.lastIndexOf("]");
  if (close >= 0) {
    let networks: { name?: string; namespace?: string }[];
    try {
      networks = JSON.parse(existing);
    } catch {
      return existing;
    }
    const slash = network.indexOf("/");
    const [namespace, name] = slash < 0 ? ["", network] : [network.slice(0, slash), network.slice(slash + 1)];
    if (networks.some((n) => n.name === name && (n.namespace ?? "") === namespace)) return existing;
    const entry = namespace === "" ? `, {"name": "${name}"}` : `, {"name": "${name}", "namespace": "${namespace}"}`;
    return existing.slice(0, close) + entry + existing.slice(close);
  }
  if (existing.split(",").some((n) => n.trim() === network)) return existing;
  return `${existing}, ${network}`;
}

// ---- gateway

function gatewayTemplate(data: TemplateData): JsonObject {
  const { pod, settings, proxyConfig } = data;
  const proxy: Container = {
    name: PROXY_CONTAINER,
    image: proxyImage(data),
    ports: [{ containerPort: 15090, protocol: "TCP", name: "http-envoy-prom" }],
    args: proxyArgs(data, "router"),
    securityContext: { runAsUser: PROXY_UID, runAsGroup: PROXY_UID },
    env: [
      ...identityEnv(settings),
      resourceRef("ISTIO_CPU_LIMIT", "limits.cpu"),
      ...proxyConfigEnv(data),
      resourceRef("GOMEMLIMIT", "limits.memory"),
      envVar("ISTIO_META_APP_CONTAINERS", appContainerNames(pod).join(",")),
      ...clusterEnv(data),
      { name: "ISTIO_META_INTERCEPTION_MODE", value: proxyConfig.interceptionMode ?? "REDIRECT" },
      ...networkEnv(data),
      ...ownerEnv(data, data.deploy.name),
      ...bootstrapOverrideEnv(data),
      ...meshIdEnv(data),
      ...proxyMetadataEnv(proxyConfig),
    ],
    ...pullPolicy(data),
    readinessProbe: withoutZero({
      httpGet: { path: "/healthz/ready", port: 15021 },
      initialDelaySeconds: settings.readinessInitialDelaySeconds,
      periodSeconds: settings.readinessPeriodSeconds,
      timeoutSeconds: 3,
      failureThreshold: settings.readinessFailureThreshold,
    }),
    volumeMounts: gatewayProxyMounts(settings, bootstrapOverrideMount(data)),
  };
  return {
    metadata: { labels: canonicalLabels(data, false), annotations: commonAnnotations(data) },
    spec: {
      securityContext: { sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: "0" }] },
      containers: [proxy],
      volumes: [
        { name: "workload-socket", emptyDir: {} },
        { name: "credential-socket", emptyDir: {} },
        { name: "workload-certs", emptyDir: {} },
        ...bootstrapOverrideVolume(data),
        { name: "istio-envoy", emptyDir: { medium: "Memory" } },
        { name: "istio-data", emptyDir: {} },
        PODINFO_VOLUME,
        tokenVolume(data),
        ...caCertVolumes(data, false),
      ],
      ...imagePullSecrets(data),
    },
  };
}

// ---- grpc-agent: the agent without Envoy, serving xDS to proxyless gRPC applications.

function grpcAgentTemplate(data: TemplateData): JsonObject {
  const { pod, settings, proxyConfig } = data;
  const proxy: Container = {
    name: PROXY_CONTAINER,
    image: proxyImage(data),
    ports: [{ containerPort: 15020, protocol: "TCP", name: "mesh-metrics" }],
    args: proxyArgs(data, "sidecar"),
    lifecycle: {
      postStart: { exec: { command: ["pilot-agent", "wait", "--url=http://localhost:15020/healthz/ready"] } },
    },
    env: [
      { name: "ISTIO_META_GENERATOR", value: "grpc" },
      { name: "OUTPUT_CERTS", value: "/var/lib/istio/data" },
      ...localhostProbeEnv(data),
      ...identityEnv(settings),
      ...proxyConfigEnv(data),
      envVar("ISTIO_META_APP_CONTAINERS", appContainerNames(pod).join(",")),
      ...clusterEnv(data),
      ...networkEnv(data),
      ...ownerEnv(data, data.deploy.name),
      ...meshIdEnv(data),
      ...proxyMetadataEnv(proxyConfig),
      // gRPC resolves xds:/// names itself: no DNS capture, no Envoy.
      { name: "ISTIO_META_DNS_CAPTURE", value: "false" },
      { name: "DISABLE_ENVOY", value: "true" },
    ],
    ...pullPolicy(data),
  };
  // The template puts the probe, resources and mounts under the status-port condition.
  if (statusPortEnabled(data)) {
    proxy.readinessProbe = readinessProbe(data, 15020);
    proxy.resources = proxyResources(data);
    proxy.volumeMounts = [
      mount("workload-socket", "/var/run/secrets/workload-spiffe-uds"),
      mount("workload-certs", "/var/run/secrets/workload-spiffe-credentials"),
      ...(settings.pilotCertProvider === "istiod" ? [mount("istiod-ca-cert", "/var/run/secrets/istio")] : []),
      mount("istio-data", "/var/lib/istio/data"),
      mount("istio-xds", "/etc/istio/proxy"),
      mount("istio-token", "/var/run/secrets/tokens"),
      mount("istio-podinfo", "/etc/istio/pod"),
      ...userEntries(data, "sidecar.istio.io/userVolumeMount"),
    ] as Container["volumeMounts"];
  }
  const apps: Container[] = appContainerNames(pod).map((name) => ({
    name,
    env: [
      { name: "GRPC_XDS_EXPERIMENTAL_SECURITY_SUPPORT", value: "true" },
      { name: "GRPC_XDS_BOOTSTRAP", value: "/etc/istio/proxy/grpc-bootstrap.json" },
    ],
    volumeMounts: [
      mount("istio-data", "/var/lib/istio/data"),
      mount("istio-xds", "/etc/istio/proxy"),
      mount("workload-certs", "/var/run/secrets/workload-spiffe-credentials"),
    ] as Container["volumeMounts"],
  }));
  return {
    metadata: {
      labels: canonicalLabels(data, false),
      annotations: { ...commonAnnotations(data), "sidecar.istio.io/rewriteAppHTTPProbers": "false" },
    },
    spec: {
      containers: [proxy, ...apps],
      volumes: [
        { name: "workload-socket", emptyDir: {} },
        { name: "workload-certs", emptyDir: {} },
        ...bootstrapOverrideVolume(data),
        { name: "istio-xds", emptyDir: { medium: "Memory" } },
        { name: "istio-data", emptyDir: {} },
        PODINFO_VOLUME,
        tokenVolume(data),
        ...caCertVolumes(data, false),
        ...userEntries(data, "sidecar.istio.io/userVolume"),
      ],
      ...imagePullSecrets(data),
    },
  };
}

// ---- grpc-simple: a bootstrap file written by an init container; no agent at all.

function grpcSimpleTemplate(data: TemplateData): JsonObject {
  const bootstrapMount = mount("grpc-io-proxyless-bootstrap", "/var/lib/grpc/data/");
  const script = [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell variables, expanded by sh in the container
    'NODE_ID="sidecar~${INSTANCE_IP}~${POD_NAME}.${POD_NAMESPACE}~cluster.local"',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: as above
    'SERVER_URI="dns:///istiod.${ISTIO_NAMESPACE}.svc:15010"',
    "echo '",
    "{",
    '  "xds_servers": [',
    "    {",
    `      "server_uri": "'\${SERVER_URI}'",`,
    '      "channel_creds": [{"type": "insecure"}],',
    '      "server_features" : ["xds_v3"]',
    "    }",
    "  ],",
    '  "node": {',
    `    "id": "'\${NODE_ID}'",`,
    '    "metadata": {',
    '      "GENERATOR": "grpc"',
    "    }",
    "  }",
    "}' > /var/lib/grpc/data/bootstrap.json",
  ].join("\n");
  return {
    metadata: { annotations: { "sidecar.istio.io/rewriteAppHTTPProbers": "false" } },
    spec: {
      initContainers: [
        {
          name: "grpc-bootstrap-init",
          image: "busybox:1.28",
          volumeMounts: [bootstrapMount],
          env: [
            fieldRef("INSTANCE_IP", "status.podIP"),
            fieldRef("POD_NAME", "metadata.name"),
            fieldRef("POD_NAMESPACE", "metadata.namespace"),
            { name: "ISTIO_NAMESPACE", value: `${data.settings.istioNamespace}\n` },
          ],
          command: ["sh", "-c", script],
        },
      ],
      containers: data.pod.spec.containers.map((c) => ({
        name: c.name,
        env: [
          { name: "GRPC_XDS_BOOTSTRAP", value: "/var/lib/grpc/data/bootstrap.json" },
          { name: "GRPC_GO_LOG_VERBOSITY_LEVEL", value: "99" },
          { name: "GRPC_GO_LOG_SEVERITY_LEVEL", value: "info" },
        ],
        volumeMounts: [bootstrapMount],
      })),
      volumes: [{ name: "grpc-io-proxyless-bootstrap", emptyDir: {} }],
    },
  };
}
