// `sluice/kube`: typed clients for the Istio and Gateway API kinds on a Kubernetes API server, as
// istio.io/client-go and gateway-api's clientset give Go users. They ride on the transport Sluice's own
// kube source uses (src/sources/kube/client.ts: client-node's KubeConfig for address and credentials,
// its fetch plumbing for requests, its Watch for watches), and keep objects as the raw JSON the server
// sends, so unknown fields survive a read-modify-write.
import type { KubeConfig } from "@kubernetes/client-node";
import type { ConfigObject } from "../config/index.ts";
import { KINDS, type KindInfo, lookupKind, parseApiVersion } from "../config/index.ts";
import type {
  AuthorizationPolicy,
  DestinationRule,
  EnvoyFilter,
  Gateway,
  gatewayapi,
  PeerAuthentication,
  ProxyConfigSpec,
  RequestAuthentication,
  ServiceEntry,
  Sidecar,
  Telemetry,
  TrafficExtension,
  VirtualService,
  WasmPlugin,
  WorkloadEntry,
  WorkloadGroup,
} from "../config/types/index.ts";
import { groupVersion, KubeApiError, KubeClient, type OpenWatch, resourcePath } from "../sources/kube/index.ts";
import { SLUICE_VERSION } from "../util/version.ts";

// Re-exported so callers build the KubeConfig from the same client-node copy the clients use.
export { KubeConfig } from "@kubernetes/client-node";
export { KubeApiError } from "../sources/kube/index.ts";

/** The library's clients' User-Agent: their writes that name no field manager are recorded under `sluice`. */
const LIBRARY_USER_AGENT = `sluice/${SLUICE_VERSION}`;

/** How a patch is written: a JSON merge patch (RFC 7386, the default) or a JSON patch (RFC 6902, a list of operations). */
export type PatchType = "merge" | "json";

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
};

/** The objects of a list, and the resourceVersion the list was read at (a watch from there misses nothing). */
export interface KindList<T> {
  items: T[];
  resourceVersion: string;
}

/** What to list or watch. */
export interface ListOptions {
  /** A Kubernetes label selector, e.g. `"app=reviews,tier!=db"`; absent: every object. */
  labelSelector?: string;
}

/** Where a watch starts, and what it sees. */
export interface WatchOptions extends ListOptions {
  /**
   * Deliver the changes after this resourceVersion (a list's, or the last object's seen). Absent: the
   * current objects first, each as ADDED, then the changes that follow.
   */
  resourceVersion?: string;
}

/** What happened to the object a watch event carries (for DELETED, its last state). */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

/** Receives each event of a watch, in the order the API server sent them. */
export type WatchHandler<T> = (type: WatchEventType, object: T) => void;

/** A watch in progress. */
export interface KindWatch {
  /** Ends the watch; `done` then resolves. */
  stop(): void;
  /**
   * Settles when the watch ends. It resolves after `stop()`, or when the API server closes the stream
   * (as it does after some minutes: watch again from the last resourceVersion seen). It rejects with
   * a KubeApiError when the server ends the watch with an error, e.g. 410 Expired when the
   * resourceVersion is too old (list again).
   */
  readonly done: Promise<void>;
}

