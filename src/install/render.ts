// The control plane's objects rendered from the install values, with the names and labels of Istio's
// istiod chart (so istioctl, Istio's dashboards and runbooks find them): Namespace, ServiceAccount, the ClusterRole
// and Role with their bindings, the `istio` and `istio-sidecar-injector` ConfigMaps, Deployment,
// Service, PodDisruptionBudget, HorizontalPodAutoscaler and the two webhook configurations.
//
// The RBAC rules are what sluiced does, no more: each verb on each resource is used by some part of it
// (test/install/install.test.ts runs sluiced as this ServiceAccount against a cluster with an audit log and
// checks both that nothing is refused and that every granted verb was used).
import { stringify } from "yaml";
import { KINDS, type KindFeature, kindEnabled } from "../config/index.ts";
import { envBool } from "../util/index.ts";
import { SLUICE_VERSION } from "../util/version.ts";
import { mergeValues, type ValueMap, type Values } from "./values.ts";

export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
} & Record<string, unknown>;

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const READ = ["list", "watch"];

/** The ports of istiod's Service (and of a revision tag's). */
export const ISTIOD_PORTS = [
  { name: "grpc-xds", port: 15010, protocol: "TCP" },
  { name: "https-dns", port: 15012, protocol: "TCP" },
  { name: "https-webhook", port: 443, protocol: "TCP", targetPort: 15017 },
  { name: "http-monitoring", port: 15014, protocol: "TCP" },
];

/** What the validation webhooks are called for: every Istio config kind, created or updated. */
export const VALIDATION_RULES = [
  {
    apiGroups: ["security.istio.io", "networking.istio.io", "telemetry.istio.io", "extensions.istio.io"],
    apiVersions: ["*"],
    operations: ["CREATE", "UPDATE"],
    resources: ["*"],
  },
];

/**
 * What sluiced reads and writes across the cluster, by who needs it: the config and registry sources
 * (list and watch), the controllers' writes (status, root certificate, webhooks), the authenticators.
 */
const CLUSTER_RULES: readonly PolicyRule[] = [
  // The config source: every Istio kind, and the Gateway API's.
  {
    apiGroups: ["networking.istio.io", "security.istio.io", "telemetry.istio.io", "extensions.istio.io"],
    resources: ["*"],
    verbs: READ,
  },
  { apiGroups: ["gateway.networking.k8s.io"], resources: ["*"], verbs: READ },
  // The registry: services, endpoints, workloads, namespaces (discoverySelectors), nodes (locality).
  { apiGroups: [""], resources: ["pods", "nodes", "services", "endpoints", "namespaces"], verbs: READ },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: READ },
  // Gateway credentials (credentialName) and the secrets the mesh reads.
  { apiGroups: [""], resources: ["secrets"], verbs: READ },
  // Kubernetes Ingress of class istio, and its status.
  { apiGroups: ["networking.k8s.io"], resources: ["ingresses", "ingressclasses"], verbs: READ },
  { apiGroups: ["networking.k8s.io"], resources: ["ingresses/status"], verbs: ["update"] },
  // Gateway API status, written by the gateway status leader.
  {
    apiGroups: ["gateway.networking.k8s.io"],
    resources: ["gatewayclasses/status", "gateways/status", "httproutes/status", "grpcroutes/status"],
    verbs: ["update"],
  },
  // The built-in GatewayClasses (istio, istio-remote), created when missing.
  { apiGroups: ["gateway.networking.k8s.io"], resources: ["gatewayclasses"], verbs: ["create"] },
  // The Gateway deployment controller's controller-version annotation, applied through status.
  { apiGroups: ["gateway.networking.k8s.io"], resources: ["gateways/status"], verbs: ["patch"] },
  // ServiceEntry addresses (the IP autoallocation controller's guarded JSON patches).
  { apiGroups: ["networking.istio.io"], resources: ["serviceentries/status"], verbs: ["patch"] },
  // WorkloadEntry auto-registration: the entries of VMs connecting with AUTO_REGISTER_GROUP, and their health.
  { apiGroups: ["networking.istio.io"], resources: ["workloadentries"], verbs: ["create", "update", "delete"] },
  { apiGroups: ["networking.istio.io"], resources: ["workloadentries/status"], verbs: ["update"] },
  // The root certificate (istio-ca-root-cert) in every namespace, and the mesh and injector ConfigMaps.
  { apiGroups: [""], resources: ["configmaps"], verbs: ["create", "list", "watch", "update"] },
  // The webhooks' caBundle and failurePolicy.
  {
    apiGroups: ["admissionregistration.k8s.io"],
    resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
    verbs: ["list", "watch", "update"],
  },
  // Proxies and the CA's clients authenticate with Kubernetes JWTs.
  { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
];

