// What the end-to-end tests of sluiced against the real cluster share (issue 25): the echo mesh as
// API objects (Service, Pods with their status set through the status subresource, EndpointSlices,
// DestinationRule, VirtualService), sluiced spawned with --kubeconfig, the Istio-style proxyless
// bootstrap, and the grpc-go xDS client as a long-lived process whose answers are read line by line.
//
// The backends cannot sit on 127.0.0.1: the API server refuses loopback addresses in EndpointSlices
// ("may not be in the loopback range"), and two endpoints of one Service at the same IP and port name
// are one endpoint to Sluice (as to Istio's endpointSliceCache). So v1 and v2 listen on two of the
// machine's own non-loopback addresses (an IPv4 and an IPv6 one will do); without two, the tests skip.
import { type ChildProcess, spawn } from "node:child_process";
import { networkInterfaces } from "node:os";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import type { Cluster } from "../cluster/index.ts";
import { Backend } from "../proxyless/echo.ts";
import { SLUICED, sluicedLaunch } from "../sluiced-launch.ts";

export const ECHO_PORT = 7070;
export const domain = (ns: string) => `${ns}.svc.cluster.local`;
export const echoHost = (ns: string) => `echo.${domain(ns)}`;

/** Two distinct addresses of this machine the API server takes in an EndpointSlice (no loopback, no link-local). */
export function backendAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.internal) continue;
      if (a.family === "IPv6" && (a.address.startsWith("fe80:") || a.scopeid)) continue;
      if (a.family === "IPv4" && a.address.startsWith("169.254.")) continue;
      if (!out.includes(a.address)) out.push(a.address);
    }
  }
  // One of each family first, so that a machine with one IPv4 and one IPv6 address works.
  const v4 = out.filter((a) => !a.includes(":"));
  const v6 = out.filter((a) => a.includes(":"));
  return v4.length >= 2 ? v4.slice(0, 2) : [...v4, ...v6].slice(0, 2);
}

/**
 * A suite's skip line from `reason()` (undefined: the suite runs), or the error `reason()` throws on CI
 * (a missing peer), which the suite throws in its first hook so that the run fails.
 */
export function skipOrFail(reason: () => string | undefined): { skip?: string; missingOnCi?: Error } {
  try {
    return { skip: reason() };
  } catch (err) {
    return { missingOnCi: err as Error };
  }
}

/** Undefined when the machine has two addresses for the backends; else why the tests skip. */
export function addressSkipReason(): string | undefined {
  const found = backendAddresses();
  if (found.length >= 2) return undefined;
  return `the backends need two non-loopback addresses of this machine (EndpointSlices refuse 127.0.0.0/8); found ${JSON.stringify(found)}`;
}

const hostPort = (address: string, port: number) =>
  address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;

/** An echo backend answering `name`, on `address` (a port of its own). */
export async function backendOn(name: string, address: string): Promise<Backend> {
  const backend = new Backend(name);
  await backend.listen(hostPort(address, 0));
  return backend;
}

// --- API objects -------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

