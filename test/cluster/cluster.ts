// A real Kubernetes API server for tests, envtest-style: etcd, kube-apiserver and
// kube-controller-manager built by `npm run peers`, started on 127.0.0.1 and free ports with a
// temporary data directory, certificates made on the fly (test/cluster/pki.ts), an admin client
// certificate (system:masters, RBAC), ServiceAccount token signing (TokenRequest and TokenReview
// work), and Istio's and the Gateway API's CRDs installed and Established.
//
// The controller-manager runs only the namespace controller, the garbage collector and the
// ServiceAccount token controller, so deleting a namespace deletes it and everything in it
// (`deleteNamespace()`), owner references cascade, and a Secret of type
// kubernetes.io/service-account-token gets its token and ca.crt (what `create-remote-secret` reads),
// as in a real cluster. Nothing else is automatic: no "default" ServiceAccount or kube-root-ca.crt
// ConfigMap appears in a namespace, EndpointSlices exist only when a test makes them (the
// endpointslice controller is off on purpose), and the ServiceAccount admission plugin is off so
// pods need no ServiceAccount. Without a built kube-controller-manager the cluster still starts
// (off CI), and a deleted namespace stays Terminating (`hasControllerManager` is false).
//
// One cluster per test run, a namespace per test (`cluster.namespace()`). `npm run test:unit` goes
// through test/run-unit.ts, which starts one cluster and names a JSON file describing it in
// $SLUICE_TEST_CLUSTER; `sharedCluster()` attaches to that one (it neither starts nor stops it).
// A test file run alone (no $SLUICE_TEST_CLUSTER) starts a cluster of its own on first use. So
// other test files may be using the same cluster: make your objects in your own namespace, and
// expect cluster-wide lists and watches to see other tests' namespaces and objects.
//
// Tests that disrupt the cluster (compactEtcd(), restartApiServer(), stopping it) must use a
// private one, `Cluster.start()`, and stop() it in after(); the shared cluster refuses them.
//
// The children are stopped when the process that started them exits, on SIGINT/SIGTERM/SIGHUP,
// and by a watchdog shell when that process dies without running its exit handlers.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { request as httpRequest } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { KubeConfig } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { peerPath, peersSkipReason, REPO_ROOT, requirePeer } from "../peers/paths.ts";
import { type ClusterPki, makeClusterPki } from "./pki.ts";

/** The programs a cluster needs, for `peersSkipReason` (on CI all of them). */
export const CLUSTER_PEERS = ["etcd", "kube-apiserver", "kube-controller-manager"] as const;

/** Off CI a cluster starts without kube-controller-manager (deleted namespaces then stay Terminating). */
const REQUIRED_PEERS = ["etcd", "kube-apiserver"] as const;

/**
 * The environment variable that names the JSON file (`ClusterInfo`) of the test run's cluster,
 * set by test/run-unit.ts for the test processes; `sharedCluster()` attaches to it.
 */
export const CLUSTER_ENV = "SLUICE_TEST_CLUSTER";

/** How to reach a running cluster: the JSON file named by $SLUICE_TEST_CLUSTER. */
export interface ClusterInfo {
  url: string;
  etcdUrl: string;
  kubeconfigPath: string;
  /** The cluster's temporary directory (logs, data, certificates); removed when it stops. */
  dir: string;
  caFile: string;
  adminCertFile: string;
  adminKeyFile: string;
  serviceAccountKeyFile: string;
  serviceAccountPublicKeyFile: string;
  /** Whether kube-controller-manager runs (namespace deletion finishes). */
  controllerManager: boolean;
  startSeconds: number;
  startPhases: Record<string, number>;
  /** The process that owns the cluster. */
  pid: number;
}

/** The ServiceAccount token issuer, also the API server's audience (as in kind and most clusters). */
export const SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local";

/**
 * Undefined when etcd and kube-apiserver are built; otherwise one line for `t.skip()` naming
 * `npm run peers`. Throws on CI (CI=true) when any of CLUSTER_PEERS (kube-controller-manager
 * included) is missing: there a missing peer fails the test.
 */
export function clusterSkipReason(): string | undefined {
  return process.env.CI === "true" ? peersSkipReason(...CLUSTER_PEERS) : peersSkipReason(...REQUIRED_PEERS);
}