/** A client for one namespaced kind at one version; `T` is the object type. */
export interface NamespacedClient<T extends ConfigObject> {
  /** The kind, from Sluice's kinds registry. */
  readonly kind: KindInfo;
  /** The apiVersion the client reads and writes, e.g. `networking.istio.io/v1`. */
  readonly apiVersion: string;
  readonly namespaced: true;
  /** The objects of one namespace, or of all namespaces when `namespace` is absent. */
  list(namespace?: string, options?: ListOptions): Promise<KindList<T>>;
  get(namespace: string, name: string): Promise<T>;
  /** Creates the object in its `metadata.namespace` ("default" when absent); returns it as stored. */
  create(obj: T): Promise<T>;
  /**
   * Replaces the object (but not its status). Its `metadata.resourceVersion` must be the stored one,
   * or the call fails with 409 Conflict: read again, change again, update again.
   */
  update(obj: T): Promise<T>;
  /** Patches the object (a merge patch unless `type` says otherwise); returns it as stored. */
  patch(namespace: string, name: string, patch: unknown, type?: PatchType): Promise<T>;
  delete(namespace: string, name: string): Promise<void>;
  /** Replaces the object's status (through the status subresource); `metadata.resourceVersion` as for `update`. */
  updateStatus(obj: T): Promise<T>;
  /** Patches the object's status (through the status subresource). */
  patchStatus(namespace: string, name: string, patch: unknown, type?: PatchType): Promise<T>;
  /** Watches one namespace, or all namespaces when `namespace` is undefined. */
  watch(namespace: string | undefined, onEvent: WatchHandler<T>, options?: WatchOptions): Promise<KindWatch>;
}

/** A client for one cluster-scoped kind at one version: the verbs of NamespacedClient without a namespace. */
export interface ClusterClient<T extends ConfigObject> {
  /** The kind, from Sluice's kinds registry. */
  readonly kind: KindInfo;
  /** The apiVersion the client reads and writes, e.g. `gateway.networking.k8s.io/v1`. */
  readonly apiVersion: string;
  readonly namespaced: false;
  list(options?: ListOptions): Promise<KindList<T>>;
  get(name: string): Promise<T>;
  /** Creates the object; returns it as stored. */
  create(obj: T): Promise<T>;
  /** Replaces the object (but not its status); `metadata.resourceVersion` must be the stored one (else 409 Conflict). */
  update(obj: T): Promise<T>;
  /** Patches the object (a merge patch unless `type` says otherwise); returns it as stored. */
  patch(name: string, patch: unknown, type?: PatchType): Promise<T>;
  delete(name: string): Promise<void>;
  /** Replaces the object's status (through the status subresource). */
  updateStatus(obj: T): Promise<T>;
  /** Patches the object's status (through the status subresource). */
  patchStatus(name: string, patch: unknown, type?: PatchType): Promise<T>;
  watch(onEvent: WatchHandler<T>, options?: WatchOptions): Promise<KindWatch>;
}

/** Clients for the Istio kinds, as istio.io/client-go's clientset has them, each at Sluice's preferred version. */
export interface IstioClients {
  virtualServices: NamespacedClient<VirtualService>;
  destinationRules: NamespacedClient<DestinationRule>;
  gateways: NamespacedClient<Gateway>;
  serviceEntries: NamespacedClient<ServiceEntry>;
  sidecars: NamespacedClient<Sidecar>;
  workloadEntries: NamespacedClient<WorkloadEntry>;
  workloadGroups: NamespacedClient<WorkloadGroup>;
  envoyFilters: NamespacedClient<EnvoyFilter>;
  proxyConfigs: NamespacedClient<ConfigObject<ProxyConfigSpec>>;
  authorizationPolicies: NamespacedClient<AuthorizationPolicy>;
  peerAuthentications: NamespacedClient<PeerAuthentication>;
  requestAuthentications: NamespacedClient<RequestAuthentication>;
  telemetries: NamespacedClient<Telemetry>;
  wasmPlugins: NamespacedClient<WasmPlugin>;
  trafficExtensions: NamespacedClient<TrafficExtension>;
}

