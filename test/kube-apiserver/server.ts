// A small in-process Kubernetes API server for tests and demos. It speaks the real HTTP protocol for
// the registry's kinds: discovery (/api, /apis, group versions), LIST with the collection's
// resourceVersion, WATCH as chunked newline-delimited JSON events (ADDED, MODIFIED, DELETED, BOOKMARK,
// ERROR) resumable from a resourceVersion, 410 Expired once that version is compacted away, and
// create/update/patch (merge or JSON patch)/delete on objects and their status subresource. Test
// controls drop watches and compact the history, the two failures a client must survive. For the CLI's proxy
// commands it also issues service account tokens (TokenRequest), reviews them (TokenReview) and
// forwards pod ports (portforward.ts) to 127.0.0.1 ports the test registers.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { KubeConfig } from "@kubernetes/client-node";
import { type ConfigObject, KINDS, type KindInfo, parseApiVersion } from "../../src/config/index.ts";
import { type LabelSelector, parseLabelSelector, selectorMatches } from "../../src/sources/kube/labels.ts";
import { groupVersion, type ResourceLocation } from "../../src/sources/kube/paths.ts";
import { acceptPortForward, rejectUpgrade } from "../portforward/protocol.ts";
import { ApiError, type Change, ObjectStore } from "./store.ts";

export interface KubeTestServerOptions {
  /** Kinds served from the start (others answer 404 until installed); default every registry kind. */
  kinds?: readonly KindInfo[];
  /** How many changes are kept for resuming watches; older resourceVersions get 410. */
  historyLimit?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

/** A token the ServiceAccount token subresource issued. */
export interface IssuedToken {
  token: string;
  namespace: string;
  serviceAccount: string;
  audiences: string[];
  expirationSeconds: number;
}

// The API server's own audience, a TokenRequest's default.
const API_SERVER_AUDIENCE = "https://kubernetes.default.svc";
const TOKEN_REVIEW_PATH = "/apis/authentication.k8s.io/v1/tokenreviews";
const PORT_FORWARD_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/portforward$/;

interface OpenWatch {
  kind: KindInfo;
  response: ServerResponse;
  bookmarks: boolean;
}

type ParsedPath =
  | { type: "api-versions" }
  | { type: "api-groups" }
  | { type: "resource-list"; group: string; version: string }
  | { type: "resource"; at: ResourceLocation }
  | { type: "token-request"; at: ResourceLocation };

export class KubeTestServer {
  /** Every request received, oldest first, for tests that check what a client asked. */
  readonly requests: RecordedRequest[] = [];
  /** Every token issued, oldest first. */
  readonly issuedTokens: IssuedToken[] = [];
  /** The token of every TokenReview asked for, oldest first: who checked a token reaches it here. */
  readonly reviewedTokens: string[] = [];
  /** Port-forward targets: "<namespace>/<pod>:<port>" → a 127.0.0.1 port. */
  private readonly forwards = new Map<string, number>();
  /** Upgraded connections, which the HTTP server no longer tracks. */
  private readonly upgraded = new Set<Duplex>();
  private readonly store: ObjectStore;
  private readonly installed = new Set<KindInfo>();
  private readonly watches = new Set<OpenWatch>();
  /** How many of the next requests answer 500, to exercise a client's retries. */
  private failuresToInject = 0;

  private constructor(
    private readonly http: Server,
    readonly url: string,
    options: KubeTestServerOptions,
  ) {
    this.store = new ObjectStore(options.historyLimit ?? 1000);
    for (const kind of options.kinds ?? KINDS) this.installed.add(kind);
  }

  /** Starts a server on 127.0.0.1 and a free port. */
  static async start(options: KubeTestServerOptions = {}): Promise<KubeTestServer> {
    const http = createServer();
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    const server = new KubeTestServer(http, `http://127.0.0.1:${port}`, options);
    http.on("request", (req, res) => server.handle(req, res));
    http.on("upgrade", (req, socket, head) => server.upgrade(req, socket, head));
    return server;
  }