/** $SLUICE_CRDS_DIR, or ../shared/crds beside the repository. */
export function defaultCrdDir(): string {
  return process.env.SLUICE_CRDS_DIR ? resolve(process.env.SLUICE_CRDS_DIR) : resolve(REPO_ROOT, "../shared/crds");
}

export interface ClusterOptions {
  /** The CRDs to install (every CustomResourceDefinition in the folder's YAML); false installs none. */
  crdDir?: string | false;
  /** More kube-apiserver flags (a later flag wins), e.g. ["--watch-cache=false"]. */
  apiServerArgs?: string[];
  /** How long to wait for readiness, in ms (default 60 s). */
  timeoutMs?: number;
}

export interface ApiResponse {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON the server answered
  body: any;
  text: string;
}

interface Proc {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
  logFile: string;
}

/** Live clusters, for the exit handlers. */
const live = new Set<Cluster>();
let handlersInstalled = false;

function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on("exit", () => {
    for (const c of live) c.killNow();
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      for (const c of live) c.killNow();
      process.kill(process.pid, signal);
    });
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok, fail) => server.listen(0, "127.0.0.1", ok).once("error", fail));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

const tail = (file: string, lines = 20) => {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
};

const dnsLabel = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "") || "test";

export class Cluster {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** http://127.0.0.1:<port>, etcd's client URL (plain HTTP, with its JSON gateway under /v3/). */
  readonly etcdUrl: string;
  /** A kubeconfig for the admin (context "sluice-test"), for programs run with --kubeconfig. */
  readonly kubeconfigPath: string;
  /** Seconds from start() to ready (CRDs and the controller-manager included). */
  startSeconds = 0;
  /** Where the start-up time went, in seconds: pki, etcd, kube-apiserver, crds, kube-controller-manager. */
  startPhases: Record<string, number> = {};
  /** Whether kube-controller-manager runs, so that deleting a namespace finishes. */
  hasControllerManager = false;
  /** True for a cluster another process started (`attach()`): this one never stops it. */
  readonly attached: boolean;
  private etcd?: Proc;
  private apiServer?: Proc;
  private controllerManager?: Proc;
  private watchdog?: ChildProcess;
  private readonly agent: Agent;
  private stopped = false;

  private constructor(
    /** The temporary directory: data, certificates, logs (etcd.log, kube-apiserver.log, kube-controller-manager.log). */
    readonly dir: string,
    readonly pki: ClusterPki,
    private readonly apiPort: number,
    etcdPort: number,
    private readonly etcdPeerPort: number,
    private readonly controllerManagerPort: number,
    private readonly options: ClusterOptions,
    attachedTo?: ClusterInfo,
  ) {
    this.attached = attachedTo !== undefined;
    this.url = attachedTo?.url ?? `https://127.0.0.1:${apiPort}`;
    this.etcdUrl = attachedTo?.etcdUrl ?? `http://127.0.0.1:${etcdPort}`;
    this.kubeconfigPath = attachedTo?.kubeconfigPath ?? join(dir, "kubeconfig");
    this.agent = new Agent({
      keepAlive: true,
      ca: pki.caPem,
      cert: pki.adminCertPem,
      key: pki.adminKeyPem,
    });
  }

