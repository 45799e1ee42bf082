// Istio's Gateway deployment controller: a Gateway API Gateway whose class has a template (`istio`:
// kube-gateway; with ambient, `istio-waypoint` and, multi-network, `istio-east-west`: waypoint) gets the
// ServiceAccount, Deployment and Service that run its proxy (and an autoscaler
// and disruption budget when an overlay asks), made from the built-in template, laid under the class
// defaults ConfigMap (label gateway.istio.io/defaults-for-class in the system namespace) and the
// Gateway's infrastructure.parametersRef ConfigMap, and written by server-side apply under istiod's
// field manager. What it made is watched: a change or deletion, or a change of anything the objects
// are made from, reconciles the Gateway again. Objects of the same name not labelled
// gateway.istio.io/managed are someone else's and left alone, as istiod does.
import { type Logger, pino } from "pino";
import {
  type ConfigObject,
  type gatewayapi,
  type JsonObject,
  type KindInfo,
  kindKey,
  lookupKind,
  type MeshConfig,
  makeKind,
  type ProxyConfigSpec,
} from "../config/index.ts";
import {
  acceptedListenerSetListeners,
  EASTWEST_CONTROLLER,
  GatewayClassIndex,
  type Listener,
  MESH_CONTROLLER,
  type ResolvedClass,
} from "../gatewayapi/index.ts";
import type { Collection, Unregister } from "../krt/index.ts";
import type { ConfigStore } from "../sources/index.ts";
import { Informer, type InformerHandler, type KubeClient, resourcePath } from "../sources/kube/index.ts";
import {
  effectiveProxyConfig,
  GATEWAY_MANAGED_LABEL,
  type GatewayTemplateInput,
  type InjectionSettings,
  kubeGatewayObjects,
  type ServicePort,
  waypointObjects,
} from "../webhooks/index.ts";
import { errorMessage } from "./kube-requests.ts";
import type { RevisionTags } from "./tag-watcher.ts";
import { controllerQueue, type WorkQueue } from "./work-queue.ts";

/** istiod's field manager for what this controller applies (PILOT_GATEWAY_API_CONTROLLER_NAME). */
const FIELD_MANAGER = "istio.io/gateway-controller";
const CONTROLLER_VERSION_ANNOTATION = "gateway.istio.io/controller-version";
/** Istio 1.18 and later; a larger number on a Gateway belongs to a newer controller. */
const CONTROLLER_VERSION = 5;
const CLASS_DEFAULTS_LABEL = "gateway.istio.io/defaults-for-class";
const SERVICE_TYPE_ANNOTATION = "networking.istio.io/service-type";
const NAME_OVERRIDE_ANNOTATION = "gateway.istio.io/name-override";
const SERVICE_ACCOUNT_ANNOTATION = "gateway.istio.io/service-account";
/** Before Istio 1.24 the Deployment selected on this label; a selector cannot change, so it is kept. */
const LEGACY_NAME_LABEL = "istio.io/gateway-name";
const DATAPLANE_MODE_LABEL = "istio.io/dataplane-mode";
const NETWORK_LABEL = "topology.istio.io/network";
/** Attempts per Gateway and change, 5 ms doubling between them, as istiod's queue. */
const MAX_ATTEMPTS = 5;

const GATEWAY = kindKey("gateway.networking.k8s.io", "Gateway");
const GATEWAY_KIND = lookupKind("gateway.networking.k8s.io/v1", "Gateway") as KindInfo;
const GATEWAY_CLASS = kindKey("gateway.networking.k8s.io", "GatewayClass");
const LISTENER_SET = kindKey("gateway.networking.k8s.io", "ListenerSet");
const CONFIG_MAP = kindKey("", "ConfigMap");
const NAMESPACE = kindKey("", "Namespace");
const SERVICE = kindKey("", "Service");
const PROXY_CONFIG = kindKey("networking.istio.io", "ProxyConfig");

const kindInfo = (group: string, kind: string, version: string): KindInfo =>
  makeKind("kubernetes", group, kind, [version]);

