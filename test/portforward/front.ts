// A front for a real API server (test/cluster) that answers pod port-forwards itself. A test
// cluster runs no kubelet, so the API server has nowhere to forward a pod's port; this front passes
// every request through to the API server as the admin, except a pod's portforward WebSocket, which
// it accepts itself (after asking the API server that the pod exists) and bridges to a 127.0.0.1
// port the test registered (the protocol is in protocol.ts). Clients reach it over plain HTTP
// without credentials, with `kubeConfig()` or `writeKubeconfig()`.
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { KubeConfig } from "@kubernetes/client-node";
import { acceptPortForward, rejectUpgrade } from "./protocol.ts";

const PORT_FORWARD_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/portforward$/;

/** A port-forward a client asked the front for. */
export interface ForwardRequest {
  namespace: string;
  pod: string;
  /** The "ports" query parameter(s). */
  ports: string[];
}

export class PortForwardFront {
  /** Every request passed to the API server ("<METHOD> <path>"), oldest first: the front's access log. */
  readonly passed: string[] = [];
  /** Every portforward asked for, oldest first (the front's own record: it is the one answering them). */
  readonly forwardRequests: ForwardRequest[] = [];
  /** "<namespace>/<pod>:<port>" → a 127.0.0.1 port. */
  private readonly forwards = new Map<string, number>();
  private readonly upgraded = new Set<Duplex>();

  private constructor(
    private readonly http: Server,
    /** http://127.0.0.1:<port> */
    readonly url: string,
    private readonly upstream: URL,
    private readonly agent: Agent,
  ) {}

  /** Starts a front on 127.0.0.1 and a free port for the API server of `admin` (a kubeconfig with its credentials). */
  static async start(admin: KubeConfig): Promise<PortForwardFront> {
    const cluster = admin.getCurrentCluster();
    if (!cluster) throw new Error("the admin kubeconfig has no current cluster");
    const tls: { ca?: Buffer | string; cert?: Buffer | string; key?: Buffer | string } = {};
    await admin.applyToHTTPSOptions(tls);
    const agent = new Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key });
    const http = createServer();
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    const front = new PortForwardFront(http, `http://127.0.0.1:${port}`, new URL(cluster.server), agent);
    http.on("request", (req, res) => front.pass(req, res));
    http.on("upgrade", (req, socket, head) => void front.upgrade(req, socket, head));
    return front;
  }

  /** Port-forwards to the pod's `podPort` reach 127.0.0.1:`targetPort`; others find nothing listening. */
  forwardPodPort(pod: { namespace: string; name: string }, podPort: number, targetPort: number): void {
    this.forwards.set(`${pod.namespace}/${pod.name}:${podPort}`, targetPort);
  }

  /** A kubeconfig for the front (context "front", plain HTTP (client-node wants skipTLSVerify for it), no credentials), in `namespace` when given. */
  kubeConfig(namespace?: string): KubeConfig {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: "front", server: this.url, skipTLSVerify: true }],
      users: [{ name: "front" }],
      contexts: [{ name: "front", cluster: "front", user: "front", ...(namespace ? { namespace } : {}) }],
      currentContext: "front",
    });
    return kubeConfig;
  }

  writeKubeconfig(path: string, namespace?: string): void {
    writeFileSync(path, this.kubeConfig(namespace).exportConfig());
  }

  async close(): Promise<void> {
    for (const socket of this.upgraded) socket.destroy();
    this.http.closeAllConnections();
    await new Promise((resolve) => this.http.close(resolve));
    this.agent.destroy();
  }

  /** Any other request: to the API server as the admin, the answer streamed back (watches too). */
  private pass(req: IncomingMessage, res: import("node:http").ServerResponse): void {
    const { host: _host, connection: _connection, ...headers } = req.headers;
    this.passed.push(`${req.method} ${new URL(req.url ?? "/", this.url).pathname}`);
    const upstream = httpsRequest(
      new URL(req.url ?? "/", this.upstream),
      { method: req.method, headers, agent: this.agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(String(err));
    });
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    this.upgraded.add(socket);
    socket.on("close", () => this.upgraded.delete(socket));
    socket.on("error", () => socket.destroy());
    const url = new URL(req.url ?? "/", this.url);
    const match = PORT_FORWARD_PATH.exec(url.pathname);
    if (!match) return rejectUpgrade(socket, 404, "the server could not find the requested resource");
    const [namespace, pod] = [match[1], match[2]].map(decodeURIComponent);
    const ports = url.searchParams.getAll("ports");
    this.forwardRequests.push({ namespace, pod, ports });
    // The pod must exist, as the API server checks before it asks the pod's kubelet.
    const status = await new Promise<number>((resolve) => {
      const check = httpsRequest(
        new URL(`/api/v1/namespaces/${match[1]}/pods/${match[2]}`, this.upstream),
        { method: "GET", agent: this.agent },
        (answer) => {
          answer.resume();
          resolve(answer.statusCode ?? 0);
        },
      );
      check.on("error", () => resolve(0));
      check.end();
    });
    if (status !== 200) {
      const message = status === 404 ? `pods "${pod}" not found` : `checking pod ${namespace}/${pod}: ${status}`;
      return rejectUpgrade(socket, status === 404 ? 404 : 500, message);
    }
    const port = Number(ports[0]);
    if (ports.length !== 1 || !Number.isInteger(port) || port < 1 || port > 65535) {
      return rejectUpgrade(socket, 400, `one port in the "ports" query parameter, not ${JSON.stringify(ports)}`);
    }
    acceptPortForward(req, socket, head, port, pod, this.forwards.get(`${namespace}/${pod}:${port}`));
  }
}