  /**
   * Starts a cluster of its own (tests should mostly use `sharedCluster()`; a test that disrupts
   * the cluster must use its own); stop it with `stop()`. kube-controller-manager runs when it is
   * built (on CI it must be).
   */
  static async start(options: ClusterOptions = {}): Promise<Cluster> {
    const started = performance.now();
    const etcdBin = requirePeer("etcd");
    const apiBin = requirePeer("kube-apiserver");
    const kcmBin =
      process.env.CI === "true" ? requirePeer("kube-controller-manager") : peerPath("kube-controller-manager");
    const dir = mkdtempSync(join(tmpdir(), "sluice-cluster-"));
    const [pki, apiPort, etcdPort, etcdPeerPort, kcmPort] = await Promise.all([
      makeClusterPki(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const cluster = new Cluster(dir, pki, apiPort, etcdPort, etcdPeerPort, kcmPort, options);
    installExitHandlers();
    live.add(cluster);
    let mark = started;
    const phase = (name: string) => {
      const now = performance.now();
      cluster.startPhases[name] = Math.round(now - mark) / 1000;
      mark = now;
    };
    phase("pki");
    try {
      cluster.writeFiles();
      await cluster.startEtcd(etcdBin);
      phase("etcd");
      await cluster.startApiServer(apiBin);
      phase("kube-apiserver");
      if (options.crdDir !== false) await cluster.installCrds(options.crdDir ?? defaultCrdDir());
      phase("crds");
      // After the CRDs, so that its discovery finds them at once; only its /healthz is waited for.
      if (kcmBin) {
        cluster.startControllerManager(kcmBin);
        await cluster.waitForControllerManager();
        cluster.hasControllerManager = true;
        phase("kube-controller-manager");
      }
    } catch (err) {
      const logs = [cluster.etcd, cluster.apiServer, cluster.controllerManager]
        .filter((p) => p !== undefined)
        .map((p) => `--- ${p.name} (${p.logFile})\n${tail(p.logFile)}`)
        .join("\n");
      await cluster.stop();
      throw new Error(`test cluster did not start: ${(err as Error).message}\n${logs}`);
    }
    cluster.startSeconds = Math.round(performance.now() - started) / 1000;
    return cluster;
  }

  /**
   * Attaches to a cluster another process started and described in `infoFile` (a `ClusterInfo`,
   * see `writeInfo()`); `sharedCluster()` does this with $SLUICE_TEST_CLUSTER. The cluster is
   * shared: stop() only lets go of it, and the disruptive methods refuse.
   */
  static async attach(infoFile: string): Promise<Cluster> {
    let info: ClusterInfo;
    try {
      info = JSON.parse(readFileSync(infoFile, "utf8")) as ClusterInfo;
    } catch (err) {
      throw new Error(`${CLUSTER_ENV}=${infoFile}: no test cluster to attach to (${(err as Error).message})`);
    }
    const read = (file: string) => readFileSync(file, "utf8");
    const pki: ClusterPki = {
      caPem: read(info.caFile),
      servingCertPem: read(join(info.dir, "apiserver.crt")),
      servingKeyPem: read(join(info.dir, "apiserver.key")),
      adminCertPem: read(info.adminCertFile),
      adminKeyPem: read(info.adminKeyFile),
      serviceAccountPublicPem: read(info.serviceAccountPublicKeyFile),
      serviceAccountPrivatePem: read(info.serviceAccountKeyFile),
    };
    const port = (url: string) => Number(new URL(url).port);
    const cluster = new Cluster(info.dir, pki, port(info.url), port(info.etcdUrl), 0, 0, {}, info);
    cluster.startSeconds = info.startSeconds;
    cluster.startPhases = info.startPhases;
    cluster.hasControllerManager = info.controllerManager;
    const ready = await cluster.request("GET", "/readyz", undefined, {}, 10_000).catch((err: Error) => err);
    if (ready instanceof Error || ready.status !== 200) {
      cluster.agent.destroy();
      const why = ready instanceof Error ? ready.message : `${ready.status} ${ready.text}`;
      throw new Error(`test cluster at ${info.url} (${CLUSTER_ENV}=${infoFile}) is not ready: ${why}`);
    }
    return cluster;
  }

  /** How to reach this cluster, for `attach()`. */
  info(): ClusterInfo {
    const f = (name: string) => join(this.dir, name);
    return {
      url: this.url,
      etcdUrl: this.etcdUrl,
      kubeconfigPath: this.kubeconfigPath,
      dir: this.dir,
      caFile: f("ca.crt"),
      adminCertFile: f("admin.crt"),
      adminKeyFile: f("admin.key"),
      serviceAccountKeyFile: f("sa.key"),
      serviceAccountPublicKeyFile: f("sa.pub"),
      controllerManager: this.hasControllerManager,
      startSeconds: this.startSeconds,
      startPhases: this.startPhases,
      pid: process.pid,
    };
  }

  /** Writes `info()` as JSON to `path` (atomically) for other processes to `attach()`. */
  writeInfo(path: string): void {
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.info(), null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, path);
  }

  /** A client-node KubeConfig for the admin. */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromString(readFileSync(this.kubeconfigPath, "utf8"));
    return kc;
  }

  /** Writes the admin kubeconfig to `path` too. */
  writeKubeconfig(path: string): void {
    writeFileSync(path, readFileSync(this.kubeconfigPath));
  }

  /**
   * Creates a namespace with a unique name made from `name` (a test's name will do) and returns
   * its name. It is left in place after the test unless the test deletes it (`deleteNamespace()`);
   * the cluster goes away with the test run.
   */
  async namespace(name = "test", labels: Record<string, string> = {}): Promise<string> {
    const unique = `${dnsLabel(name)}-${randomBytes(3).toString("hex")}`;
    await this.must("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: unique, labels: { "sluice.test/cluster": "true", ...labels } },
    });
    return unique;
  }