/** The kinds the template makes. */
const MADE_KINDS: Readonly<Record<string, KindInfo>> = {
  ServiceAccount: kindInfo("", "ServiceAccount", "v1"),
  Deployment: kindInfo("apps", "Deployment", "v1"),
  Service: kindInfo("", "Service", "v1"),
  HorizontalPodAutoscaler: kindInfo("autoscaling", "HorizontalPodAutoscaler", "v2"),
  PodDisruptionBudget: kindInfo("policy", "PodDisruptionBudget", "v1"),
};
/** Made kinds this controller watches itself (Services are in the store). */
const WATCHED_KINDS = ["ServiceAccount", "Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget"];

/** The built-in templates, by the name a class gives. */
const TEMPLATES: Readonly<
  Record<string, (input: GatewayTemplateInput, overlays: readonly Record<string, string>[]) => JsonObject[]>
> = {
  "kube-gateway": kubeGatewayObjects,
  waypoint: waypointObjects,
};

type Gateway = gatewayapi.Gateway;
type ConfigMap = ConfigObject & { data?: Record<string, string> };

export interface GatewayDeploymentOptions {
  client: KubeClient;
  store: Pick<ConfigStore, "collection" | "get">;
  /** The Kubernetes source's name: Gateways from elsewhere (files) are not deployed. */
  source: string;
  mesh: () => MeshConfig;
  onMeshChange: (listener: () => void) => () => void;
  injection: () => Readonly<InjectionSettings>;
  onInjectionChange: (listener: () => void) => () => void;
  /** This control plane's revision ("" or "default" for the default revision). */
  revision: string;
  /** Whose Gateways are this revision's (revision tags, the default revision): the TagWatcher. */
  tags: RevisionTags;
  /** Where class defaults ConfigMaps are read (POD_NAMESPACE). */
  systemNamespace: string;
  /** CLUSTER_ID. */
  clusterId: string;
  /** PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS; default true. */
  copyLabelsAnnotations?: boolean;
  /** PILOT_ENABLE_AMBIENT_WAYPOINTS (with PILOT_ENABLE_AMBIENT): waypoints are deployed; default false. */
  ambientWaypoints?: boolean;
  /** AMBIENT_ENABLE_MULTI_NETWORK (with PILOT_ENABLE_AMBIENT): east-west gateways are deployed; default false. */
  ambientMultiNetwork?: boolean;
  log?: Logger;
}

export class GatewayDeploymentController {
  readonly #options: GatewayDeploymentOptions;
  readonly #log: Logger;
  readonly #queue: WorkQueue;
  readonly #gateways: Collection<ConfigObject>;
  readonly #made = new Map<string, Map<string, ConfigObject>>(WATCHED_KINDS.map((k) => [k, new Map()]));
  readonly #informers: Informer[] = [];
  readonly #stops: (Unregister | (() => void))[] = [];
  #kubeVersion: number | undefined;
  #stopped = false;

