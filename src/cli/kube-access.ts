// How the CLI reaches a cluster for the proxy commands, as istioctl's kube client does: the pod a
// `name[.namespace]` argument names, the control plane's pods, a port-forward from 127.0.0.1 to a
// pod's port (client-node's PortForward, one WebSocket per accepted connection), a service account
// token from the TokenRequest API and the mesh's CA root from the istio-ca-root-cert ConfigMap.
import { createServer, type Socket } from "node:net";
import { Writable } from "node:stream";
import { KubeConfig, PortForward } from "@kubernetes/client-node";
import { ISTIOCTL_USER_AGENT, KubeApiError, KubeClient } from "../sources/kube/client.ts";

/** A kubeconfig from --kubeconfig, else $KUBECONFIG, ~/.kube/config or in-cluster, in --context if given. */
export function loadCliKubeConfig(kubeconfigPath?: string, context?: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (kubeconfigPath) kubeConfig.loadFromFile(kubeconfigPath);
  else kubeConfig.loadFromDefault();
  if (context) kubeConfig.setCurrentContext(context);
  return kubeConfig;
}

/** The cluster of the global --kubeconfig and --context flags. */
export function clusterAccess(argv: { kubeconfig?: string; context?: string }): KubeAccess {
  return new KubeAccess(loadCliKubeConfig(argv.kubeconfig, argv.context));
}

/** The parts of a Pod the proxy commands read. */
export interface Pod {
  metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { containers?: { name: string }[]; initContainers?: { name: string }[] };
  status?: { phase?: string };
}

export interface PodRef {
  name: string;
  namespace: string;
}

/** istioctl's `pod[.namespace]`: the namespace is what follows the last dot. */
export function parsePodRef(ref: string, defaultNamespace: string): PodRef {
  const dot = ref.lastIndexOf(".");
  return dot > 0
    ? { name: ref.slice(0, dot), namespace: ref.slice(dot + 1) }
    : { name: ref, namespace: defaultNamespace };
}

/** Whether the pod runs Envoy: an istio-proxy container not injected from the proxyless grpc-agent template. */
export function hasEnvoySidecar(pod: Pod): boolean {
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  if (!containers.some((c) => c.name === "istio-proxy")) return false;
  return !injectedTemplates(pod).includes("grpc-agent");
}

/** The templates asked for (inject.istio.io/templates) and applied (sidecar.istio.io/status). */
function injectedTemplates(pod: Pod): string[] {
  const annotations = pod.metadata.annotations ?? {};
  const asked = (annotations["inject.istio.io/templates"] ?? "").split(",").map((t) => t.trim());
  let applied: string[] = [];
  try {
    const status = JSON.parse(annotations["sidecar.istio.io/status"] ?? "{}") as { templates?: unknown };
    if (Array.isArray(status.templates)) applied = status.templates.filter((t) => typeof t === "string");
  } catch {
    // A malformed status annotation names no templates.
  }
  return [...asked, ...applied];
}

/** What client-node's PortForward resolves to (its `ws` typings are not installed). */
interface ForwardSocket {
  on(event: "close", listener: () => void): void;
  close(): void;
}

export class KubeAccess {
  readonly client: KubeClient;

  constructor(private readonly kubeConfig: KubeConfig) {
    // Recorded as istioctl's writes are (its user agent names the field manager).
    this.client = new KubeClient(kubeConfig, { userAgent: ISTIOCTL_USER_AGENT });
  }

  /** The kubeconfig's current context (--context when given) and its API server's address. */
  currentContext(): { name: string; server: string } {
    return { name: this.kubeConfig.getCurrentContext(), server: this.kubeConfig.getCurrentCluster()?.server ?? "" };
  }

  /** -n if given, else the kubeconfig context's namespace, else `default` (istioctl's NamespaceOrDefault). */
  namespaceOrDefault(namespace?: string): string {
    if (namespace) return namespace;
    return this.kubeConfig.getContextObject(this.kubeConfig.getCurrentContext())?.namespace || "default";
  }