  /**
   * Deletes a namespace and, unless `waitMs` is 0, waits until it and its objects are gone (the
   * controller-manager's namespace controller finalizes it; without one this throws at once). That
   * takes at least 5 s (the controller's fixed grace period), so a test's cleanup should not wait:
   * `deleteNamespace(ns, 0)`.
   */
  async deleteNamespace(name: string, waitMs = 60_000): Promise<void> {
    const path = `/api/v1/namespaces/${encodeURIComponent(name)}`;
    const res = await this.request("DELETE", path);
    if (res.status >= 300 && res.status !== 404) {
      throw new Error(`DELETE ${path}: ${res.status} ${res.body?.message ?? res.text}`);
    }
    if (waitMs <= 0 || res.status === 404) return;
    if (!this.hasControllerManager) {
      throw new Error(`namespace ${name} stays Terminating: no kube-controller-manager (run \`npm run peers\`)`);
    }
    const deadline = Date.now() + waitMs;
    for (;;) {
      const got = await this.request("GET", path);
      if (got.status === 404) return;
      if (Date.now() > deadline) {
        const conditions = JSON.stringify(got.body?.status?.conditions ?? []);
        throw new Error(`namespace ${name} still there after ${waitMs} ms: ${got.body?.status?.phase} ${conditions}`);
      }
      await sleep(200);
    }
  }