/** What a flag's controllers write beyond their kinds' status. */
const FEATURE_WRITES: Partial<Record<KindFeature, readonly PolicyRule[]>> = {
  // The InferencePools' shadow Services, server-side applied (an apply that makes the object is a create).
  ENABLE_GATEWAY_API_INFERENCE_EXTENSION: [{ apiGroups: [""], resources: ["services"], verbs: ["create", "patch"] }],
};

/**
 * The kinds sluiced reads only under an istiod flag (KindInfo.feature) set in pilot.env: listed, watched,
 * and their status written by the gateway status leader.
 */
function featureRules(values: Values): PolicyRule[] {
  const env = values.stringMap("pilot.env");
  const on = (flag: KindFeature) => envBool(env, flag, false);
  const kinds = KINDS.filter((kind) => kind.feature && kindEnabled(kind, on));
  return [
    ...kinds.flatMap((kind) => [
      { apiGroups: [kind.group], resources: [kind.plural], verbs: READ },
      { apiGroups: [kind.group], resources: [`${kind.plural}/status`], verbs: ["update"] },
    ]),
    ...Object.entries(FEATURE_WRITES).flatMap(([flag, rules]) => (on(flag as KindFeature) ? rules : [])),
  ];
}

/**
 * With global.istiod.enableAnalysis: the analysis messages in the status of every Istio kind (Istio's
 * chart names each kind's status and grants patch too; sluiced only updates, the way istiod writes them).
 */
const ANALYSIS_RULES: readonly PolicyRule[] = [
  {
    apiGroups: ["networking.istio.io", "security.istio.io", "telemetry.istio.io", "extensions.istio.io"],
    resources: ["*/status"],
    verbs: ["update"],
  },
];

/**
 * The Gateway deployment controller's (unless pilot.env.PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER is
 * false): what it makes for a Gateway, watched and server-side applied (an apply that makes the object is
 * a create). Services are read by the registry.
 */
const GATEWAY_CONTROLLER_RULES: readonly PolicyRule[] = [
  { apiGroups: ["apps"], resources: ["deployments"], verbs: ["list", "watch", "create", "patch"] },
  { apiGroups: ["autoscaling"], resources: ["horizontalpodautoscalers"], verbs: ["list", "watch", "create", "patch"] },
  { apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: ["list", "watch", "create", "patch"] },
  { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["list", "watch", "create", "patch"] },
  { apiGroups: [""], resources: ["services"], verbs: ["create", "patch"] },
];

/** What sluiced does in its own namespace only. */
const NAMESPACE_RULES: readonly PolicyRule[] = [
  // Leader election.
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
  // The mesh config (istio) and the injector's (istio-sidecar-injector), read at start.
  { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
  // The CA's root key and certificate (istio-ca-secret); updated when the self-signed root rotates.
  { apiGroups: [""], resources: ["secrets"], verbs: ["get", "create", "update"] },
  // The dry-run create that shows validation is served before the webhook fails closed.
  { apiGroups: ["networking.istio.io"], resources: ["gateways"], verbs: ["create"] },
];

/**
 * What another control plane reads of this cluster through a remote secret (`sluice create-remote-secret`):
 * the registry's Kubernetes kinds, list and watch, as the remote cluster's source reads them.
 */
const READER_RULES: readonly PolicyRule[] = [
  { apiGroups: [""], resources: ["pods", "nodes", "services", "endpoints", "namespaces"], verbs: READ },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: READ },
];

/**
 * With `istiodRemote.enabled` (a cluster a control plane outside it leads, as Istio's chart): the
 * namespace controller's writes there, istio-ca-root-cert in every namespace.
 */