  /** The pod `ref` (`name[.namespace]`) names; a one-line error when there is none. */
  async pod(ref: string, defaultNamespace: string): Promise<Pod> {
    const { name, namespace } = parsePodRef(ref, defaultNamespace);
    try {
      const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;
      return (await this.client.request("GET", path)) as Pod;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404)
        throw new Error(`pod ${name} not found in namespace ${namespace}`);
      throw err;
    }
  }

  /** The namespace's pods `selector` (a labelSelector query) selects, in the API server's order. */
  async podsForSelector(namespace: string, selector: string): Promise<Pod[]> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods?labelSelector=${encodeURIComponent(selector)}`;
    return ((await this.client.request("GET", path)) as { items?: Pod[] }).items ?? [];
  }

  /** The running control plane pods (app=istiod, and istio.io/rev=<revision> when one is given). */
  async controlPlanePods(istioNamespace: string, revision?: string): Promise<Pod[]> {
    const selector = revision ? `app=istiod,istio.io/rev=${revision}` : "app=istiod";
    const running = (await this.podsForSelector(istioNamespace, selector)).filter((p) => p.status?.phase === "Running");
    if (running.length === 0) throw new Error(`no running Istio pods in "${istioNamespace}"`);
    return running;
  }

  /** A token of the service account for `audiences`, from the TokenRequest API (istioctl's CreatePerRPCCredentials). */
  async serviceAccountToken(
    namespace: string,
    serviceAccount: string,
    audiences: string[],
    expirationSeconds: number,
  ): Promise<string> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`;
    const body = {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { audiences, expirationSeconds },
    };
    let answer: { status?: { token?: string } };
    try {
      answer = (await this.client.request("POST", path, body)) as typeof answer;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(`failed to create a token for "${serviceAccount}.${namespace}": ${why}`);
    }
    const token = answer.status?.token;
    if (!token) throw new Error(`the TokenRequest for "${serviceAccount}.${namespace}" returned no status.token`);
    return token;
  }

  /** The mesh's CA root: root-cert.pem of the istio-ca-root-cert ConfigMap in the control plane's namespace. */
  async caRoot(istioNamespace: string): Promise<string> {
    const path = `/api/v1/namespaces/${encodeURIComponent(istioNamespace)}/configmaps/istio-ca-root-cert`;
    let configMap: { data?: Record<string, string> };
    try {
      configMap = (await this.client.request("GET", path)) as typeof configMap;
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) {
        throw new Error(
          `ConfigMap ${istioNamespace}/istio-ca-root-cert not found: no CA root to verify the control plane`,
        );
      }
      throw err;
    }
    const root = configMap.data?.["root-cert.pem"];
    if (!root) throw new Error(`ConfigMap ${istioNamespace}/istio-ca-root-cert has no data["root-cert.pem"]`);
    return root;
  }

  /**
   * Runs `work` with `pod`'s `port` forwarded to 127.0.0.1:<address's port>, and closes the
   * forward when it settles. A failure of the forward itself is what `work`'s error reports.
   */
  async withPortForward<T>(pod: PodRef, port: number, work: (address: string) => Promise<T>): Promise<T> {
    const forward = new PortForward(this.kubeConfig);
    const sockets = new Set<Socket>();
    let failure: string | undefined;
    const server = createServer((socket) => {
      sockets.add(socket);
      let stream: ForwardSocket | undefined;
      socket.on("close", () => {
        sockets.delete(socket);
        stream?.close();
      });
      socket.on("error", () => socket.destroy());
      // The API server reports a failed forward (nothing listening on the port) on the error stream.
      const errors = new Writable({
        write(chunk: Buffer, _encoding, done) {
          // The stream's first message is only its port number, which client-node strips to nothing.
          if (chunk.length > 0) {
            failure = chunk.toString("utf8").trim();
            socket.destroy();
          }
          done();
        },
      });
      forward.portForward(pod.namespace, pod.name, [port], socket, errors, socket).then(
        (opened) => {
          stream = opened as ForwardSocket;
          if (socket.destroyed) stream.close();
          // client-node leaves the local end open when the pod's end closes.
          else stream.on("close", () => socket.end());
        },
        (err: unknown) => {
          // ws rejects with an ErrorEvent ("Unexpected server response: 404"), not an Error.
          const message = (err as { message?: unknown } | undefined)?.message;
          failure = typeof message === "string" ? message : String(err);
          socket.destroy();
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", resolve);
    });
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("port-forward: no local TCP address");
    try {
      return await work(`127.0.0.1:${address.port}`);
    } catch (err) {
      if (failure === undefined) throw err;
      throw new Error(`port-forward to pod ${pod.name}.${pod.namespace} port ${port} failed: ${failure}`);
    } finally {
      // Each socket's close ends its WebSocket.
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  }
}