  /** A request as the admin; `body` is sent as JSON (or as is when a string). */
  request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    timeoutMs = 30_000,
  ): Promise<ApiResponse> {
    return send(new URL(path, this.url), method, body, headers, this.agent, timeoutMs);
  }

  /** Like `request`, but a status of 300 or more throws with the server's message. */
  async must(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse> {
    const res = await this.request(method, path, body, headers);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body?.message ?? res.text}`);
    return res;
  }

  /**
   * Compacts etcd's history at its current revision (physically) and returns that revision. Then a
   * list at an older exact resourceVersion answers 410. Watches from older resourceVersions end
   * with an ERROR event (410, reason Expired) when etcd serves them (a cluster started with
   * --watch-cache=false); the watch cache keeps serving them until `restartApiServer()`, after
   * which its history starts at the current revision.
   */
  async compactEtcd(): Promise<number> {
    this.refuseShared("compactEtcd()");
    const range = await send(new URL("/v3/kv/range", this.etcdUrl), "POST", {
      key: Buffer.from("\0").toString("base64"),
      limit: 1,
    });
    const revision = range.body?.header?.revision;
    if (range.status !== 200 || revision === undefined) throw new Error(`etcd range: ${range.status} ${range.text}`);
    const compact = await send(new URL("/v3/kv/compaction", this.etcdUrl), "POST", { revision, physical: true });
    if (compact.status !== 200) throw new Error(`etcd compaction: ${compact.status} ${compact.text}`);
    return Number(revision);
  }

  /**
   * Stops the API server and starts it again on the same port with the same etcd: watches end,
   * clients reconnect, the watch cache starts over, stored objects stay.
   */
  async restartApiServer(): Promise<void> {
    this.refuseShared("restartApiServer()");
    if (this.apiServer) await this.terminate(this.apiServer);
    await this.startApiServer(requirePeer("kube-apiserver"));
  }

  /**
   * Stops the controller-manager, the API server and etcd, and removes the temporary directory.
   * On the shared cluster (`sharedCluster()`) it does nothing: the process or test run that
   * started it stops it at its end.
   */
  async stop(): Promise<void> {
    if (sharedClusters.has(this)) return;
    if (this.stopped) return;
    this.stopped = true;
    if (this.attached) {
      this.agent.destroy();
      return;
    }
    if (this.controllerManager) await this.terminate(this.controllerManager);
    if (this.apiServer) await this.terminate(this.apiServer);
    if (this.etcd) await this.terminate(this.etcd);
    this.agent.destroy();
    this.killNow();
  }

  /** Kills everything at once, synchronously (exit handlers). */
  killNow(): void {
    if (this.attached) return;
    for (const p of [this.controllerManager, this.apiServer, this.etcd]) {
      if (p?.child.pid !== undefined && p.child.exitCode === null && p.child.signalCode === null) {
        try {
          process.kill(-p.child.pid, "SIGKILL");
        } catch {}
      }
    }
    if (this.watchdog?.pid !== undefined && this.watchdog.exitCode === null) {
      try {
        process.kill(this.watchdog.pid, "SIGKILL");
      } catch {}
    }
    live.delete(this);
    if (!process.env.SLUICE_CLUSTER_KEEP) rmSync(this.dir, { recursive: true, force: true });
  }

  private refuseShared(what: string): void {
    if (this.attached || sharedClusters.has(this)) {
      throw new Error(`${what} would disrupt the tests sharing this cluster: start a private one with Cluster.start()`);
    }
  }

  private writeFiles(): void {
    const p = this.pki;
    for (const [name, pem] of Object.entries({
      "ca.crt": p.caPem,
      "apiserver.crt": p.servingCertPem,
      "apiserver.key": p.servingKeyPem,
      "admin.crt": p.adminCertPem,
      "admin.key": p.adminKeyPem,
      "sa.pub": p.serviceAccountPublicPem,
      "sa.key": p.serviceAccountPrivatePem,
    })) {
      writeFileSync(join(this.dir, name), pem, { mode: 0o600 });
    }
    const kc = new KubeConfig();
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    kc.loadFromOptions({
      clusters: [{ name: "sluice-test", server: this.url, caData: b64(p.caPem) }],
      users: [{ name: "sluice-test-admin", certData: b64(p.adminCertPem), keyData: b64(p.adminKeyPem) }],
      contexts: [{ name: "sluice-test", cluster: "sluice-test", user: "sluice-test-admin" }],
      currentContext: "sluice-test",
    });
    writeFileSync(this.kubeconfigPath, kc.exportConfig(), { mode: 0o600 });
  }

  private spawnLogged(name: string, bin: string, args: string[]): Proc {
    const logFile = join(this.dir, `${name}.log`);
    const fd = openSync(logFile, "a");
    // Its own process group, so a ^C to the test run reaches the exit handlers, which kill it.
    const child = spawn(bin, args, { cwd: this.dir, stdio: ["ignore", fd, fd], detached: true });
    closeSync(fd);
    child.unref();
    const exited = new Promise<void>((ok) => child.once("exit", () => ok()));
    child.once("error", () => {});
    const proc = { name, child, exited, logFile };
    this.armWatchdog(proc);
    return proc;
  }

  /** A shell that kills the process groups and removes the directory if this process dies without its exit handlers. */
  private armWatchdog(proc: Proc): void {
    if (proc.child.pid === undefined) return;
    const pidFile = join(this.dir, "pgids");
    const pgids = [this.etcd, this.apiServer, this.controllerManager, proc]
      .filter((p): p is Proc => p?.child.pid !== undefined)
      .map((p) => `-${p.child.pid}`);
    writeFileSync(pidFile, [...new Set(pgids)].join(" "));
    if (this.watchdog) return;
    const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -s KILL -- $(cat '${pidFile}') 2>/dev/null; rm -rf '${this.dir}'`;
    this.watchdog = spawn("sh", ["-c", script], { stdio: "ignore", detached: true });
    this.watchdog.unref();
  }

  private async terminate(p: Proc): Promise<void> {
    if (p.child.pid === undefined || p.child.exitCode !== null || p.child.signalCode !== null) return;
    try {
      process.kill(-p.child.pid, "SIGTERM");
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-(p.child.pid as number), "SIGKILL");
      } catch {}
    }, 10_000);
    // Referenced while waiting, or an otherwise idle process could end before the exit comes.
    p.child.ref();
    await p.exited;
    p.child.unref();
    clearTimeout(timer);
  }

  private deadline(): number {
    return Date.now() + (this.options.timeoutMs ?? 60_000);
  }

  /** Polls `probe`; fails once `proc` (when this harness runs it: not for an attached cluster) has exited. */
  private async waitFor(what: string, proc: Proc | undefined, probe: () => Promise<boolean>): Promise<void> {
    const deadline = this.deadline();
    for (;;) {
      if (proc && (proc.child.exitCode !== null || proc.child.signalCode !== null)) {
        throw new Error(`${proc.name} exited (${proc.child.exitCode ?? proc.child.signalCode}) before ${what}`);
      }
      if (await probe().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  }

  private async startEtcd(bin: string): Promise<void> {
    const client = this.etcdUrl;
    const peer = `http://127.0.0.1:${this.etcdPeerPort}`;
    this.etcd = this.spawnLogged("etcd", bin, [
      "--name=default",
      `--data-dir=${join(this.dir, "etcd")}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=default=${peer}`,
      "--unsafe-no-fsync",
      "--log-level=warn",
    ]);
    await this.waitFor("etcd /health", this.etcd, async () => {
      const res = await send(new URL("/health", client), "GET", undefined, {}, undefined, 2000);
      return res.status === 200 && res.body?.health === "true";
    });
  }

  private async startApiServer(bin: string): Promise<void> {
    const f = (name: string) => join(this.dir, name);
    this.apiServer = this.spawnLogged("kube-apiserver", bin, [
      `--etcd-servers=${this.etcdUrl}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      `--secure-port=${this.apiPort}`,
      `--cert-dir=${f("apiserver-certs")}`,
      `--tls-cert-file=${f("apiserver.crt")}`,
      `--tls-private-key-file=${f("apiserver.key")}`,
      `--client-ca-file=${f("ca.crt")}`,
      "--authorization-mode=RBAC",
      "--service-cluster-ip-range=10.0.0.0/24",
      `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
      `--service-account-key-file=${f("sa.pub")}`,
      `--service-account-signing-key-file=${f("sa.key")}`,
      `--api-audiences=${SERVICE_ACCOUNT_ISSUER}`,
      "--disable-admission-plugins=ServiceAccount",
      "--enable-priority-and-fairness=false",
      "--allow-privileged=true",
      "--profiling=false",
      // Ends open watches (the controller-manager's among them) a second into a shutdown; else
      // restartApiServer() waits on them until the SIGKILL 10 s later.
      "--shutdown-watch-termination-grace-period=1s",
      ...(this.options.apiServerArgs ?? []),
    ]);
    await this.waitFor("kube-apiserver /readyz", this.apiServer, async () => {
      const res = await this.request("GET", "/readyz", undefined, {}, 2000);
      return res.status === 200;
    });
  }

  /**
   * Only the namespace controller, the garbage collector and the token controller (signing with the
   * API server's ServiceAccount key), with the admin's credentials; no leader election. Its HTTPS port serves /healthz to anyone (a self-signed certificate).
   */
  private startControllerManager(bin: string): void {
    this.controllerManager = this.spawnLogged("kube-controller-manager", bin, [
      `--kubeconfig=${this.kubeconfigPath}`,
      "--controllers=namespace,garbagecollector,serviceaccount-token",
      `--service-account-private-key-file=${join(this.dir, "sa.key")}`,
      `--root-ca-file=${join(this.dir, "ca.crt")}`,
      "--leader-elect=false",
      "--use-service-account-credentials=false",
      "--bind-address=127.0.0.1",
      `--secure-port=${this.controllerManagerPort}`,
      `--cert-dir=${join(this.dir, "controller-manager-certs")}`,
      "--profiling=false",
    ]);
  }

  private async waitForControllerManager(): Promise<void> {
    const insecure = new Agent({ rejectUnauthorized: false });
    const url = new URL("/healthz", `https://127.0.0.1:${this.controllerManagerPort}`);
    try {
      await this.waitFor("kube-controller-manager /healthz", this.controllerManager as Proc, async () => {
        const res = await send(url, "GET", undefined, {}, insecure, 2000);
        return res.status === 200;
      });
    } finally {
      insecure.destroy();
    }
  }

  private async installCrds(dir: string): Promise<void> {
    if (!existsSync(dir)) throw new Error(`no CRD folder ${dir} (set SLUICE_CRDS_DIR)`);
    const files = readdirSync(dir)
      .sort()
      .filter((file) => /\.ya?ml$/.test(file));
    await this.installCrdFiles(files.map((file) => join(dir, file)));
  }

  /** Creates the CustomResourceDefinitions of these YAML files (those present stay) and waits until they serve. */
  async installCrdFiles(files: readonly string[]): Promise<void> {
    const crds: Crd[] = [];
    for (const file of files) {
      for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
        const obj = doc.toJS() as Crd | null;
        if (obj?.kind === "CustomResourceDefinition") crds.push(obj);
      }
    }
    const path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    await Promise.all(
      crds.map(async (crd) => {
        const res = await this.request("POST", path, crd);
        if (res.status >= 300 && res.status !== 409) {
          throw new Error(`installing CRD ${crd.metadata.name}: ${res.status} ${res.body?.message ?? res.text}`);
        }
      }),
    );
    const api = this.apiServer;
    await this.waitFor(`${crds.length} CRDs Established`, api, async () => {
      const items = ((await this.request("GET", path)).body?.items ?? []) as Crd[];
      const established = new Set(
        items
          .filter((c) => c.status?.conditions?.some((k) => k.type === "Established" && k.status === "True"))
          .map((c) => c.metadata.name),
      );
      return crds.every((c) => established.has(c.metadata.name));
    });
    // Established can run a moment ahead of the handlers: wait until every served version lists.
    const lists = crds.flatMap((crd) =>
      crd.spec.versions
        .filter((v) => v.served)
        .map((v) => `/apis/${crd.spec.group}/${v.name}/${crd.spec.names.plural}?limit=1`),
    );
    await this.waitFor("the CRDs' resources to be served", api, async () => {
      const statuses = await Promise.all(lists.map((p) => this.request("GET", p).then((r) => r.status)));
      return statuses.every((s) => s === 200);
    });
  }
}