const REMOTE_WRITER_RULES: readonly PolicyRule[] = [
  { apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch", "create", "update"] },
];

/** In the system namespace: the mesh ConfigMap (its trust domain), read by name. */
const READER_NAMESPACE_RULES: readonly PolicyRule[] = [{ apiGroups: [""], resources: ["configmaps"], verbs: READ }];

/** With `istiodRemote.enabled`: its election in the system namespace (a Lease where istiod takes a ConfigMap lock). */
const REMOTE_ELECTION_RULES: readonly PolicyRule[] = [
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
];

/** The Gateway deployment controller's ClusterRole and binding, under Istio's names. */
function renderGatewayControllerRole(values: Values, p: Names): KubeObject[] {
  if (values.stringMap("pilot.env").PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER === "false") return [];
  const name = `istiod-gateway-controller${p.suffix}-${p.namespace}`;
  return [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name, labels: p.istiodLabels },
      rules: GATEWAY_CONTROLLER_RULES,
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name, labels: p.istiodLabels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ kind: "ServiceAccount", name: p.istiod, namespace: p.namespace }],
    },
  ];
}

/**
 * The ServiceAccount of remote secrets, with its ClusterRole and binding (Istio's istio-reader-*), and a Role
 * and binding `istio-reader[-<rev>]` in the system namespace (the mesh ConfigMap; with istiodRemote, the Lease).
 */
export function renderRemoteReader(values: Values): KubeObject[] {
  const p = names(values);
  const labels = { app: "istio-reader", "app.kubernetes.io/name": "istio-reader", ...p.common };
  const role = `istio-reader-clusterrole${p.suffix}-${p.namespace}`;
  const writer = values.boolean("istiodRemote.enabled");
  const subjects = [{ kind: "ServiceAccount", name: READER_SERVICE_ACCOUNT, namespace: p.namespace }];
  const name = `istio-reader${p.suffix}`;
  return [
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: READER_SERVICE_ACCOUNT, namespace: p.namespace, labels },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: role, labels },
      rules: [...READER_RULES, ...(writer ? REMOTE_WRITER_RULES : [])],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: role, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects,
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace: p.namespace, labels },
      rules: [...READER_NAMESPACE_RULES, ...(writer ? REMOTE_ELECTION_RULES : [])],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name, namespace: p.namespace, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects,
    },
  ];
}

/** The ServiceAccount whose token remote secrets carry (Istio's DefaultServiceAccountName). */
export const READER_SERVICE_ACCOUNT = "istio-reader-service-account";

/** Every object, in the order they are applied (what others refer to first). */
export function renderControlPlane(values: Values): KubeObject[] {
  const p = names(values);
  const objects: KubeObject[] = [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: p.namespace } },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: p.istiod, namespace: p.namespace, labels: p.istiodLabels },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: p.clusterRole, labels: p.istiodLabels },
      rules: [
        ...CLUSTER_RULES,
        ...featureRules(values),
        ...(values.boolean("global.istiod.enableAnalysis") ? ANALYSIS_RULES : []),
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: p.clusterRole, labels: p.istiodLabels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: p.clusterRole },
      subjects: [{ kind: "ServiceAccount", name: p.istiod, namespace: p.namespace }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: p.istiod, namespace: p.namespace, labels: p.istiodLabels },
      rules: NAMESPACE_RULES,
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: p.istiod, namespace: p.namespace, labels: p.istiodLabels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: p.istiod },
      subjects: [{ kind: "ServiceAccount", name: p.istiod, namespace: p.namespace }],
    },
    ...renderGatewayControllerRole(values, p),
    ...renderRemoteReader(values),
    meshConfigMap(values, p),
    injectorConfigMap(values, p),
    deployment(values, p),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: p.istiod, namespace: p.namespace, labels: p.pilotLabels },
      spec: {
        ports: ISTIOD_PORTS,
        selector: p.selector,
      },
    },
  ];
  const autoscale = values.boolean("pilot.autoscaleEnabled");
  const minReplicas = autoscale ? values.integer("pilot.autoscaleMin") : values.integer("pilot.replicaCount");
  // A budget of one pod would block every node drain (kubernetes/kubernetes#93476), as the chart says.
  if (values.boolean("global.defaultPodDisruptionBudget.enabled") && minReplicas > 1) {
    objects.push({
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: p.istiod, namespace: p.namespace, labels: p.pilotLabels },
      spec: { minAvailable: 1, selector: { matchLabels: p.selector } },
    });
  }
  if (autoscale) {
    objects.push({
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: p.istiod, namespace: p.namespace, labels: p.componentLabels },
      spec: {
        minReplicas,
        maxReplicas: values.integer("pilot.autoscaleMax"),
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: p.istiod },
        metrics: [
          {
            type: "Resource",
            resource: {
              name: "cpu",
              target: { type: "Utilization", averageUtilization: values.integer("pilot.cpu.targetAverageUtilization") },
            },
          },
        ],
      },
    });
  }
  objects.push(mutatingWebhook(p));
  if (values.boolean("global.configValidation")) {
    objects.push(
      validatingWebhook(p, `istio-validator${p.suffix}-${p.namespace}`, "rev.validation.istio.io", {
        matchExpressions: [{ key: "istio.io/rev", operator: "In", values: [p.revLabel] }],
      }),
    );
    if (values.string("defaultRevision") === p.revLabel)
      objects.push(validatingWebhook(p, "istiod-default-validator", "validation.istio.io"));
  }
  return objects;
}