/** Clients for the Gateway API kinds, as gateway-api's clientset has them, each at Sluice's preferred version. */
export interface GatewayApiClients {
  gatewayClasses: ClusterClient<gatewayapi.GatewayClass>;
  gateways: NamespacedClient<gatewayapi.Gateway>;
  httpRoutes: NamespacedClient<gatewayapi.HTTPRoute>;
  grpcRoutes: NamespacedClient<gatewayapi.GRPCRoute>;
  tcpRoutes: NamespacedClient<gatewayapi.TCPRoute>;
  tlsRoutes: NamespacedClient<gatewayapi.TLSRoute>;
  udpRoutes: NamespacedClient<gatewayapi.UDPRoute>;
  referenceGrants: NamespacedClient<gatewayapi.ReferenceGrant>;
  backendTLSPolicies: NamespacedClient<gatewayapi.BackendTLSPolicy>;
  listenerSets: NamespacedClient<gatewayapi.ListenerSet>;
  xBackends: NamespacedClient<gatewayapi.XBackend>;
  xBackendTrafficPolicies: NamespacedClient<gatewayapi.XBackendTrafficPolicy>;
  /** The inference extension's pools (inference.networking.k8s.io), untyped: Sluice has no schema for them. */
  inferencePools: NamespacedClient<ConfigObject>;
}

/** Clients for every Istio kind, sharing one connection setup from `kubeConfig`. */
export function istioClients(kubeConfig: KubeConfig): IstioClients {
  const client = new KubeClient(kubeConfig, { userAgent: LIBRARY_USER_AGENT });
  const of = <T extends ConfigObject>(kindName: string) =>
    new KindOperations<T>(client, registryKind("istio", kindName)) as NamespacedClient<T>;
  return {
    virtualServices: of("VirtualService"),
    destinationRules: of("DestinationRule"),
    gateways: of("Gateway"),
    serviceEntries: of("ServiceEntry"),
    sidecars: of("Sidecar"),
    workloadEntries: of("WorkloadEntry"),
    workloadGroups: of("WorkloadGroup"),
    envoyFilters: of("EnvoyFilter"),
    proxyConfigs: of("ProxyConfig"),
    authorizationPolicies: of("AuthorizationPolicy"),
    peerAuthentications: of("PeerAuthentication"),
    requestAuthentications: of("RequestAuthentication"),
    telemetries: of("Telemetry"),
    wasmPlugins: of("WasmPlugin"),
    trafficExtensions: of("TrafficExtension"),
  };
}

/** Clients for every Gateway API kind, sharing one connection setup from `kubeConfig`. */
export function gatewayApiClients(kubeConfig: KubeConfig): GatewayApiClients {
  const client = new KubeClient(kubeConfig, { userAgent: LIBRARY_USER_AGENT });
  const of = <T extends ConfigObject>(kindName: string) =>
    new KindOperations<T>(client, registryKind("gateway-api", kindName)) as NamespacedClient<T>;
  return {
    gatewayClasses: clusterClient(new KindOperations(client, registryKind("gateway-api", "GatewayClass"))),
    gateways: of("Gateway"),
    httpRoutes: of("HTTPRoute"),
    grpcRoutes: of("GRPCRoute"),
    tcpRoutes: of("TCPRoute"),
    tlsRoutes: of("TLSRoute"),
    udpRoutes: of("UDPRoute"),
    referenceGrants: of("ReferenceGrant"),
    backendTLSPolicies: of("BackendTLSPolicy"),
    listenerSets: of("ListenerSet"),
    xBackends: of("XBackend"),
    xBackendTrafficPolicies: of("XBackendTrafficPolicy"),
    inferencePools: of("InferencePool"),
  };
}

/**
 * A client for any kind in Sluice's registry (`KINDS`) at a version it serves, e.g.
 * `kindClient(kubeConfig, "networking.istio.io/v1beta1", "VirtualService")` or the Kubernetes
 * built-ins (`"v1", "Service"`). Check `namespaced` to know which of the two it is. `T` is the object
 * type the caller expects; nothing checks it. Throws if the registry does not know the kind at that
 * apiVersion.
 */
export function kindClient<T extends ConfigObject = ConfigObject>(
  kubeConfig: KubeConfig,
  apiVersion: string,
  kindName: string,
): NamespacedClient<T> | ClusterClient<T> {
  const kind = lookupKind(apiVersion, kindName);
  if (!kind) throw new Error(`no kind ${kindName} at ${apiVersion} in Sluice's kinds registry`);
  const operations = new KindOperations<T>(
    new KubeClient(kubeConfig, { userAgent: LIBRARY_USER_AGENT }),
    kind,
    parseApiVersion(apiVersion).version,
  );
  return kind.namespaced ? (operations as NamespacedClient<T>) : clusterClient(operations);
}