  constructor(options: GatewayDeploymentOptions) {
    this.#options = options;
    this.#log = options.log ?? pino({ level: "silent" });
    this.#gateways = options.store.collection(GATEWAY) as Collection<ConfigObject>;
    this.#queue = controllerQueue(
      (key) => this.#reconcile(key),
      MAX_ATTEMPTS,
      (gateway, err) => this.#log.error({ gateway, err: errorMessage(err) }, "gateway deployment not reconciled"),
    );
  }

  /** Watches what it makes, then reconciles every Gateway and follows what they are made from. */
  start(): void {
    void this.#start().catch((err) => this.#log.error({ err: errorMessage(err) }, "gateway deployments not started"));
  }

  async #start(): Promise<void> {
    const { client, store } = this.#options;
    const version = (await client.request("GET", "/version")) as { major?: string; minor?: string };
    this.#kubeVersion = Number(`${version.major ?? ""}${(version.minor ?? "").replace(/\D+$/, "")}`) || -1;
    const informerOptions = {
      backoff: { initialMs: 1000, maxMs: 30_000 },
      notInstalledRetryMs: 60_000,
      listPageSize: 500,
      log: this.#log,
    };
    for (const kind of WATCHED_KINDS) {
      const informer = new Informer(MADE_KINDS[kind], client, this.#madeHandler(kind), informerOptions);
      this.#informers.push(informer);
      informer.start();
    }
    await Promise.all(this.#informers.map((i) => i.synced));
    if (this.#stopped) return;
    const gatewaysOf = (match: (gw: Gateway) => boolean) => () => {
      for (const gw of this.#gateways.list() as Gateway[]) if (match(gw)) this.#enqueue(gw);
    };
    const all = gatewaysOf(() => true);
    this.#stops.push(
      this.#gateways.register((event) => {
        if (event.type === "update" && !needsReconcile(event.old as Gateway, event.new as Gateway)) return;
        this.#enqueue((event.new ?? event.old) as Gateway);
      }),
      store.collection(GATEWAY_CLASS).register((event) => {
        const name = (event.new ?? event.old).metadata.name;
        gatewaysOf((gw) => gw.spec?.gatewayClassName === name)();
      }),
      store.collection(LISTENER_SET).register((event) => {
        const ref = ((event.new ?? event.old) as gatewayapi.ListenerSet).spec?.parentRef;
        const namespace = ref?.namespace ?? (event.new ?? event.old).metadata.namespace;
        if (ref) this.#queue.add(`${namespace}/${ref.name}`);
      }),
      store.collection(CONFIG_MAP).register((event) => this.#configMapChanged((event.new ?? event.old) as ConfigMap)),
      store.collection(NAMESPACE).register((event) => {
        const name = (event.new ?? event.old).metadata.name;
        gatewaysOf((gw) => gw.metadata.namespace === name)();
      }),
      store.collection(SERVICE).register((event) => this.#enqueueOwner(event.new ?? event.old)),
      store.collection(PROXY_CONFIG).register(all),
      this.#options.onMeshChange(all),
      this.#options.onInjectionChange(all),
      // istiod's HandleTagChange: a tag moved may give or take away any Gateway.
      this.#options.tags.onChange(all),
    );
    all();
  }

  stop(): void {
    this.#stopped = true;
    for (const stop of this.#stops.splice(0)) stop();
    for (const informer of this.#informers) informer.stop();
    this.#queue.stop();
  }

  /** Resolves once nothing is queued or being written (for tests). */
  settled(): Promise<void> {
    return this.#queue.settled();
  }

  #enqueue(gw: ConfigObject): void {
    this.#queue.add(`${gw.metadata.namespace}/${gw.metadata.name}`);
  }

  /** A made object changed: its Gateway is reconciled again (istiod's EnqueueForParentHandler). */
  #enqueueOwner(obj: ConfigObject): void {
    const owners = (obj.metadata as { ownerReferences?: { apiVersion?: string; kind?: string; name?: string }[] })
      .ownerReferences;
    for (const ref of owners ?? []) {
      if (ref.kind === "Gateway" && ref.apiVersion?.startsWith("gateway.networking.k8s.io/")) {
        this.#queue.add(`${obj.metadata.namespace}/${ref.name}`);
      }
    }
  }

  #madeHandler(kind: string): InformerHandler {
    const objects = this.#made.get(kind) as Map<string, ConfigObject>;
    const key = (o: ConfigObject) => `${o.metadata.namespace}/${o.metadata.name}`;
    return {
      replaceAll: (list) => {
        const before = [...objects.values()];
        objects.clear();
        for (const o of list) objects.set(key(o), o);
        for (const o of [...before, ...list]) this.#enqueueOwner(o);
      },
      apply: (type, o) => {
        if (type === "DELETED") objects.delete(key(o));
        else objects.set(key(o), o);
        this.#enqueueOwner(o);
      },
    };
  }

  #configMapChanged(cm: ConfigMap): void {
    const { namespace, name, labels } = cm.metadata;
    const forClass = labels?.[CLASS_DEFAULTS_LABEL];
    for (const gw of this.#gateways.list() as Gateway[]) {
      const params = parametersRef(gw);
      const referenced = params.ok && params.name === name && gw.metadata.namespace === namespace;
      const classDefaults =
        forClass !== undefined && namespace === this.#options.systemNamespace && gw.spec?.gatewayClassName === forClass;
      if (referenced || classDefaults) this.#enqueue(gw);
    }
  }

  #gateway(key: string): Gateway | undefined {
    const [namespace, name] = key.split("/");
    const stored = this.#options.store.get({ kind: GATEWAY, namespace, name });
    return stored?.source === this.#options.source ? (stored.object as Gateway) : undefined;
  }

  async #reconcile(key: string): Promise<void> {
    const gw = this.#gateway(key);
    // Gone (what was made goes with it, through its owner references) or not from the cluster.
    if (!gw) return;
    const { store } = this.#options;
    const classes = new GatewayClassIndex(store.collection(GATEWAY_CLASS).list() as gatewayapi.GatewayClass[]);
    const resolved = classes.resolve(gw.spec?.gatewayClassName ?? "");
    // Another controller's class, one that deploys nothing (istio-remote), or one whose feature is off.
    if (!resolved || !this.#deploys(resolved)) return;
    if (!this.#isMine(gw)) return;
    if (!isManaged(gw)) return;
    const version = controllerVersion(gw);
    if (!version.manage) {
      this.#log.debug({ gateway: key, version: version.existing }, "gateway managed by another controller version");
      return;
    }
    if (version.takeOver) await this.#setControllerVersion(gw);
    const names = objectNames(gw, resolved.info.disableNameSuffix ? "" : resolved.name);
    let objects: JsonObject[];
    try {
      objects = this.#render(gw, resolved, names);
    } catch (err) {
      // Not worth retrying: the inputs must change first, which queues the Gateway again.
      this.#log.error({ gateway: key, err: errorMessage(err) }, "gateway deployment not rendered");
      return;
    }
    for (const object of objects) await this.#apply(object, gw, names, controllerLabel(resolved.controller));
    this.#log.info({ gateway: key }, "gateway deployment updated");
  }

  /** Whether the class has a template, and its controller is on (istiod's ClassInfos, by its features). */
  #deploys(resolved: ResolvedClass): boolean {
    if (!TEMPLATES[resolved.info.template]) return false;
    if (resolved.controller === MESH_CONTROLLER) return this.#options.ambientWaypoints ?? false;
    if (resolved.controller === EASTWEST_CONTROLLER) return this.#options.ambientMultiNetwork ?? false;
    return true;
  }

  /** istiod's tag watcher IsMine: the Gateway's (else its namespace's) istio.io/rev names one of this revision's tags. */
  #isMine(gw: Gateway): boolean {
    const namespace = this.#options.store.get({ kind: NAMESPACE, namespace: "", name: gw.metadata.namespace ?? "" });
    return this.#options.tags.isMine(gw.metadata, namespace?.object.metadata.labels ?? (namespace ? {} : undefined));
  }

  #render(gw: Gateway, resolved: ResolvedClass, names: ObjectNames): JsonObject[] {
    const options = this.#options;
    const className = resolved.name;
    const { store } = options;
    const name = gw.metadata.name ?? "";
    const namespace = gw.metadata.namespace ?? "";
    const annotations = gw.metadata.annotations ?? {};
    const overlays = this.#overlays(gw, className);
    const mesh = options.mesh();
    const settings = options.injection();
    const proxyConfigs = store.collection(PROXY_CONFIG).list() as ConfigObject<ProxyConfigSpec>[];
    const proxyConfig = effectiveProxyConfig(mesh, proxyConfigs, {
      namespace,
      labels: { "gateway.networking.k8s.io/gateway-name": name },
    });
    const ns = store.get({ kind: NAMESPACE, namespace: "", name: namespace })?.object;
    const sets = store.collection(LISTENER_SET).list() as gatewayapi.ListenerSet[];
    const lookupNamespace = (n: string) => store.get({ kind: NAMESPACE, namespace: "", name: n })?.object;
    const infrastructureLabels = infrastructureMetadata(gw, "labels", options.copyLabelsAnnotations ?? true);
    this.#setLabelOverrides(gw, infrastructureLabels, settings);
    const input: GatewayTemplateInput = {
      gateway: {
        metadata: { name, namespace, uid: String(gw.metadata.uid ?? ""), annotations },
        spec: { addresses: gw.spec?.addresses?.map((a) => ({ type: a.type, value: a.value ?? "" })) },
      },
      gatewayClass: className,
      controllerLabel: controllerLabel(resolved.controller),
      deploymentName: names.deployment,
      serviceAccount: names.serviceAccount,
      ports: servicePorts([...(gw.spec?.listeners ?? []), ...acceptedListenerSetListeners(gw, sets, lookupNamespace)]),
      serviceType: annotations[SERVICE_TYPE_ANNOTATION] ?? resolved.info.defaultServiceType,
      clusterId: options.clusterId,
      kubeVersion: this.#kubeVersion ?? -1,
      revision: options.revision === "default" ? "" : options.revision,
      namespaceAnnotations: ns?.metadata.annotations ?? {},
      infrastructureLabels,
      infrastructureAnnotations: infrastructureMetadata(gw, "annotations", options.copyLabelsAnnotations ?? true),
      proxyConfig,
      mesh,
      settings: settings as InjectionSettings,
    };
    return TEMPLATES[resolved.info.template](input, overlays);
  }

  /**
   * istiod's setLabelOverrides, by class name: with waypoints on, what a Gateway other than a waypoint or
   * an east-west gateway runs is kept out of ambient unless it says; a waypoint's or east-west gateway's
   * is on the values' network unless the Gateway's own labels name one.
   */
  #setLabelOverrides(gw: Gateway, labels: Record<string, string>, settings: Readonly<InjectionSettings>): void {
    const className = gw.spec?.gatewayClassName ?? "";
    const ambientGateway = className.includes("waypoint") || className.includes("east-west");
    const ownLabels = gw.metadata.labels ?? {};
    const saysMode = ownLabels[DATAPLANE_MODE_LABEL] !== undefined || labels[DATAPLANE_MODE_LABEL] !== undefined;
    if (this.#options.ambientWaypoints && !ambientGateway && !saysMode) labels[DATAPLANE_MODE_LABEL] = "none";
    if (ambientGateway && ownLabels[NETWORK_LABEL] === undefined && settings.network) {
      labels[NETWORK_LABEL] = settings.network;
    }
  }

  /** The class defaults ConfigMap's data (the oldest), then the Gateway's parameters ConfigMap's. */
  #overlays(gw: Gateway, className: string): Record<string, string>[] {
    const { store, systemNamespace } = this.#options;
    const configMaps = store.collection(CONFIG_MAP).list() as ConfigMap[];
    const out: Record<string, string>[] = [];
    const defaults = configMaps
      .filter(
        (cm) => cm.metadata.namespace === systemNamespace && cm.metadata.labels?.[CLASS_DEFAULTS_LABEL] === className,
      )
      .sort((a, b) => (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? ""));
    if (defaults.length > 0) out.push(defaults[0].data ?? {});
    const params = parametersRef(gw);
    if (!params.ok) throw new Error(`invalid parameters: ${params.error}`);
    if (params.name !== undefined) {
      const cm = store.get({ kind: CONFIG_MAP, namespace: gw.metadata.namespace ?? "", name: params.name });
      if (!cm) {
        throw new Error(
          `parametersRef targeting configmap "${gw.metadata.namespace}/${params.name}", but configmap does not exist`,
        );
      }
      out.push((cm.object as ConfigMap).data ?? {});
    }
    return out;
  }

  /** Writes the controller version annotation through the status subresource (no Gateway write needed). */
  async #setControllerVersion(gw: Gateway): Promise<void> {
    const patch = {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { annotations: { [CONTROLLER_VERSION_ANNOTATION]: String(CONTROLLER_VERSION) } },
    };
    const { namespace, name } = gw.metadata;
    const path = resourcePath({ kind: GATEWAY_KIND, version: "v1", namespace, name, subresource: "status" });
    await this.#options.client.patch(applyQuery(path), patch, "application/apply-patch+yaml");
  }

  /** Server-side applies one rendered object, unless an object of that name is someone else's. */
  async #apply(rendered: JsonObject, gw: Gateway, names: ObjectNames, managedBy: string): Promise<void> {
    const object = structuredClone(rendered) as JsonObject & {
      metadata: JsonObject & { labels?: Record<string, string> };
    };
    const kind = String(object.kind);
    const made = MADE_KINDS[kind];
    const name = String(object.metadata.name ?? "");
    const namespace = String(object.metadata.namespace ?? "");
    // The safeguards istiod keeps against an overlay that reaches beyond the Gateway's own objects.
    if (!made) throw new Error(`unexpected object kind "${kind}"`);
    if (namespace !== gw.metadata.namespace) {
      throw new Error(`object namespace "${namespace}" does not match gateway namespace "${gw.metadata.namespace}"`);
    }
    const gatewayName = gw.metadata.name ?? "";
    if (!(name === names.deployment || name === names.serviceAccount || name.startsWith(gatewayName))) {
      throw new Error(
        `object name "${name}" is none of "${names.deployment}", "${names.serviceAccount}" nor starts with "${gatewayName}"`,
      );
    }
    object.metadata.labels = { ...object.metadata.labels, [GATEWAY_MANAGED_LABEL]: managedBy };
    const existing = this.#existing(kind, namespace, name);
    if (existing && existing.metadata.labels?.[GATEWAY_MANAGED_LABEL] === undefined) {
      this.#log.debug({ kind, namespace, name }, "not managed by the gateway controller: left alone");
      return;
    }
    // The version seen, so a write over a newer object fails and is retried once it is seen.
    if (existing?.metadata.resourceVersion) object.metadata.resourceVersion = existing.metadata.resourceVersion;
    type DeploymentSpec = {
      selector?: { matchLabels?: Record<string, string> };
      template?: { metadata?: { labels?: Record<string, string> } };
    };
    const existingSpec = (existing?.spec ?? {}) as DeploymentSpec;
    if (kind === "Deployment" && existingSpec.selector?.matchLabels?.[LEGACY_NAME_LABEL]) {
      const spec = object.spec as { selector: unknown; template: { metadata: { labels: Record<string, string> } } };
      spec.selector = existingSpec.selector;
      const legacyLabel = existingSpec.template?.metadata?.labels?.[LEGACY_NAME_LABEL];
      if (legacyLabel !== undefined) spec.template.metadata.labels[LEGACY_NAME_LABEL] = legacyLabel;
    }
    const path = resourcePath({ kind: made, version: made.preferredVersion, namespace, name });
    try {
      await this.#options.client.patch(applyQuery(path), object, "application/apply-patch+yaml");
    } catch (err) {
      throw new Error(`patch ${made.group || "core"}/${kind} ${namespace}/${name}: ${errorMessage(err)}`);
    }
  }

  #existing(kind: string, namespace: string, name: string): ConfigObject | undefined {
    if (kind === "Service") return this.#options.store.get({ kind: SERVICE, namespace, name })?.object;
    return this.#made.get(kind)?.get(`${namespace}/${name}`);
  }
}

