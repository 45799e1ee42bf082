// The control plane's state from config objects, without a server (config store → service registry →
// push context, as sluiced builds it), and the ConfigDump it would give one proxy. `sluice x translate`
// and the `sluice/xds` library read proxies' config from it.
import { create } from "@bufbuild/protobuf";
import { type admin, core } from "../api/index.ts";
import type { MeshNetworks } from "../config/index.ts";
import { type ConfigObject, lookupKind, type MeshConfig, objectRef, validateObject } from "../config/index.ts";
import { XdsCache } from "../configgen/index.ts";
import { type MeshPush, type NodeType, type ProxyNode, parseProxy, pushFeaturesFromEnv } from "../model/index.ts";
import { storePush, storeRegistry } from "../model/store-push.ts";
import type { ServiceRegistry } from "../registry/index.ts";
import { ConfigStore, describeIssue, MemorySource } from "../sources/index.ts";
import { buildConfigDump, type DumpType } from "./configdump.ts";
import { storeSecrets } from "./generators/secrets.ts";

export interface TranslateState {
  store: ConfigStore;
  registry: ServiceRegistry;
  push: MeshPush;
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
export interface StateInput {
  /** `file:line`, or the object's kind and name. */
  where: string;
  object?: ConfigObject;
  /** Why there is no object (a document that did not decode). */
  error?: string;
  /** A cluster's object: invalid ones are skipped with a warning, as the Kubernetes source skips them. */
  fromCluster?: boolean;
}

export interface StateOptions {
  mesh: MeshConfig;
  domainSuffix: string;
  /** istiod's --networksConfig: the networks' gateways, and the network of endpoints without a label. */
  meshNetworks?: MeshNetworks;
  /** Objects to leave out (e.g. every EnvoyFilter, for the config before patches). */
  exclude?: (object: ConfigObject) => boolean;
}

/** Where an object is, for messages: its kind, namespace and name. */
export function objectWhere(object: ConfigObject): string {
  return `${object.kind} ${objectRef(object)}`;
}

/**
 * The state of `inputs`, taken as a cluster would take them: objects of kinds the control plane does not
 * read (Deployments, ...) are skipped and fields their schema does not know are pruned, each with a
 * warning; any other problem (undecodable or invalid documents) fails the load. A later input's object
 * replaces an earlier one of the same kind and name.
 */
export function loadStateInputs(inputs: readonly StateInput[], options: StateOptions): LoadResult {
  const store = new ConfigStore();
  const memory = new MemorySource(store, "file");
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const input of inputs) {
    const where = input.where;
    if (input.error !== undefined || !input.object) {
      problems.push(`${where}: ${input.error ?? "empty document"}`);
      continue;
    }
    let object = input.object;
    if (options.exclude?.(object)) continue;
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
  const { mesh, domainSuffix, meshNetworks } = options;
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

/** The proxy a translation generates for. */
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

export type TranslateResult =
  | { dump: admin.ConfigDump; warnings: string[]; problems?: undefined }
  | { problems: string[]; dump?: undefined };

/** The ConfigDump the control plane would give the proxy for `inputs`, or the problems of the inputs. */
export function translateInputs(
  inputs: readonly StateInput[],
  proxy: ProxySpec,
  options: StateOptions & { types?: readonly DumpType[] },
): TranslateResult {
  const loaded = loadStateInputs(inputs, options);
  if (!loaded.state) return { problems: loaded.problems };
  const { push, registry, store } = loaded.state;
  const node = translateProxy(proxy, options.mesh, options.domainSuffix);
  const dump = buildConfigDump(
    push,
    node,
    { endpoints: registry, secrets: storeSecrets(store), cache: new XdsCache() },
    { types: options.types },
  );
  return { dump, warnings: loaded.warnings };
}