function registryKind(family: KindInfo["family"], kindName: string): KindInfo {
  const kind = KINDS.find((k) => k.family === family && k.kind === kindName);
  if (!kind) throw new Error(`no ${family} kind ${kindName} in the kinds registry`);
  return kind;
}

function clusterClient<T extends ConfigObject>(operations: KindOperations<T>): ClusterClient<T> {
  return {
    kind: operations.kind,
    apiVersion: operations.apiVersion,
    namespaced: false,
    list: (options) => operations.list(undefined, options),
    get: (name) => operations.get(undefined, name),
    create: (obj) => operations.create(obj),
    update: (obj) => operations.update(obj),
    patch: (name, patch, type) => operations.patch(undefined, name, patch, type),
    delete: (name) => operations.delete(undefined, name),
    updateStatus: (obj) => operations.updateStatus(obj),
    patchStatus: (name, patch, type) => operations.patchStatus(undefined, name, patch, type),
    watch: (onEvent, options) => operations.watch(undefined, onEvent, options),
  };
}

/** The verbs on one kind at one version; namespace is undefined for cluster-scoped kinds (and "all namespaces"). */
class KindOperations<T extends ConfigObject> {
  readonly apiVersion: string;
  readonly namespaced: boolean;

  constructor(
    private readonly client: KubeClient,
    readonly kind: KindInfo,
    private readonly version = kind.preferredVersion,
  ) {
    this.apiVersion = groupVersion(kind.group, version);
    this.namespaced = kind.namespaced;
  }

  async list(namespace: string | undefined, options: ListOptions = {}): Promise<KindList<T>> {
    const path = this.path(namespace) + queryString({ labelSelector: options.labelSelector });
    const list = (await this.call("list", namespace, undefined, () => this.client.request("GET", path))) as {
      metadata?: { resourceVersion?: string };
      items?: Record<string, unknown>[];
    };
    // Lists of built-in kinds leave apiVersion and kind off their items.
    const items = (list.items ?? []).map((item) => ({ apiVersion: this.apiVersion, kind: this.kind.kind, ...item }));
    return { items: items as T[], resourceVersion: list.metadata?.resourceVersion ?? "" };
  }

  get(namespace: string | undefined, name: string): Promise<T> {
    return this.call("get", namespace, name, () => this.client.request("GET", this.path(namespace, name)));
  }

  create(obj: T): Promise<T> {
    const { namespace, name } = this.located(obj);
    return this.call("create", namespace, name, () => this.client.request("POST", this.path(namespace), obj));
  }

  update(obj: T): Promise<T> {
    const { namespace, name } = this.located(obj);
    return this.call("update", namespace, name, () => this.client.request("PUT", this.path(namespace, name), obj));
  }

  patch(namespace: string | undefined, name: string, patch: unknown, type: PatchType = "merge"): Promise<T> {
    const path = this.path(namespace, name);
    return this.call("patch", namespace, name, () => this.client.patch(path, patch, PATCH_CONTENT_TYPES[type]));
  }

  async delete(namespace: string | undefined, name: string): Promise<void> {
    await this.call("delete", namespace, name, () => this.client.request("DELETE", this.path(namespace, name)));
  }

  updateStatus(obj: T): Promise<T> {
    const { namespace, name } = this.located(obj);
    const path = this.path(namespace, name, "status");
    return this.call("update status of", namespace, name, () => this.client.request("PUT", path, obj));
  }

  patchStatus(namespace: string | undefined, name: string, patch: unknown, type: PatchType = "merge"): Promise<T> {
    const path = this.path(namespace, name, "status");
    return this.call("patch status of", namespace, name, () =>
      this.client.patch(path, patch, PATCH_CONTENT_TYPES[type]),
    );
  }

