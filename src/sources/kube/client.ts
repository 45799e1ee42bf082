// The transport to the Kubernetes API, all of it from @kubernetes/client-node: KubeConfig for the
// cluster address and credentials (kubeconfig file or in-cluster service account), its request
// plumbing for plain JSON requests, and its Watch class for streaming watches. Objects stay raw JSON
// (client-node's typed API classes would turn timestamps into Dates and drop unknown fields, which
// validation needs to see).
import { existsSync } from "node:fs";
import { Agent as HttpAgent } from "node:http";
import { type AgentOptions, Agent as HttpsAgent } from "node:https";
import { HttpMethod, IsomorphicFetchHttpLibrary, KubeConfig, RequestContext, Watch } from "@kubernetes/client-node";
import { SLUICE_VERSION } from "../../util/version.ts";

/** Where a pod's ServiceAccount token, CA and namespace are mounted (client-go's in-cluster config). */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * Whether this process runs in a pod, as client-go's InClusterConfig decides: KUBERNETES_SERVICE_HOST
 * and KUBERNETES_SERVICE_PORT set and the ServiceAccount token mounted.
 */
export function inCluster(env: NodeJS.ProcessEnv = process.env, root = ""): boolean {
  return (
    Boolean(env.KUBERNETES_SERVICE_HOST) &&
    Boolean(env.KUBERNETES_SERVICE_PORT) &&
    existsSync(`${root}${SERVICE_ACCOUNT_DIR}/token`)
  );
}

/**
 * KubeConfig from a kubeconfig file (`--kubeconfig`), or the in-cluster ServiceAccount when none is
 * given: the API server at KUBERNETES_SERVICE_HOST:PORT, its CA and the token (re-read as kubelet
 * rotates it) from SERVICE_ACCOUNT_DIR (under `root`, a directory tests stand in for "/").
 */
export function loadKubeConfig(kubeconfigPath?: string, root = ""): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (kubeconfigPath) kubeConfig.loadFromFile(kubeconfigPath);
  else kubeConfig.loadFromCluster(root);
  return kubeConfig;
}

/** A non-2xx answer of the API server, with the Status object's reason ("NotFound", "Conflict", ...). */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export type WatchEventHandler = (type: string, object: Record<string, unknown>) => void;

/** One open watch: `ended` settles when the stream ends (resolves) or fails (rejects). */
export interface OpenWatch {
  ended: Promise<void>;
  abort(): void;
}

const IDLE_CONNECTION_MS = 60_000;

/** What of an agent's options names the connection it opens; equal options, the same connections. */
const CONNECTION_OPTIONS = ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername"] as const;

function sameConnectionOptions(a: AgentOptions, b: AgentOptions): boolean {
  return CONNECTION_OPTIONS.every((k) => {
    const x = a[k];
    const y = b[k];
    return x === y || (Buffer.isBuffer(x) && Buffer.isBuffer(y) && x.equals(y));
  });
}

/**
 * client-node makes a new agent for every request, so every request opened a connection of its own
 * (a TLS handshake, 5-10 ms of CPU, for each lease renewal and status write). Requests go through one
 * keep-alive agent instead, made again only when the options it was made with change (a client
 * certificate rotated). Agents through a proxy are left as they are.
 */
class KeepAliveAgents {
  #agent: HttpAgent | HttpsAgent | undefined;

  reuse(made: HttpAgent | HttpsAgent | undefined): HttpAgent | HttpsAgent | undefined {
    if (made === undefined || (made.constructor !== HttpsAgent && made.constructor !== HttpAgent)) return made;
    const options = (made as HttpsAgent).options;
    const held = this.#agent;
    if (held && held.constructor === made.constructor && sameConnectionOptions((held as HttpsAgent).options, options)) {
      return held;
    }
    held?.destroy();
    // An idle connection is closed before the API server's 90 s idle timeout would close it under a request.
    const picked: AgentOptions = { keepAlive: true, timeout: IDLE_CONNECTION_MS };
    for (const k of CONNECTION_OPTIONS) if (options[k] !== undefined) Object.assign(picked, { [k]: options[k] });
    this.#agent = made.constructor === HttpsAgent ? new HttpsAgent(picked) : new HttpAgent(picked);
    return this.#agent;
  }
}

/**
 * A User-Agent as Istio's programs send (pkg/kube IstioUserAgent: `<command>/<version>`), with
 * Sluice named in a comment. The API server records a write that names no `fieldManager` in
 * managedFields under the part before the first "/" (apiserver's prefixFromUserAgent), so the command
 * is the field manager of every create, update and non-apply patch.
 */
export function istioUserAgent(command: string): string {
  return `${command}/${SLUICE_VERSION} (sluice)`;
}

/**
 * sluiced's: istiod's command in Istio's image is pilot-discovery, and istiod names no field
 * manager but for its server-side applies, so its writes are recorded under `pilot-discovery`.
 */
export const PILOT_DISCOVERY_USER_AGENT = istioUserAgent("pilot-discovery");

