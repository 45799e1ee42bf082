// One analysis run as istioctl's file-only analysis does it (pkg/config/analysis/local): objects from
// files, the mesh config and networks as resources, Istio's default ingress gateway resources, every
// selected analyzer, then messages outside the analyzed namespace dropped, sorted and de-duplicated.
import type { ConfigObject, MeshConfig, MeshNetworks } from "../config/index.ts";
import { IGNORED_NAMESPACES } from "../webhooks/inject/policy.ts";
import { AnalysisContext, type Analyzer } from "./analyzer.ts";
import { CLUSTER_SCOPED, K } from "./kinds.ts";
import { type Message, sortedDeduped } from "./message.ts";
import { newResource, type Origin, originNamespace, type Resource, resourceKind } from "./resource.ts";

export const DEFAULT_ISTIO_NAMESPACE = "istio-system";

/**
 * The kinds istioctl never reads from files (kuberesource.DefaultExcludedSchemas): its file source
 * leaves them out, so without a cluster they are in no snapshot and every analyzer that reads one is
 * skipped (analysis.RemoveSkipped).
 */
export const FILE_EXCLUDED_KINDS: ReadonlySet<string> = new Set([K.Service, K.Namespace, K.Node, K.Pod, K.Secret]);

/** The analyzers istioctl skips because they read a kind no source provides. */
export function skippedAnalyzers(analyzers: readonly Analyzer[], unavailable: ReadonlySet<string>): Analyzer[] {
  return analyzers.filter((a) => a.inputs.some((kind) => unavailable.has(kind)));
}

export interface AnalysisInput {
  object: ConfigObject;
  origin?: Origin;
}

export interface AnalysisOptions {
  analyzers: readonly Analyzer[];
  mesh: MeshConfig;
  meshNetworks?: MeshNetworks;
  /** Messages about namespaced resources in other namespaces are dropped; "" analyzes all namespaces. */
  namespace: string;
  /** Given to file objects that name no namespace (istioctl: the selected namespace). */
  defaultNamespace?: string;
  istioNamespace?: string;
  /** Only objects of these kinds are loaded (the Go test loads only the analyzers' inputs); default all. */
  onlyInputKinds?: boolean;
  /** Add the ingress gateway Pod and Service istioctl assumes without a cluster (default true). */
  defaultResources?: boolean;
}

export function runAnalysis(inputs: readonly AnalysisInput[], options: AnalysisOptions): Message[] {
  const istioNamespace = options.istioNamespace ?? DEFAULT_ISTIO_NAMESPACE;
  const wanted = options.onlyInputKinds ? new Set(options.analyzers.flatMap((a) => a.inputs)) : undefined;
  const resources = new Map<string, Resource>();
  const add = (r: Resource) => {
    if (wanted && !wanted.has(r.kind)) return;
    if (IGNORED_NAMESPACES.has(originNamespace(r))) return;
    // A later object with the same kind, namespace and name replaces an earlier one.
    resources.delete(identity(r));
    resources.set(identity(r), r);
  };
  for (const input of inputs) add(newResource(withNamespace(input.object, options.defaultNamespace), input.origin));
  if (options.defaultResources ?? true) {
    for (const object of defaultIngressResources(
      istioNamespace,
      options.mesh.ingressService ?? "istio-ingressgateway",
    )) {
      add(newResource(object));
    }
  }
  add(meshResource(K.MeshConfig, "meshconfig", istioNamespace, options.mesh));
  add(meshResource(K.MeshNetworks, "meshnetworks", istioNamespace, options.meshNetworks ?? {}));

  const all = [...resources.values()];
  const messages: Message[] = [];
  for (const analyzer of options.analyzers) {
    const visible = new Set(analyzer.inputs);
    const ctx = new AnalysisContext(
      all.filter((r) => visible.has(r.kind)),
      istioNamespace,
    );
    analyzer.analyze(ctx);
    messages.push(...ctx.messages);
  }
  return sortedDeduped(messages.filter((m) => inNamespace(m, options.namespace)));
}

function identity(r: Resource): string {
  return `${r.origin.cluster ?? ""}|${r.kind}|${r.namespace}|${r.name}`;
}

function withNamespace(object: ConfigObject, namespace: string | undefined): ConfigObject {
  if (!namespace || object.metadata?.namespace || CLUSTER_SCOPED.has(resourceKind(object))) return object;
  return { ...object, metadata: { ...object.metadata, namespace } };
}

function inNamespace(m: Message, namespace: string): boolean {
  if (!namespace || !m.resource) return true;
  const ns = originNamespace(m.resource);
  return ns === "" || ns === namespace;
}

function meshResource(kind: string, name: string, namespace: string, spec: unknown): Resource {
  const kindName = kind.slice(kind.indexOf("/") + 1);
  return newResource({ apiVersion: "v1", kind: kindName, metadata: { name, namespace }, spec }, {}, kind);
}

/** The ingress gateway Pod and Service istioctl assumes when analyzing files only (local/defaults.go). */
function defaultIngressResources(namespace: string, ingressService: string): ConfigObject[] {
  const port = (name: string, portNumber: number, nodePort: number) => ({
    name,
    nodePort,
    port: portNumber,
    protocol: "TCP",
    targetPort: portNumber,
  });
  return [
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: `${ingressService}-dummypod`, namespace, labels: { istio: "ingressgateway" } },
      spec: { containers: [{ name: "istio-proxy", args: null }] },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: ingressService, namespace },
      spec: {
        ports: [
          port("http2", 80, 31380),
          port("https", 443, 31390),
          port("tcp", 31400, 31400),
          port("tls", 15443, 31447),
        ],
        selector: { istio: "ingressgateway" },
      },
    },
  ];
}