/** The names and labels every object derives from the revision and namespace. */
function names(values: Values) {
  const revision = values.string("revision") === "default" ? "" : values.string("revision");
  const namespace = values.string("global.istioNamespace") || "istio-system";
  const suffix = revision === "" ? "" : `-${revision}`;
  const revLabel = revision || "default";
  const common = { ...commonLabels(), release: "istio" };
  const istiodLabels = { app: "istiod", "app.kubernetes.io/name": "istiod", ...common };
  const componentLabels = {
    ...istiodLabels,
    "install.operator.istio.io/owning-resource": "unknown",
    "istio.io/rev": revLabel,
    "operator.istio.io/component": "Pilot",
  };
  return {
    revision,
    revLabel,
    suffix,
    namespace,
    istiod: `istiod${suffix}`,
    clusterRole: `istiod-clusterrole${suffix}-${namespace}`,
    common,
    istiodLabels,
    componentLabels,
    pilotLabels: { ...componentLabels, istio: "pilot" },
    // Istio's selectors, kept so that an install can take over istiod's Deployment (its selector is immutable).
    deploymentSelector: revision === "" ? { istio: "pilot" } : { app: "istiod", "istio.io/rev": revision },
    selector: revision === "" ? { app: "istiod", istio: "pilot" } : { app: "istiod", "istio.io/rev": revision },
  };
}

type Names = ReturnType<typeof names>;

/** The labels every object Sluice installs carries (Istio's chart has them as `istio.labels`). */
export function commonLabels(): Record<string, string> {
  return {
    "app.kubernetes.io/instance": "istio",
    "app.kubernetes.io/managed-by": "sluice",
    "app.kubernetes.io/part-of": "istio",
    "app.kubernetes.io/version": SLUICE_VERSION,
  };
}

function meshConfigMap(values: Values, p: Names): KubeObject {
  const { app: _app, ...labels } = p.componentLabels;
  const mesh: ValueMap = {
    trustDomain: "cluster.local",
    rootNamespace: p.namespace,
    defaultConfig: {
      discoveryAddress: `${p.istiod}.${p.namespace}.svc:15012`,
      ...(values.string("global.meshID") ? { meshId: values.string("global.meshID") } : {}),
    },
  };
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `istio${p.suffix}`, namespace: p.namespace, labels },
    data: {
      mesh: stringify(mergeValues(mesh, values.map("meshConfig"))),
      meshNetworks: stringify({ networks: values.map("global.meshNetworks") }),
    },
  };
}