/** The CLI's, as istioctl's: its writes are recorded under `istioctl`. */
export const ISTIOCTL_USER_AGENT = istioUserAgent("istioctl");

export interface KubeClientOptions {
  /**
   * The User-Agent of every request and watch; default sluiced's (PILOT_DISCOVERY_USER_AGENT). Its
   * command (before the first "/") is the field manager of the writes that name none.
   */
  userAgent?: string;
}

export class KubeClient {
  private readonly http = new IsomorphicFetchHttpLibrary();
  private readonly agents = new KeepAliveAgents();
  private readonly watcher: Watch;
  readonly userAgent: string;

  constructor(
    private readonly kubeConfig: KubeConfig,
    options: KubeClientOptions = {},
  ) {
    this.userAgent = options.userAgent ?? PILOT_DISCOVERY_USER_AGENT;
    this.watcher = new Watch(withUserAgent(kubeConfig, this.userAgent));
  }

  /** Sends one JSON request; throws KubeApiError on a non-2xx answer. */
  request(
    method: "GET" | "PUT" | "POST" | "DELETE",
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<unknown> {
    return this.send(method, path, body, "application/json", signal);
  }

  /** Sends a PATCH whose body is of `contentType` (merge or JSON patch); throws KubeApiError on a non-2xx answer. */
  patch(path: string, patch: unknown, contentType: string): Promise<unknown> {
    return this.send("PATCH", path, patch, contentType);
  }

  /**
   * Sends a GET and returns the answer's text: a pod's log, or another representation than the
   * object's JSON (`accept`: a server-side Table). Throws KubeApiError on a non-2xx answer.
   */
  getText(path: string, accept: string, signal?: AbortSignal): Promise<string> {
    return this.exchange("GET", path, undefined, "", accept, signal);
  }

  private async send(
    method: "GET" | "PUT" | "POST" | "DELETE" | "PATCH",
    path: string,
    body: unknown,
    contentType: string,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const text = await this.exchange(method, path, body, contentType, "application/json", signal);
    return text === "" ? undefined : JSON.parse(text);
  }

  private async exchange(
    method: "GET" | "PUT" | "POST" | "DELETE" | "PATCH",
    path: string,
    body: unknown,
    contentType: string,
    accept: string,
    signal?: AbortSignal,
  ): Promise<string> {
    const server = this.kubeConfig.getCurrentCluster()?.server;
    if (!server) throw new Error("kubeconfig has no current cluster");
    const context = new RequestContext(server + path, HttpMethod[method]);
    context.setHeaderParam("Accept", accept);
    context.setHeaderParam("User-Agent", this.userAgent);
    if (body !== undefined) {
      context.setHeaderParam("Content-Type", contentType);
      context.setBody(JSON.stringify(body));
    }
    if (signal) context.setSignal(signal);
    await this.kubeConfig.applySecurityAuthentication(context);
    const agent = this.agents.reuse(context.getAgent());
    if (agent) context.setAgent(agent);
    const response = await this.http.send(context).toPromise();
    const text = await response.body.text();
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299) {
      // Usually a Status object; not always JSON: a path no API group serves answers "404 page not found".
      let status: { reason?: string; message?: string } = {};
      try {
        status = (text === "" ? {} : JSON.parse(text)) ?? {};
      } catch {
        status = { message: text.trim() || undefined };
      }
      throw new KubeApiError(
        response.httpStatusCode,
        status.reason ?? "Unknown",
        status.message ?? `HTTP ${response.httpStatusCode} from ${method} ${path}`,
      );
    }
    return text;
  }

  /**
   * Opens a watch (client-node adds watch=true). Events go to `onEvent` until the stream ends. A
   * non-200 answer fails `ended` with KubeApiError; an idle stream is closed by client-node after
   * its inactivity timeout, which ends the watch normally.
   */
  async watch(
    path: string,
    params: Record<string, string | number | boolean>,
    onEvent: WatchEventHandler,
  ): Promise<OpenWatch> {
    let settle: (err: unknown) => void = () => {};
    const ended = new Promise<void>((resolve, reject) => {
      settle = (err) => {
        const failure = err as { statusCode?: number; name?: string; message?: string } | null | undefined;
        if (!failure || failure.name === "TimeoutError") resolve();
        else if (failure.statusCode)
          reject(new KubeApiError(failure.statusCode, "", failure.message ?? "watch failed"));
        else reject(err);
      };
    });
    const controller = await this.watcher.watch(path, params, onEvent, (err: unknown) => settle(err));
    return { ended, abort: () => controller.abort() };
  }
}

/**
 * The kubeconfig as client-node's Watch reads it (its cluster, and the fetch options of a request),
 * with `userAgent` on each watch request: Watch takes no headers of its own.
 */
function withUserAgent(kubeConfig: KubeConfig, userAgent: string): KubeConfig {
  const config = Object.create(kubeConfig) as KubeConfig;
  config.applyToFetchOptions = async (options) => {
    const init = await kubeConfig.applyToFetchOptions(options);
    (init.headers as { set(name: string, value: string): void }).set("User-Agent", userAgent);
    return init;
  };
  return config;
}