interface ObjectNames {
  deployment: string;
  serviceAccount: string;
}

/** `<gateway>-<class>` (`<gateway>` for classes without the suffix), unless the Gateway's annotations say. */
function objectNames(gw: Gateway, classSuffix: string): ObjectNames {
  const name = gw.metadata.name ?? "";
  const fallback = classSuffix ? `${name}-${classSuffix}` : name;
  const annotations = gw.metadata.annotations ?? {};
  return {
    deployment: annotations[NAME_OVERRIDE_ANNOTATION] || fallback,
    serviceAccount: annotations[SERVICE_ACCOUNT_ANNOTATION] || fallback,
  };
}

/** The gateway.istio.io/managed label's value for a class's controller: its name with "/" made "-". */
const controllerLabel = (controller: string) => controller.replaceAll("/", "-");

const applyQuery = (path: string) => `${path}?fieldManager=${encodeURIComponent(FIELD_MANAGER)}&force=true`;

/** A Gateway change that can change what is deployed: its generation, labels or annotations. */
function needsReconcile(old: Gateway, next: Gateway): boolean {
  const same = (a: Record<string, string> | undefined, b: Record<string, string> | undefined) => {
    const ak = Object.keys(a ?? {});
    return ak.length === Object.keys(b ?? {}).length && ak.every((k) => a?.[k] === b?.[k]);
  };
  return (
    old.metadata.generation !== next.metadata.generation ||
    !same(old.metadata.labels, next.metadata.labels) ||
    !same(old.metadata.annotations, next.metadata.annotations)
  );
}