function injectorConfigMap(values: Values, p: Names): KubeObject {
  const { app: _app, ...labels } = p.componentLabels;
  const defaultTemplates = values.list("sidecarInjectorWebhook.defaultTemplates");
  const config = {
    defaultTemplates: defaultTemplates.length > 0 ? defaultTemplates : ["sidecar"],
    policy: values.string("global.proxy.autoInject") || "enabled",
    alwaysInjectSelector: values.list("sidecarInjectorWebhook.alwaysInjectSelector"),
    neverInjectSelector: values.list("sidecarInjectorWebhook.neverInjectSelector"),
    injectedAnnotations: values.stringMap("sidecarInjectorWebhook.injectedAnnotations"),
  };
  // What the chart keeps of the values for the injector: the templates read only these.
  const injectorValues = {
    global: values.map("global"),
    sidecarInjectorWebhook: values.map("sidecarInjectorWebhook"),
    revision: p.revision,
    pilot: { env: values.map("pilot.env") },
  };
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `istio-sidecar-injector${p.suffix}`,
      namespace: p.namespace,
      labels,
    },
    data: { config: stringify(config), values: JSON.stringify(injectorValues, null, 2) },
  };
}

function deployment(values: Values, p: Names): KubeObject {
  const tag = values.string("pilot.tag") || SLUICE_VERSION;
  const image = values.string("pilot.image").includes("/")
    ? values.string("pilot.image")
    : `${values.string("pilot.hub")}/${values.string("pilot.image")}:${tag}`;
  const fieldRef = (fieldPath: string) => ({ valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } } });
  const env: ValueMap[] = [
    { name: "REVISION", value: p.revLabel },
    { name: "POD_NAME", ...fieldRef("metadata.name") },
    { name: "POD_NAMESPACE", ...fieldRef("metadata.namespace") },
    { name: "SERVICE_ACCOUNT", ...fieldRef("spec.serviceAccountName") },
    { name: "CLUSTER_ID", value: values.string("global.multiCluster.clusterName") || "Kubernetes" },
    { name: "ROOT_CA_DIR", value: "/etc/cacerts" },
    { name: "PILOT_ENABLE_ANALYSIS", value: String(values.boolean("global.istiod.enableAnalysis")) },
    // As Istio's chart: ztunnel, in the release's namespace unless told otherwise, may ask for its pods'
    // certificates (unless pilot.env names the trusted accounts itself).
    ...(values.stringMap("pilot.env").CA_TRUSTED_NODE_ACCOUNTS === undefined
      ? [
          {
            name: "CA_TRUSTED_NODE_ACCOUNTS",
            value: `${values.string("pilot.trustedZtunnelNamespace") || p.namespace}/${values.string("pilot.trustedZtunnelName") || "ztunnel"}`,
          },
        ]
      : []),
    ...Object.entries(values.stringMap("pilot.env")).map(([name, value]) => ({ name, value })),
  ];
  // Istio's pod labels: the Deployment's but `release`, and `istio: istiod` in a revision's.
  const { release: _release, ...pilotPodLabels } = p.pilotLabels;
  const podLabels = {
    ...pilotPodLabels,
    istio: p.revision === "" ? "pilot" : "istiod",
    ...values.stringMap("pilot.podLabels"),
    "sidecar.istio.io/inject": "false",
    "istio.io/dataplane-mode": "none",
  };
  const spec: ValueMap = {
    strategy: { rollingUpdate: { maxSurge: "100%", maxUnavailable: "25%" } },
    selector: { matchLabels: p.deploymentSelector },
    template: {
      metadata: {
        labels: podLabels,
        annotations: {
          "prometheus.io/port": "15014",
          "prometheus.io/scrape": "true",
          "sidecar.istio.io/inject": "false",
          ...values.stringMap("pilot.podAnnotations"),
        },
      },
      spec: {
        serviceAccountName: p.istiod,
        nodeSelector: values.stringMap("pilot.nodeSelector"),
        tolerations: [{ key: "cni.istio.io/not-ready", operator: "Exists" }, ...values.list("pilot.tolerations")],
        containers: [
          {
            name: "discovery",
            image,
            imagePullPolicy: values.string("pilot.imagePullPolicy") || "IfNotPresent",
            args: [
              "--monitoringAddr=:15014",
              "--log_output_level=default:info",
              "--domain=cluster.local",
              "--keepaliveMaxServerConnectionAge=30m",
              ...values.list("pilot.extraArgs").map(String),
            ],
            env,
            ports: [
              { containerPort: 8080, name: "http-debug", protocol: "TCP" },
              { containerPort: 15010, name: "grpc-xds", protocol: "TCP" },
              { containerPort: 15012, name: "tls-xds", protocol: "TCP" },
              { containerPort: 15017, name: "https-webhooks", protocol: "TCP" },
              { containerPort: 15014, name: "http-monitoring", protocol: "TCP" },
            ],
            readinessProbe: {
              httpGet: { path: "/ready", port: 8080 },
              initialDelaySeconds: 1,
              periodSeconds: 3,
              timeoutSeconds: 5,
            },
            resources: values.map("pilot.resources"),
            securityContext: {
              allowPrivilegeEscalation: false,
              capabilities: { drop: ["ALL"] },
              readOnlyRootFilesystem: true,
              runAsNonRoot: true,
            },
            volumeMounts: [{ name: "cacerts", mountPath: "/etc/cacerts", readOnly: true }],
          },
        ],
        // Plugged-in CA certificates, when the cacerts Secret exists (else the self-signed root).
        volumes: [{ name: "cacerts", secret: { secretName: "cacerts", optional: true } }],
      },
    },
  };
  if (!values.boolean("pilot.autoscaleEnabled")) spec.replicas = values.integer("pilot.replicaCount");
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: p.istiod, namespace: p.namespace, labels: p.pilotLabels },
    spec,
  };
}