/** What the harness reads of a CustomResourceDefinition. */
interface Crd {
  kind: string;
  metadata: { name: string };
  spec: { group: string; names: { plural: string }; versions: { name: string; served: boolean }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

/** One HTTP(S) request with a JSON body; the answer parsed as JSON when it is. */
function send(
  url: URL,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
  agent?: Agent,
  timeoutMs = 30_000,
): Promise<ApiResponse> {
  const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  const h: Record<string, string> = { accept: "application/json", ...headers };
  if (payload !== undefined) {
    h["content-type"] ??= "application/json";
    h["content-length"] = String(Buffer.byteLength(payload));
  }
  const requestFn = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<ApiResponse>((ok, fail) => {
    const req = requestFn(url, { method, headers: h, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        ok({ status: res.statusCode ?? 0, body: parsed, text });
      });
      res.on("error", fail);
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${url.pathname}: no answer in ${timeoutMs} ms`)));
    req.on("error", fail);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

let shared: Promise<Cluster> | undefined;
/** The clusters `sharedCluster()` handed out: stop() leaves them be, and the disruptive methods refuse. */
const sharedClusters = new WeakSet<Cluster>();

/**
 * The test run's one cluster (with Istio's and the Gateway API's CRDs): the one test/run-unit.ts
 * started when $SLUICE_TEST_CLUSTER names it, else one this process starts on first use and stops
 * when it exits. Check `clusterSkipReason()` first. Other tests share it: make a namespace per
 * test, and use a private `Cluster.start()` for a test that compacts etcd or restarts the API server.
 */
export function sharedCluster(): Promise<Cluster> {
  const infoFile = process.env[CLUSTER_ENV];
  shared ??= (infoFile ? Cluster.attach(infoFile) : Cluster.start()).then((c) => {
    sharedClusters.add(c);
    return c;
  });
  return shared;
}

/** Alias of `sharedCluster()`. */
export const startCluster = sharedCluster;