  async watch(namespace: string | undefined, onEvent: WatchHandler<T>, options: WatchOptions = {}): Promise<KindWatch> {
    const params: Record<string, string> = {};
    if (options.resourceVersion) params.resourceVersion = options.resourceVersion;
    if (options.labelSelector) params.labelSelector = options.labelSelector;
    let stopped = false;
    // An ERROR event (a Status), or a handler that throws, ends the watch with that failure.
    let failure: Error | undefined;
    let abort = () => {};
    const fail = (error: Error) => {
      failure = error;
      abort();
    };
    const open = await this.call<OpenWatch>("watch", namespace, undefined, () =>
      this.client.watch(this.path(namespace), params, (type, object) => {
        if (stopped || failure) return;
        if (type === "ERROR") {
          const status = object as { code?: number; reason?: string; message?: string };
          const error = new KubeApiError(
            status.code ?? 500,
            status.reason ?? "",
            status.message ?? "watch ERROR event",
          );
          fail(this.failure("watch", namespace, undefined, error));
          return;
        }
        if (type !== "ADDED" && type !== "MODIFIED" && type !== "DELETED") return;
        // client-node would swallow what the handler throws; it ends the watch instead.
        try {
          onEvent(type, object as T);
        } catch (err) {
          fail(err instanceof Error ? err : new Error(String(err)));
        }
      }),
    );
    abort = () => open.abort();
    // The handler may have failed or stopped the watch before it could be aborted.
    if (failure || stopped) abort();
    const done = open.ended.then(
      () => {
        if (failure) throw failure;
      },
      (err: unknown) => {
        if (failure) throw failure;
        // stop() aborts the request, which client-node reports as an error.
        if (!stopped) throw this.failure("watch", namespace, undefined, err);
      },
    );
    // Whoever never looks at `done` must not get an unhandled rejection; awaiting it still throws.
    done.catch(() => {});
    return {
      stop: () => {
        stopped = true;
        abort();
      },
      done,
    };
  }

  private path(namespace: string | undefined, name?: string, subresource?: "status"): string {
    return resourcePath({ kind: this.kind, version: this.version, namespace, name, subresource });
  }

  /** Where an object goes: a namespaced object without a namespace goes to "default". */
  private located(obj: T): { namespace: string | undefined; name: string | undefined } {
    return {
      namespace: this.kind.namespaced ? (obj.metadata.namespace ?? "default") : undefined,
      name: obj.metadata.name,
    };
  }

  /** Runs one request; a failure is rethrown with the verb and the object it was about. */
  private async call<R>(
    verb: string,
    namespace: string | undefined,
    name: string | undefined,
    send: () => Promise<unknown>,
  ): Promise<R> {
    try {
      return (await send()) as R;
    } catch (err) {
      throw this.failure(verb, namespace, name, err);
    }
  }

  /**
   * "get VirtualService default/reviews: virtualservices.networking.istio.io "reviews" not found (404 NotFound)".
   * A KubeApiError stays one, with the server's code and reason.
   */
  private failure(verb: string, namespace: string | undefined, name: string | undefined, err: unknown): Error {
    const what = `${verb} ${this.kind.kind} ${describeTarget(this.kind.namespaced, namespace, name)}`.trimEnd();
    if (err instanceof KubeApiError) {
      const status = [err.code, err.reason].filter((part) => part !== "").join(" ");
      return new KubeApiError(err.code, err.reason, `${what}: ${err.message} (${status})`);
    }
    return new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** "default/reviews", "reviews" (cluster-scoped), "in default", "in all namespaces", or "" (a cluster-scoped list). */
function describeTarget(namespaced: boolean, namespace: string | undefined, name: string | undefined): string {
  if (!namespaced) return name ?? "";
  if (name === undefined) return namespace === undefined ? "in all namespaces" : `in ${namespace}`;
  return `${namespace}/${name}`;
}

function queryString(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) query.set(key, value);
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
}