const podRule = { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] };

/** The injector's webhooks: by namespace or pod label for this revision, plus the unlabelled default ones. */
function mutatingWebhook(p: Names): KubeObject {
  const notOptedOut = { key: "sidecar.istio.io/inject", operator: "NotIn", values: ["false"] };
  const hook = (name: string, namespaceSelector: ValueMap[], objectSelector: ValueMap[]) => ({
    name,
    admissionReviewVersions: ["v1"],
    clientConfig: { service: { name: p.istiod, namespace: p.namespace, path: "/inject", port: 443 } },
    failurePolicy: "Fail",
    namespaceSelector: { matchExpressions: namespaceSelector },
    objectSelector: { matchExpressions: objectSelector },
    reinvocationPolicy: "Never",
    rules: [podRule],
    sideEffects: "None",
  });
  const exists = (key: string) => ({ key, operator: "DoesNotExist" });
  const isIn = (key: string, value: string) => ({ key, operator: "In", values: [value] });
  const webhooks = [
    hook(
      "rev.namespace.sidecar-injector.istio.io",
      [isIn("istio.io/rev", p.revLabel), exists("istio-injection")],
      [notOptedOut],
    ),
    hook(
      "rev.object.sidecar-injector.istio.io",
      [exists("istio.io/rev"), exists("istio-injection")],
      [notOptedOut, isIn("istio.io/rev", p.revLabel)],
    ),
  ];
  // The default revision also injects namespaces labelled istio-injection=enabled and opted-in pods.
  if (p.revision === "") {
    webhooks.push(
      hook("namespace.sidecar-injector.istio.io", [isIn("istio-injection", "enabled")], [notOptedOut]),
      hook(
        "object.sidecar-injector.istio.io",
        [exists("istio-injection"), exists("istio.io/rev")],
        [isIn("sidecar.istio.io/inject", "true"), exists("istio.io/rev")],
      ),
    );
  }
  const labels = { ...p.componentLabels, app: "sidecar-injector" };
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: `istio-sidecar-injector${p.suffix}`, labels },
    webhooks,
  };
}

/**
 * Validation of Istio's config: `istio-validator-…` checks config labelled for this revision;
 * `istiod-default-validator` (the default revision's) checks the rest, as Istio's base chart has it.
 * Both fail open until sluiced has shown that it serves (its webhook patcher then sets Fail).
 */
function validatingWebhook(p: Names, name: string, hookName: string, objectSelector?: ValueMap): KubeObject {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name, labels: { ...p.istiodLabels, istio: "istiod", "istio.io/rev": p.revLabel } },
    webhooks: [
      {
        name: hookName,
        admissionReviewVersions: ["v1"],
        clientConfig: { service: { name: p.istiod, namespace: p.namespace, path: "/validate" } },
        failurePolicy: "Ignore",
        ...(objectSelector ? { objectSelector } : {}),
        rules: VALIDATION_RULES,
        sideEffects: "None",
      },
    ],
  };
}