  /** A client-node KubeConfig that points at this server (plain HTTP, no credentials). */
  kubeConfig(): KubeConfig {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: "test", server: this.url, skipTLSVerify: true }],
      users: [{ name: "test" }],
      contexts: [{ name: "test", cluster: "test", user: "test" }],
      currentContext: "test",
    });
    return kubeConfig;
  }

  /** Writes a kubeconfig file for this server (context `test`), for programs run with --kubeconfig. */
  writeKubeconfig(path: string): void {
    writeFileSync(path, this.kubeConfig().exportConfig());
  }

  /** Port-forwards to the pod's `podPort` reach 127.0.0.1:`targetPort`; others find nothing listening. */
  forwardPodPort(pod: { namespace: string; name: string }, podPort: number, targetPort: number): void {
    this.forwards.set(`${pod.namespace}/${pod.name}:${podPort}`, targetPort);
  }

  get resourceVersion(): number {
    return this.store.resourceVersion;
  }

  /** Starts serving a kind, as installing its CRD does. */
  installKind(kind: KindInfo): void {
    this.installed.add(kind);
  }

  /** Stops serving a kind, as deleting its CRD does: its objects are deleted and its watches end. */
  uninstallKind(kind: KindInfo): void {
    for (const obj of this.store.list(kind)) {
      this.store.delete(kind, { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" });
    }
    this.installed.delete(kind);
    for (const watch of this.watches) if (watch.kind === kind) watch.response.end();
  }

  /** The next `count` requests fail with 500 InternalError. */
  failRequests(count: number): void {
    this.failuresToInject = count;
  }

  create(obj: ConfigObject): ConfigObject {
    return this.store.create(this.kindOf(obj), obj);
  }

  update(obj: ConfigObject): ConfigObject {
    return this.store.update(this.kindOf(obj), obj, "main");
  }

  delete(obj: ConfigObject): ConfigObject {
    const kind = this.kindOf(obj);
    return this.store.delete(kind, { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" });
  }

  get(obj: ConfigObject): ConfigObject {
    const kind = this.kindOf(obj);
    return this.store.get(kind, { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" });
  }

  /** Watches open right now, of one kind or of all. */
  openWatches(kind?: KindInfo): number {
    return [...this.watches].filter((w) => kind === undefined || w.kind === kind).length;
  }

  /** Cuts every open watch connection, as a network failure or an API server restart would. */
  disconnectWatches(): void {
    for (const watch of this.watches) watch.response.destroy();
    this.watches.clear();
  }

  /** Forgets the change history: the next watch from any older resourceVersion gets 410 Expired. */
  compactHistory(): void {
    this.store.compact();
  }

  /** Sends a BOOKMARK with the current resourceVersion on every watch that asked for bookmarks. */
  sendBookmarks(): void {
    for (const watch of this.watches) {
      if (!watch.bookmarks) continue;
      const object = {
        apiVersion: groupVersion(watch.kind.group, watch.kind.preferredVersion),
        kind: watch.kind.kind,
        metadata: { resourceVersion: String(this.store.resourceVersion) },
      };
      writeEvent(watch.response, "BOOKMARK", object);
    }
  }

  async close(): Promise<void> {
    this.disconnectWatches();
    for (const socket of this.upgraded) socket.destroy();
    this.http.closeAllConnections();
    await new Promise((resolve) => this.http.close(resolve));
  }

  private kindOf(obj: ConfigObject): KindInfo {
    const { group, version } = parseApiVersion(obj.apiVersion);
    const kind = this.findKind(group, version, (k) => k.kind === obj.kind);
    if (!kind) throw new ApiError(404, "NotFound", `no kind ${obj.kind} is served at ${obj.apiVersion}`);
    return kind;
  }

  private findKind(group: string, version: string, match: (kind: KindInfo) => boolean): KindInfo | undefined {
    return [...this.installed].find((k) => k.group === group && k.versions.includes(version) && match(k));
  }

  private record(req: IncomingMessage, url: URL): void {
    this.requests.push({
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", this.url);
    this.record(req, url);
    try {
      if (this.failuresToInject > 0) {
        this.failuresToInject--;
        throw new ApiError(500, "InternalError", "injected failure");
      }
      if (url.pathname === TOKEN_REVIEW_PATH && req.method === "POST") {
        return sendJson(res, 201, this.tokenReview(await readJson(req)));
      }
      const parsed = this.parsePath(url.pathname);
      if (parsed.type === "api-versions") return sendJson(res, 200, { kind: "APIVersions", versions: ["v1"] });
      if (parsed.type === "api-groups") return sendJson(res, 200, this.apiGroups());
      if (parsed.type === "resource-list") return sendJson(res, 200, this.resourceList(parsed.group, parsed.version));
      if (parsed.type === "token-request") {
        if (req.method !== "POST") throw methodNotAllowed(req.method ?? "GET");
        const { kind, namespace, name } = parsed.at;
        const account = this.store.get(kind, { namespace: namespace ?? "", name: name ?? "" });
        return sendJson(res, 201, this.tokenRequest(account, await readJson(req)));
      }
      await this.handleResource(req, res, parsed.at, url.searchParams);
    } catch (err) {
      const error = err instanceof ApiError ? err : new ApiError(500, "InternalError", String(err));
      sendJson(res, error.code, statusObject(error));
    }
  }

  private parsePath(pathname: string): ParsedPath {
    const segments = pathname
      .split("/")
      .filter((s) => s !== "")
      .map(decodeURIComponent);
    const [root] = segments;
    if (root === "api" && segments.length === 1) return { type: "api-versions" };
    if (root === "apis" && segments.length === 1) return { type: "api-groups" };
    const [group, version, rest] =
      root === "api"
        ? ["", segments[1], segments.slice(2)]
        : root === "apis"
          ? [segments[1], segments[2], segments.slice(3)]
          : ["", undefined, []];
    if (version === undefined) throw pathNotFound();
    if (rest.length === 0) return { type: "resource-list", group, version };
    // "namespaces/{ns}/{plural}" is the namespaced form; "namespaces/{name}" is the Namespace itself.
    const byPlural = (plural: string) => this.findKind(group, version, (k) => k.plural === plural);
    let namespace: string | undefined;
    let resource = rest;
    if (rest[0] === "namespaces" && rest.length >= 3 && byPlural(rest[2])?.namespaced) {
      namespace = rest[1];
      resource = rest.slice(2);
    }
    const [plural, name, subresource, ...extra] = resource;
    const kind = byPlural(plural);
    const namespaceMissing = kind?.namespaced && name !== undefined && namespace === undefined;
    if (!kind || namespaceMissing || extra.length > 0) throw pathNotFound();
    // The ServiceAccount token subresource is a TokenRequest; the only other subresource is status.
    if (subresource === "token" && kind.kind === "ServiceAccount") {
      return { type: "token-request", at: { kind, version, namespace, name } };
    }
    if (subresource !== undefined && subresource !== "status") throw pathNotFound();
    return { type: "resource", at: { kind, version, namespace, name, subresource } };
  }

  private apiGroups(): object {
    const groups = new Map<string, KindInfo>();
    for (const kind of this.installed) if (kind.group !== "") groups.set(kind.group, kind);
    return {
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: [...groups.values()].map((kind) => {
        const versions = [
          ...new Set([...this.installed].filter((k) => k.group === kind.group).flatMap((k) => k.versions)),
        ];
        const preferred = {
          groupVersion: groupVersion(kind.group, kind.preferredVersion),
          version: kind.preferredVersion,
        };
        return {
          name: kind.group,
          versions: versions.map((v) => ({ groupVersion: groupVersion(kind.group, v), version: v })),
          preferredVersion: preferred,
        };
      }),
    };
  }

  private resourceList(group: string, version: string): object {
    const kinds = [...this.installed].filter((k) => k.group === group && k.versions.includes(version));
    if (kinds.length === 0) throw pathNotFound();
    const verbs = ["create", "delete", "get", "list", "patch", "update", "watch"];
    return {
      kind: "APIResourceList",
      apiVersion: "v1",
      groupVersion: groupVersion(group, version),
      resources: kinds.flatMap((k) => [
        {
          name: k.plural,
          singularName: k.kind.toLowerCase(),
          namespaced: k.namespaced,
          kind: k.kind,
          verbs,
          shortNames: k.shortNames,
        },
        {
          name: `${k.plural}/status`,
          singularName: "",
          namespaced: k.namespaced,
          kind: k.kind,
          verbs: ["get", "patch", "update"],
        },
      ]),
    };
  }

  private async handleResource(
    req: IncomingMessage,
    res: ServerResponse,
    at: ResourceLocation,
    query: URLSearchParams,
  ): Promise<void> {
    const { kind, version } = at;
    const method = req.method ?? "GET";
    const present = (obj: ConfigObject) => ({ ...obj, apiVersion: groupVersion(kind.group, version) });
    if (at.name === undefined) {
      if (method === "GET" && (query.get("watch") === "true" || query.get("watch") === "1")) {
        return this.watch(res, at, query);
      }
      if (method === "GET") return sendJson(res, 200, this.list(at, query));
      if (method === "POST")
        return sendJson(res, 201, present(this.store.create(kind, located(await readJson(req), at))));
      throw methodNotAllowed(method);
    }
    const name = { namespace: at.namespace ?? "", name: at.name };
    const part = at.subresource === "status" ? "status" : "main";
    switch (method) {
      case "GET":
        return sendJson(res, 200, present(this.store.get(kind, name)));
      case "PUT":
        return sendJson(res, 200, present(this.store.update(kind, located(await readJson(req), at), part)));
      case "PATCH": {
        const contentType = req.headers["content-type"] ?? "";
        const current = this.store.get(kind, name);
        let patched: ConfigObject;
        if (contentType.startsWith("application/merge-patch+json")) {
          patched = mergePatch(current, await readJson(req)) as ConfigObject;
        } else if (contentType.startsWith("application/json-patch+json")) {
          patched = jsonPatch(current, await readJson(req));
        } else {
          throw new ApiError(415, "UnsupportedMediaType", `the body of the request was in an unknown format`);
        }
        return sendJson(res, 200, present(this.store.update(kind, located(patched, at), part)));
      }
      case "DELETE":
        return sendJson(res, 200, present(this.store.delete(kind, name)));
      default:
        throw methodNotAllowed(method);
    }
  }

  /** A TokenRequest for the service account: an opaque token this server's TokenReview recognises. */
  private tokenRequest(account: ConfigObject, request: ConfigObject): object {
    const spec = (request as { spec?: { audiences?: string[]; expirationSeconds?: number } }).spec ?? {};
    const issued: IssuedToken = {
      token: `test-token-${randomUUID()}`,
      namespace: account.metadata.namespace ?? "",
      serviceAccount: account.metadata.name ?? "",
      audiences: spec.audiences?.length ? spec.audiences : [API_SERVER_AUDIENCE],
      expirationSeconds: spec.expirationSeconds ?? 3600,
    };
    this.issuedTokens.push(issued);
    return {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      metadata: { name: issued.serviceAccount, namespace: issued.namespace },
      spec: { audiences: issued.audiences, expirationSeconds: issued.expirationSeconds },
      status: {
        token: issued.token,
        expirationTimestamp: new Date(Date.now() + issued.expirationSeconds * 1000).toISOString(),
      },
    };
  }

  /** A TokenReview: tokens this server issued for one of the asked audiences are their service account's. */
  private tokenReview(review: ConfigObject): object {
    const spec = (review as { spec?: { token?: string; audiences?: string[] } }).spec ?? {};
    this.reviewedTokens.push(spec.token ?? "");
    const wanted = spec.audiences?.length ? spec.audiences : [API_SERVER_AUDIENCE];
    const issued = this.issuedTokens.find((t) => t.token === spec.token);
    const audiences = issued?.audiences.filter((a) => wanted.includes(a)) ?? [];
    const status =
      issued && audiences.length > 0
        ? {
            authenticated: true,
            audiences,
            user: {
              username: `system:serviceaccount:${issued.namespace}:${issued.serviceAccount}`,
              groups: ["system:serviceaccounts", `system:serviceaccounts:${issued.namespace}`, "system:authenticated"],
            },
          }
        : { authenticated: false, error: "[invalid bearer token]" };
    return { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec, status };
  }

  /** WebSocket upgrades: a pod's portforward, to the target its test registered. */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? "/", this.url);
    this.record(req, url);
    this.upgraded.add(socket);
    socket.on("close", () => this.upgraded.delete(socket));
    socket.on("error", () => socket.destroy());
    const refused = this.portForwardProblem(url);
    if (refused) {
      rejectUpgrade(socket, refused.code, refused.message);
      return;
    }
    const [, namespace, name] = (PORT_FORWARD_PATH.exec(url.pathname) ?? []).map(decodeURIComponent);
    const port = Number(url.searchParams.get("ports"));
    acceptPortForward(req, socket, head, port, name, this.forwards.get(`${namespace}/${name}:${port}`));
  }

  /** Why the API server refuses a portforward: no such path or pod, or not exactly one port. */
  private portForwardProblem(url: URL): ApiError | undefined {
    const match = PORT_FORWARD_PATH.exec(url.pathname);
    const podKind = this.findKind("", "v1", (k) => k.kind === "Pod");
    if (!match || !podKind) return pathNotFound();
    try {
      this.store.get(podKind, { namespace: decodeURIComponent(match[1]), name: decodeURIComponent(match[2]) });
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
    const ports = url.searchParams.getAll("ports");
    const port = Number(ports[0]);
    if (ports.length !== 1 || !Number.isInteger(port) || port < 1 || port > 65535) {
      return new ApiError(400, "BadRequest", `one port in the "ports" query parameter, not ${JSON.stringify(ports)}`);
    }
    return undefined;
  }

  private list(at: ResourceLocation, query: URLSearchParams): object {
    const { kind, version } = at;
    const selector = selectorFrom(query);
    // Lists of built-in kinds carry no apiVersion/kind on their items; custom resource lists do.
    const items = this.store
      .list(kind, at.namespace)
      .filter((o) => selectorMatches(selector, o.metadata.labels ?? {}))
      .map(({ apiVersion: _a, kind: _k, ...rest }) =>
        kind.family === "kubernetes"
          ? rest
          : { apiVersion: groupVersion(kind.group, version), kind: kind.kind, ...rest },
      );
    return {
      apiVersion: groupVersion(kind.group, version),
      kind: `${kind.kind}List`,
      metadata: { resourceVersion: String(this.store.resourceVersion) },
      items,
    };
  }

  private watch(res: ServerResponse, at: ResourceLocation, query: URLSearchParams): void {
    const { kind, version } = at;
    const selector = selectorFrom(query);
    res.writeHead(200, { "content-type": "application/json" });
    res.flushHeaders();
    const send = (type: string, obj: ConfigObject) =>
      writeEvent(res, type, { ...obj, apiVersion: groupVersion(kind.group, version) });
    const inScope = (obj: ConfigObject | undefined): obj is ConfigObject =>
      obj !== undefined &&
      (at.namespace === undefined || obj.metadata.namespace === at.namespace) &&
      selectorMatches(selector, obj.metadata.labels ?? {});
    // A change seen through a label selector: an object that starts or stops matching is added or deleted.
    const deliver = (change: Change) => {
      if (change.kind !== kind) return;
      const now = change.type !== "DELETED" && inScope(change.object);
      const before = inScope(change.previous);
      if (now && before) send("MODIFIED", change.object);
      else if (now) send("ADDED", change.object);
      else if (before) send("DELETED", change.object);
    };

    const from = query.get("resourceVersion") ?? "";
    if (from === "" || from === "0") {
      // No resourceVersion: the current state as ADDED events, then the changes that follow.
      for (const obj of this.store.list(kind, at.namespace)) if (inScope(obj)) send("ADDED", obj);
    } else {
      let replay: Change[];
      try {
        replay = this.store.changesSince(Number(from));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        // The real server answers an expired watch with 200 and a single ERROR event.
        writeEvent(res, "ERROR", statusObject(err));
        res.end();
        return;
      }
      replay.forEach(deliver);
    }

    const watch: OpenWatch = { kind, response: res, bookmarks: query.get("allowWatchBookmarks") === "true" };
    this.watches.add(watch);
    const unsubscribe = this.store.subscribe(deliver);
    const timeoutSeconds = Number(query.get("timeoutSeconds") ?? 0);
    const timer = timeoutSeconds > 0 ? setTimeout(() => res.end(), timeoutSeconds * 1000) : undefined;
    res.on("close", () => {
      unsubscribe();
      clearTimeout(timer);
      this.watches.delete(watch);
    });
  }
}

/** Puts the namespace and name of the request path on the object, as the server's defaulting does. */
function located(obj: ConfigObject, at: ResourceLocation): ConfigObject {
  const metadata = { ...obj.metadata };
  if (at.namespace !== undefined) metadata.namespace = at.namespace;
  if (at.name !== undefined) metadata.name = at.name;
  return { ...obj, metadata };
}

function selectorFrom(query: URLSearchParams): LabelSelector {
  try {
    return parseLabelSelector(query.get("labelSelector") ?? "");
  } catch (err) {
    throw new ApiError(400, "BadRequest", (err as Error).message);
  }
}

/** JSON merge patch (RFC 7386): objects merge key by key, null deletes, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const merged: Record<string, unknown> =
    typeof target === "object" && target !== null && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = mergePatch(merged[key], value);
  }
  return merged;
}

interface JsonPatchOperation {
  op: string;
  path: string;
  value?: unknown;
}

/** JSON patch (RFC 6902) with the operations clients send: add, remove, replace and test. */
function jsonPatch(target: ConfigObject, operations: unknown): ConfigObject {
  if (!Array.isArray(operations)) throw new ApiError(400, "BadRequest", "a JSON patch is a list of operations");
  const patched = structuredClone(target);
  for (const { op, path, value } of operations as JsonPatchOperation[]) {
    const tokens = path
      .split("/")
      .slice(1)
      .map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
    const last = tokens.pop();
    let parent: unknown = patched;
    for (const token of tokens) parent = (parent as Record<string, unknown> | undefined)?.[token];
    if (last === undefined || typeof parent !== "object" || parent === null) {
      throw new ApiError(422, "Invalid", `JSON patch: no such path ${path}`);
    }
    const container = parent as Record<string, unknown>;
    const exists = last in container;
    if (op === "add" && Array.isArray(parent)) parent.splice(last === "-" ? parent.length : Number(last), 0, value);
    else if (op === "add" || (op === "replace" && exists)) container[last] = value;
    else if (op === "remove" && exists && Array.isArray(parent)) parent.splice(Number(last), 1);
    else if (op === "remove" && exists) delete container[last];
    else if (op === "test" && JSON.stringify(container[last]) === JSON.stringify(value)) continue;
    else throw new ApiError(422, "Invalid", `JSON patch: ${op} of ${path} failed`);
  }
  return patched;
}

function writeEvent(res: ServerResponse, type: string, object: object): void {
  res.write(`${JSON.stringify({ type, object })}\n`);
}

function sendJson(res: ServerResponse, code: number, body: object): void {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function statusObject(error: ApiError): object {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: error.message,
    reason: error.reason,
    code: error.code,
  };
}

async function readJson(req: IncomingMessage): Promise<ConfigObject> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as ConfigObject;
  } catch (err) {
    throw new ApiError(400, "BadRequest", `invalid JSON body: ${(err as Error).message}`);
  }
}

function pathNotFound(): ApiError {
  return new ApiError(404, "NotFound", "the server could not find the requested resource");
}

function methodNotAllowed(method: string): ApiError {
  return new ApiError(
    405,
    "MethodNotAllowed",
    `the server does not allow this method on the requested resource: ${method}`,
  );
}