/** The paths of the kinds the tests write. */
export const paths = {
  services: (ns: string) => `/api/v1/namespaces/${ns}/services`,
  pods: (ns: string) => `/api/v1/namespaces/${ns}/pods`,
  slices: (ns: string) => `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
  virtualServices: (ns: string) => `/apis/networking.istio.io/v1/namespaces/${ns}/virtualservices`,
  destinationRules: (ns: string) => `/apis/networking.istio.io/v1/namespaces/${ns}/destinationrules`,
};

export interface EchoVersion {
  version: string;
  backend: Backend;
  address: string;
}

export const to = (ns: string, subset: string, weight?: number) => ({
  destination: { host: echoHost(ns), subset },
  ...(weight === undefined ? {} : { weight }),
});

/** The VirtualService's http routes: x-user: jason to v2, the rest split `v1`/`v2` by weight. */
export function echoRoutes(ns: string, v1: number, v2: number): Obj[] {
  return [
    { name: "jason", match: [{ headers: { "x-user": { exact: "jason" } } }], route: [to(ns, "v2")] },
    { name: "split", route: [to(ns, "v1", v1), to(ns, "v2", v2)] },
  ];
}

export function virtualService(ns: string, http: Obj[]): Obj {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "echo", namespace: ns },
    spec: { hosts: [echoHost(ns)], http },
  };
}

/**
 * Creates the echo mesh in `ns`: the echo workloads (`createEchoWorkloads`), the DestinationRule with
 * subsets v1 and v2, and the VirtualService with `http`.
 */
export async function createEchoMesh(cluster: Cluster, ns: string, versions: EchoVersion[], http: Obj[]) {
  await createEchoWorkloads(cluster, ns, versions);
  await cluster.must("POST", paths.destinationRules(ns), {
    apiVersion: "networking.istio.io/v1",
    kind: "DestinationRule",
    metadata: { name: "echo", namespace: ns },
    spec: {
      host: echoHost(ns),
      subsets: versions.map(({ version }) => ({ name: version, labels: { version } })),
    },
  });
  await cluster.must("POST", paths.virtualServices(ns), virtualService(ns, http));
}

/**
 * Creates the Service `echo` (port 7070 `grpc`) in `ns` and, per version, a Pod (its IP and Ready
 * condition set through the status subresource) and an EndpointSlice naming it.
 */
export async function createEchoWorkloads(cluster: Cluster, ns: string, versions: EchoVersion[]) {
  await cluster.must("POST", paths.services(ns), {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "echo", namespace: ns },
    spec: { selector: { app: "echo" }, ports: [{ name: "grpc", port: ECHO_PORT, targetPort: ECHO_PORT }] },
  });
  for (const { version, backend, address } of versions) {
    const name = `echo-${version}`;
    await cluster.must("POST", paths.pods(ns), {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: ns, labels: { app: "echo", version } },
      spec: { containers: [{ name: "echo", image: "echo", ports: [{ name: "grpc", containerPort: backend.port }] }] },
    });
    // No kubelet: the test is the one that says where the pod runs and that it is ready.
    await cluster.must(
      "PATCH",
      `${paths.pods(ns)}/${name}/status`,
      {
        status: {
          phase: "Running",
          podIP: address,
          podIPs: [{ ip: address }],
          conditions: [{ type: "Ready", status: "True" }],
        },
      },
      { "content-type": "application/merge-patch+json" },
    );
    await cluster.must("POST", paths.slices(ns), {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace: ns, labels: { "kubernetes.io/service-name": "echo" } },
      addressType: address.includes(":") ? "IPv6" : "IPv4",
      endpoints: [
        { addresses: [address], conditions: { ready: true }, targetRef: { kind: "Pod", name, namespace: ns } },
      ],
      ports: [{ name: "grpc", port: backend.port, protocol: "TCP" }],
    });
  }
}

/** Replaces the VirtualService's http routes (a merge patch: the API server checks only the CRD schema). */
export function patchRoutes(cluster: Cluster, ns: string, http: Obj[]) {
  return cluster.must(
    "PATCH",
    `${paths.virtualServices(ns)}/echo`,
    { spec: { http } },
    { "content-type": "application/merge-patch+json" },
  );
}

// --- sluiced -----------------------------------------------------------------------------------

export interface Sluiced {
  child: ChildProcess;
  grpcAddress: string;
  /** The TLS port (ADS and the CA), when --secureGRPCAddr was given. */
  securePort: number | undefined;
  httpPort: number;
  /** The last lines it logged, for failure messages. */
  tail(lines?: number): string;
  /** GET of a debug endpoint on its admin HTTP port, parsed. */
  debug(name: string): Promise<unknown>;
  stop(): Promise<void>;
}

export interface SluicedOptions {
  /** --secureGRPCAddr; default "" (off, and with it the CA). */
  secureGrpcAddr?: string;
  /** --httpsAddr (the webhooks); default "" (off). */
  httpsAddr?: string;
  /** A MeshConfig file (--meshConfig). */
  meshConfig?: string;
  /** More flags. */
  args?: string[];
  /** Environment added to this process's. */
  env?: Record<string, string>;
}

/** Spawns bin/sluiced.js on the cluster's kubeconfig, every port on 127.0.0.1:0, and waits for its ports. */
export async function startSluiced(kubeconfigPath: string, options: SluicedOptions = {}): Promise<Sluiced> {
  const launch = sluicedLaunch();
  const child = spawn(
    process.execPath,
    [
      ...launch.nodeArgs,
      SLUICED,
      ...["--kubeconfig", kubeconfigPath],
      ...[
        "--grpcAddr",
        "127.0.0.1:0",
        "--secureGRPCAddr",
        options.secureGrpcAddr ?? "",
        "--httpsAddr",
        options.httpsAddr ?? "",
      ],
      ...["--httpAddr", "127.0.0.1:0", "--monitoringAddr", "127.0.0.1:0"],
      ...["--debounceAfter", "20ms", "--debounceMax", "1s"],
      ...(options.meshConfig ? ["--meshConfig", options.meshConfig] : []),
      ...(options.args ?? []),
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...launch.env, ...options.env },
    },
  );
  const lines: string[] = [];
  const keep = (line: string) => {
    lines.push(line);
    if (lines.length > 400) lines.splice(0, lines.length - 400);
  };
  let grpcPort: number | undefined;
  let securePort: number | undefined;
  let httpPort: number | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sluiced did not listen within 60 s:\n${tail()}`)), 60_000);
    const check = () => {
      if (grpcPort !== undefined && httpPort !== undefined) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`sluiced exited (${code ?? signal}) before listening:\n${tail()}`));
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      keep(line);
      try {
        const l = JSON.parse(line) as Record<string, unknown>;
        if (l.msg === "xDS server listening") {
          grpcPort = l.grpcPort as number;
          securePort = l.securePort as number | undefined;
        }
        if (l.msg === "admin HTTP server listening") httpPort = l.httpPort as number;
      } catch {}
      check();
    });
  });
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", keep);
  const tail = (n = 40) => lines.slice(-n).join("\n");
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await ready;
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    child,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    securePort,
    httpPort: httpPort as number,
    tail,
    async debug(name: string) {
      const res = await fetch(`http://127.0.0.1:${httpPort}/debug/${name}`);
      if (!res.ok) throw new Error(`/debug/${name}: ${res.status} ${await res.text()}`);
      return res.json();
    },
    stop,
  };
}