/**
 * Whether Istio deploys the Gateway (ENABLE_GATEWAY_API_MANUAL_DEPLOYMENT's rule): no address, or one
 * IP address (then the Service's loadBalancerIP); a hostname names an existing deployment.
 */
function isManaged(gw: Gateway): boolean {
  const addresses = gw.spec?.addresses ?? [];
  if (addresses.length === 0) return true;
  if (addresses.length > 1) return false;
  return addresses[0].type === undefined || addresses[0].type === "IPAddress";
}

/** Istio's ManagedGatewayControllerVersion: whether this controller manages the Gateway, and must say so. */
function controllerVersion(gw: Gateway): { existing?: string; takeOver: boolean; manage: boolean } {
  const existing = gw.metadata.annotations?.[CONTROLLER_VERSION_ANNOTATION];
  if (existing === undefined) return { takeOver: true, manage: true };
  if (!/^-?\d+$/.test(existing)) return { existing, takeOver: false, manage: false };
  const number = Number(existing);
  if (number > CONTROLLER_VERSION) return { existing, takeOver: false, manage: false };
  return { existing, takeOver: number < CONTROLLER_VERSION, manage: true };
}

type ParametersRef = { ok: true; name?: string } | { ok: false; error: string };

/** The Gateway's infrastructure.parametersRef: only a ConfigMap of its own namespace is known. */
function parametersRef(gw: Gateway): ParametersRef {
  const ref = gw.spec?.infrastructure?.parametersRef;
  if (!ref) return { ok: true };
  if ((ref.group ?? "") === "" && ref.kind === "ConfigMap") return { ok: true, name: ref.name };
  return { ok: false, error: `unknown infrastructure parameters type ${ref.group ?? ""}/${ref.kind}` };
}

