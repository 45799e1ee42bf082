// `sluice/xds`: a discovery server to embed, serving your own resources and generators over ADS (SotW
// and delta), as go-control-plane gives Go users; and `translate`, the Envoy config Sluice would send
// one proxy for a set of config objects, as an admin ConfigDump.
import type { Logger } from "pino";
import type { ConfigObject, MeshConfig, MeshNetworks } from "../config/index.ts";
import { DEFAULT_MESH_CONFIG } from "../config/index.ts";
import { type NodeType, newPushContext, parseAnyProxy, pushRequest } from "../model/index.ts";
import type { DumpType } from "../xds/index.ts";
import {
  type Generator,
  GeneratorRegistry,
  objectWhere,
  type ResourceInput,
  SnapshotCache,
  type TranslateResult,
  translateInputs,
} from "../xds/index.ts";
import type { ConnectionStatus } from "../xds/server/index.ts";
import { type BoundPorts, type ListenOptions, XdsServer } from "../xds/server/index.ts";

export { create, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
export * as envoy from "../api/index.ts";
export type { ObjectKey, ObjectKeySet } from "../config/index.ts";
export type {
  IstioVersion,
  Locality,
  NodeMetadata,
  NodeType,
  ProxyNode,
  PushContext,
  PushRequest,
  PushStatus,
  TriggerReason,
} from "../model/index.ts";
export type {
  DeltaGenerateResult,
  GenerateResult,
  Generator,
  LogDetails,
  ResourceError,
  ResourceInput,
  TranslateResult,
  WatchedResource,
  XdsResource,
} from "../xds/index.ts";
export { configDumpJson, DUMP_TYPES, type DumpType, TypeUrl } from "../xds/index.ts";
export type {
  AckInfo,
  BoundPorts,
  ConnectionStatus,
  ListenOptions,
  NackInfo,
  SentInfo,
  TlsFiles,
  TlsProviders,
  TypeSyncStatus,
} from "../xds/server/index.ts";

export interface DiscoveryServerOptions {
  /** Where the server logs connections and refusals (pino); default silent. */
  log?: Logger;
  /** Sent as `control_plane.identifier` in every response; default istiod's JSON form. */
  controlPlaneId?: string;
}

/**
 * An ADS server (state of the world and delta, on one port) that serves what you give it: resources set
 * with `setResources`, for every node or for one node id, and anything your own generators build.
 * Proxies may present any node id; an Istio-style one (`sidecar~10.0.0.1~pod.ns~ns.svc.cluster.local`)
 * is read as istiod reads it. Every change is pushed to every connected proxy at once.
 */
export class DiscoveryServer {
  readonly #snapshots = new SnapshotCache();
  readonly #generators = new GeneratorRegistry();
  readonly #server: XdsServer;

  constructor(options: DiscoveryServerOptions = {}) {
    // The fallback for every type URL no generator of yours is registered for.
    this.#generators.register("api", this.#snapshots);
    this.#server = new XdsServer({
      generators: this.#generators,
      initialPush: newPushContext(undefined),
      parseNode: parseAnyProxy,
      log: options.log,
      controlPlaneId: options.controlPlaneId,
    });
  }

  /**
   * Serves `resources` to the node with id `nodeId`, or to every node that has no set of its own, and
   * pushes them. The set replaces the last one whole. Throws, changing nothing, on a resource of a type
   * Sluice cannot encode, a JSON form that does not read, one without a name, or two of a type with
   * one name.
   */
  setResources(resources: readonly ResourceInput[], nodeId?: string): void {
    this.#snapshots.set(resources, nodeId);
    this.push();
  }

  /** Serves the node the resources set for every node again, and pushes them. */
  clearResources(nodeId: string): void {
    this.#snapshots.forget(nodeId);
    this.push();
  }

  /**
   * Serves the resources of type URL `typeUrl` from your generator, for every proxy, instead of the
   * resources set. Istio's keys work too: `sidecar/<typeURL>`, `router/<typeURL>`, or a GENERATOR
   * metadata value.
   */
  register(typeUrl: string, generator: Generator): void {
    this.#generators.register(typeUrl, generator);
  }

  /** Asks every generator again for every connected proxy (call it when your generators' inputs change). */
  push(): void {
    this.#server.push(pushRequest({ full: true, push: newPushContext(undefined), reasons: ["config"] }));
  }

  /** Resolves when every push so far has been written to the proxies. */
  pushesDone(): Promise<void> {
    return this.#server.pushesDone();
  }

  /** Listens on `grpcAddr` (plaintext) and/or `secureGrpcAddr` (TLS); port 0 picks a free port. */
  listen(options: ListenOptions): Promise<BoundPorts> {
    return this.#server.listen(options);
  }

  /** Each connected proxy: its node, protocol, and per type what was sent, acknowledged and refused. */
  connections(): ConnectionStatus[] {
    return this.#server.syncStatus();
  }

  /** Ends every stream (proxies reconnect elsewhere) and stops listening; cuts what is left after `graceMs`. */
  close(graceMs?: number): Promise<void> {
    return this.#server.close(graceMs);
  }
}

/** The proxy to translate for, as its agent would announce it. */
export interface TranslateProxy {
  /** Default `sidecar`. */
  type?: NodeType;
  ip: string;
  namespace: string;
  labels?: Record<string, string>;
  /** `<pod>.<namespace>`; default `<type>.<namespace>`. */
  id?: string;
  /** ISTIO_META_NETWORK. */
  network?: string;
}

export interface TranslateOptions {
  /** Default Istio's default MeshConfig. */
  meshConfig?: MeshConfig;
  /** istiod's --networksConfig. */
  meshNetworks?: MeshNetworks;
  /** Default `cluster.local`. */
  domainSuffix?: string;
  /** Default CDS, EDS, LDS, RDS and SDS. */
  types?: readonly DumpType[];
}

/**
 * The Envoy config Sluice would send `proxy` if `objects` (Istio, Gateway API and Kubernetes objects:
 * Services, EndpointSlices, Pods, ...) were the cluster, as Envoy's admin ConfigDump. Kinds the control
 * plane does not read are skipped and unknown fields pruned, each with a warning; an invalid object
 * fails the translation with a problem naming it and its field.
 */
export function translate(
  objects: readonly ConfigObject[],
  proxy: TranslateProxy,
  options: TranslateOptions = {},
): TranslateResult {
  const type = proxy.type ?? "sidecar";
  const spec = {
    type,
    ip: proxy.ip,
    namespace: proxy.namespace,
    labels: proxy.labels ?? {},
    id: proxy.id ?? `${type}.${proxy.namespace}`,
    ...(proxy.network ? { network: proxy.network } : {}),
  };
  // Copies: the store freezes what it holds, and the caller's objects stay theirs.
  const inputs = objects.map((object) => ({ where: objectWhere(object), object: structuredClone(object) }));
  return translateInputs(inputs, spec, {
    mesh: options.meshConfig ?? (DEFAULT_MESH_CONFIG as MeshConfig),
    meshNetworks: options.meshNetworks,
    domainSuffix: options.domainSuffix ?? "cluster.local",
    types: options.types,
  });
}