/** Istio's proxyless bootstrap (pkg/istio-agent/grpcxds) for a client `client.<ns>` at 127.0.0.1. */
export function bootstrap(grpcAddress: string, ns: string, id = `client.${ns}`): string {
  return JSON.stringify({
    xds_servers: [{ server_uri: grpcAddress, channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] }],
    node: {
      id: `sidecar~127.0.0.1~${id}~${domain(ns)}`,
      metadata: {
        NAMESPACE: ns,
        GENERATOR: "grpc",
        LABELS: { app: "client" },
        INSTANCE_IPS: "127.0.0.1",
        CLUSTER_ID: "Kubernetes",
        ISTIO_VERSION: "1.24.0",
      },
      locality: {},
    },
    server_listener_resource_name_template: "xds.istio.io/grpc/lds/inbound/%s",
  });
}

// --- the grpc-go client --------------------------------------------------------------------------

/**
 * grpc-go's xDS client as one long-lived process making calls one after the other (`-interval`),
 * so that config pushes reach a client that is already connected, as they do grpc-js's.
 */
export class GoClient {
  private readonly answers: string[] = [];
  private readonly stderr: string[] = [];
  private waiters: (() => void)[] = [];
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      this.answers.push(line.trim());
      for (const w of this.waiters.splice(0)) w();
    });
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => {
      this.stderr.push(line);
      if (this.stderr.length > 100) this.stderr.shift();
    });
    this.exited = new Promise((resolve) =>
      child.once("exit", (code) => {
        for (const w of this.waiters.splice(0)) w();
        resolve(code);
      }),
    );
  }

  /** `grpc-go-xds client` against `target`, bootstrapped with `bootstrapJson`. */
  static start(bin: string, bootstrapJson: string, target: string, args: string[] = []): GoClient {
    const child = spawn(
      bin,
      ["client", "-target", `xds:///${target}`, "-n", "10000000", "-interval", "5ms", "-timeout", "5s", ...args],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, GRPC_XDS_BOOTSTRAP_CONFIG: bootstrapJson } },
    );
    return new GoClient(child);
  }

  /** The answers of its next `n` calls, counted (an error counts as `error:<code>`); at most `timeoutMs`. */
  async next(n: number, timeoutMs = 60_000): Promise<Map<string, number>> {
    const start = this.answers.length;
    const deadline = Date.now() + timeoutMs;
    while (this.answers.length < start + n) {
      if (this.child.exitCode !== null)
        throw new Error(`grpc-go client exited (${this.child.exitCode}): ${this.log()}`);
      if (Date.now() > deadline)
        throw new Error(
          `grpc-go client made ${this.answers.length - start}/${n} calls in ${timeoutMs} ms: ${this.log()}`,
        );
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 1000).unref();
      });
    }
    const counts = new Map<string, number>();
    for (const a of this.answers.slice(start, start + n)) count(counts, a);
    return counts;
  }

  log(): string {
    return `last answers ${JSON.stringify(this.answers.slice(-3))}; stderr:\n${this.stderr.slice(-10).join("\n")}`;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Runs `grpc-go-xds client` to completion (`args` give `-n` and the rest) and counts its answers (at most 60 s). */
export async function goCalls(
  bin: string,
  bootstrapJson: string,
  target: string,
  args: string[],
): Promise<Map<string, number>> {
  const child = spawn(bin, ["client", "-target", `xds:///${target}`, "-timeout", "5s", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, GRPC_XDS_BOOTSTRAP_CONFIG: bootstrapJson },
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c;
  });
  child.stderr?.on("data", (c: Buffer) => {
    err += c;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  clearTimeout(timer);
  if (code === 2) throw new Error(`grpc-go client: usage or dial error: ${err.slice(-2000)}`);
  const counts = new Map<string, number>();
  for (const line of out.split("\n")) if (line.trim()) count(counts, line.trim());
  return counts;
}

function count(counts: Map<string, number>, answer: string): void {
  const key = answer.startsWith("ERROR ") ? `error:${/^ERROR (\w+)/.exec(answer)?.[1]}` : answer;
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** Polls `probe` until it returns true, at most `timeoutMs`; the failure names `what` and the last observation. */
export async function eventually(
  what: string,
  probe: () => Promise<{ ok: boolean; seen: unknown }>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen: unknown;
  for (;;) {
    const r = await probe().catch((err: Error) => ({ ok: false, seen: `error: ${err.message}` }));
    if (r.ok) return;
    seen = r.seen;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}; last seen: ${JSON.stringify(seen)}`);
    await sleep(250);
  }
}

export const show = (m: Map<string, number>) => JSON.stringify(Object.fromEntries([...m].sort()));