/**
 * The labels or annotations the made objects carry: the Gateway's infrastructure ones if set, else a
 * copy of the Gateway's own (unless copying is off); the gateway.networking.k8s.io/ prefix is reserved.
 */
function infrastructureMetadata(gw: Gateway, which: "labels" | "annotations", copy: boolean): Record<string, string> {
  const infra = gw.spec?.infrastructure?.[which];
  if (infra) {
    return Object.fromEntries(Object.entries(infra).filter(([k]) => !k.startsWith("gateway.networking.k8s.io/")));
  }
  return copy ? { ...(gw.metadata[which] ?? {}) } : {};
}

/** The Service's ports: the status port, then one per listener port (Istio's extractServicePorts). */
function servicePorts(listeners: readonly Listener[]): ServicePort[] {
  const ports: ServicePort[] = [{ name: "status-port", port: 15021, protocol: "TCP", appProtocol: "tcp" }];
  const seen = new Set<number>();
  const used = new Set(["status-port"]);
  listeners.forEach((l, i) => {
    if (seen.has(l.port)) return;
    seen.add(l.port);
    // Listener names allow dots and 253 characters; port names neither.
    let name = (l.name ?? "").replaceAll(".", "-").slice(0, 63);
    if (name === "") name = `${l.protocol.toLowerCase()}-${i}`;
    ports.push({
      name: uniquePortName(name, l.port, used),
      port: l.port,
      protocol: "TCP",
      appProtocol: l.protocol.toLowerCase(),
    });
  });
  return ports;
}

/** `name` made unique among the Service's port names with the port number, within 63 characters. */
function uniquePortName(name: string, port: number, used: Set<string>): string {
  const base = name.slice(0, 63);
  let candidate = base;
  for (let suffix = `-${port}`; used.has(candidate); suffix += "x") {
    candidate = base.slice(0, 63 - suffix.length) + suffix;
  }
  used.add(candidate);
  return candidate;
}
