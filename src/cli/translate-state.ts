// The control plane's state from config files, without a server: config store → service registry →
// push context, as sluiced builds it. `sluice x translate` reads proxies' config from it.
import { create } from "@bufbuild/protobuf";
import { type admin, core } from "../api/index.ts";
import { readConfigPaths } from "../config/decode.ts";
import { type ConfigObject, lookupKind, type MeshConfig, validateObject } from "../config/index.ts";
import type { MeshNetworks } from "../config/mesh-networks.ts";
import { type NodeType, type ProxyNode, type PushContext, parseProxy } from "../model/index.ts";
import type { ServiceRegistry } from "../registry/index.ts";
import { ConfigStore, MemorySource } from "../sources/index.ts";
import { describeIssue } from "../sources/store-admit.ts";
import {
  buildConfigDump,
  type DumpType,
  pushFeaturesFromEnv,
  storePush,
  storeRegistry,
  storeSecrets,
} from "../xds/index.ts";
import { cliLog } from "./log.ts";

export interface TranslateState {
  store: ConfigStore;
  registry: ServiceRegistry;
  push: PushContext;
}

const UNKNOWN_FIELD = 'unknown field "';

/** `spec.http[0].name` as its keys and indexes. */
function pathSegments(path: string): string[] {
  return [...path.matchAll(/[^.[\]]+/g)].map((m) => m[0]);
}

/** A copy of `obj` without the field at `path`. */
function withoutField(obj: ConfigObject, path: string): ConfigObject {
  const copy = structuredClone(obj);
  const segments = pathSegments(path);
  const last = segments.pop();
  let node: unknown = copy;
  for (const segment of segments) node = (node as Record<string, unknown> | undefined)?.[segment];
  if (last !== undefined && node !== null && typeof node === "object") delete (node as Record<string, unknown>)[last];
  return copy;
}

export type LoadResult =
  | { state: TranslateState; warnings: string[]; problems?: undefined }
  | { problems: string[]; state?: undefined };

/** One object to load, and where it came from for messages. */
interface StateInput {
  where: string;
  object?: ConfigObject;
  error?: string;
  /** A cluster's object: invalid ones are skipped with a warning, as the Kubernetes source skips them. */
  fromCluster?: boolean;
}

/**
 * The state of `paths` (files or directories), read as a cluster would take them: objects of kinds the
 * control plane does not read (Deployments, ...) are skipped and fields their schema does not know are
 * pruned, each with a warning; any other problem (undecodable or invalid documents) fails the load.
 * `clusterObjects` (a live cluster's, listed) load first, so that a file's object replaces the cluster's.
 */
export function loadState(
  paths: string[],
  mesh: MeshConfig,
  domainSuffix: string,
  /** Objects to leave out (e.g. every EnvoyFilter, for the config before patches). */
  exclude: (object: ConfigObject) => boolean = () => false,
  clusterObjects: readonly ConfigObject[] = [],
  /** istiod's --networksConfig: the networks' gateways, and the network of endpoints without a label. */
  meshNetworks?: MeshNetworks,
): LoadResult {
  const store = new ConfigStore();
  const memory = new MemorySource(store, "file");
  const problems: string[] = [];
  const warnings: string[] = [];
  const documents = readConfigPaths(paths);
  if (paths.length > 0) {
    const files = [...new Set(documents.map((d) => d.position.file))];
    cliLog("default").debug({ files, documents: documents.length }, "read config files");
  }
  const inputs: StateInput[] = [
    ...clusterObjects.map((object) => ({
      where: `${object.kind} ${object.metadata.namespace ?? ""}/${object.metadata.name ?? ""} (cluster)`,
      object,
      fromCluster: true,
    })),
    ...documents.map((doc) => ({
      where: `${doc.position.file}:${doc.position.line}`,
      object: doc.object,
      error: doc.error ?? (doc.object ? undefined : "empty document"),
    })),
  ];
  for (const input of inputs) {
    const where = input.where;
    if (input.error !== undefined || !input.object) {
      problems.push(`${where}: ${input.error}`);
      continue;
    }
    let object = input.object;
    if (exclude(object)) continue;
    if (!lookupKind(object.apiVersion, object.kind)) {
      warnings.push(`${where}: ${object.apiVersion} ${object.kind} skipped: not a kind the control plane reads`);
      continue;
    }
    for (const issue of validateObject(object).errors) {
      if (!issue.message.startsWith(UNKNOWN_FIELD)) continue;
      warnings.push(`${where}: ${issue.path}: unknown field pruned`);
      object = withoutField(object, issue.path);
    }
    const errors = memory.apply(object).errors.map((issue) => `${where}: ${describeIssue(issue)}`);
    if (input.fromCluster) warnings.push(...errors.map((e) => `${e} (skipped)`));
    else problems.push(...errors);
  }
  if (problems.length > 0) return { problems };
  const registry = storeRegistry(store, mesh, domainSuffix, { meshNetworks });
  return {
    state: {
      store,
      registry,
      push: storePush(store, registry, mesh, domainSuffix, undefined, pushFeaturesFromEnv(process.env)),
    },
    warnings,
  };
}

/** The proxy `sluice x translate` generates for. */
export interface ProxySpec {
  type: NodeType;
  ip: string;
  namespace: string;
  labels: Record<string, string>;
  /** `<pod>.<namespace>`. */
  id: string;
  /** ISTIO_META_NETWORK. */
  network?: string;
}

/**
 * The proxy as its agent would announce it, in istiod's default cluster. It counts as authenticated
 * as the namespace's `default` service account, so that credentials its Gateways name are served.
 */
export function translateProxy(spec: ProxySpec, mesh: MeshConfig, domainSuffix: string): ProxyNode {
  const parsed = parseProxy(
    create(core.NodeSchema, {
      id: `${spec.type}~${spec.ip}~${spec.id}~${spec.namespace}.svc.${domainSuffix}`,
      metadata: {
        NAMESPACE: spec.namespace,
        LABELS: spec.labels,
        CLUSTER_ID: "Kubernetes",
        ...(spec.network ? { NETWORK: spec.network } : {}),
      },
      userAgentName: "sluice",
    }),
  );
  if (!parsed.proxy) throw new Error(parsed.error);
  const trustDomain = mesh.trustDomain ?? "cluster.local";
  return { ...parsed.proxy, verifiedIdentities: [`spiffe://${trustDomain}/ns/${spec.namespace}/sa/default`] };
}

/** The ConfigDump the control plane would give the proxy for `paths`, or the problems of the inputs. */
export function translate(
  paths: string[],
  proxy: ProxySpec,
  options: { mesh: MeshConfig; meshNetworks?: MeshNetworks; domainSuffix: string; types?: readonly DumpType[] },
): { dump: admin.ConfigDump; warnings: string[]; problems?: undefined } | { problems: string[]; dump?: undefined } {
  const loaded = loadState(paths, options.mesh, options.domainSuffix, undefined, [], options.meshNetworks);
  if (!loaded.state) return { problems: loaded.problems };
  const { push, registry, store } = loaded.state;
  const node = translateProxy(proxy, options.mesh, options.domainSuffix);
  const dump = buildConfigDump(
    push,
    node,
    { endpoints: registry, secrets: storeSecrets(store) },
    { types: options.types },
  );
  return { dump, warnings: loaded.warnings };
}
