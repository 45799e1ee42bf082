// The agent beside a proxyless gRPC workload (Istio's pilot-agent with DISABLE_ENVOY): it writes the
// gRPC xDS bootstrap from the pod's environment, serves the status port, and stays up until SIGTERM
// or /quitquitquit.
import type { JsonObject } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import { parse as parseYaml } from "yaml";
import type { NodeType } from "../model/index.ts";
import { type GrpcBootstrap, grpcBootstrap, writeGrpcBootstrap } from "./grpc-bootstrap.ts";
import { grpcReadyProbe } from "./grpc-ready.ts";
import { AgentMetrics } from "./metrics.ts";
import { type Env, nodeMetadata, proxyIdentity, serviceNode } from "./node.ts";
import { startStatusServer } from "./status-server.ts";

/** Istio's ProxyConfig defaults the agent relies on. */
export const DEFAULT_DISCOVERY_ADDRESS = "istiod.istio-system.svc:15012";
export const DEFAULT_STATUS_PORT = 15020;
/** Where the downward API mounts the pod's labels and annotations (constants.PodInfo*Path). */
export const DEFAULT_POD_INFO_DIR = "./etc/istio/pod";

/** The PROXY_CONFIG variable (ProxyConfig as YAML or JSON), if set. */
export function proxyConfigFromEnv(env: Env): JsonObject | undefined {
  if (!env.PROXY_CONFIG) return undefined;
  const parsed: unknown = parseYaml(env.PROXY_CONFIG);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error("PROXY_CONFIG is not a ProxyConfig object");
  }
  return parsed as JsonObject;
}

export interface BootstrapSettings {
  env: Env;
  discoveryAddress: string;
  /** The whole xDS node id; built from the environment when absent. */
  nodeId?: string;
  type?: NodeType;
  domain?: string;
  /** Istio's OUTPUT_CERTS: where the workload certificates are kept. */
  certDir?: string;
  channelCreds?: "insecure" | "tls";
  podInfoDir?: string;
  /** The host's private addresses (looked up when absent). */
  hostIPs?: readonly string[];
}

/** The gRPC bootstrap for this pod, as pilot-agent's generateGRPCBootstrap makes it. */
export function podGrpcBootstrap(settings: BootstrapSettings): GrpcBootstrap {
  const identity = proxyIdentity(settings.env, settings);
  const { metadata, locality } = nodeMetadata({
    env: settings.env,
    instanceIPs: identity.ipAddresses,
    proxyConfig: proxyConfigFromEnv(settings.env),
    discoveryAddress: settings.discoveryAddress,
    podInfoDir: settings.podInfoDir ?? DEFAULT_POD_INFO_DIR,
  });
  return grpcBootstrap({
    nodeId: settings.nodeId ?? serviceNode(identity),
    metadata,
    locality,
    discoveryAddress: settings.discoveryAddress,
    certDir: settings.certDir,
    channelCreds: settings.channelCreds,
  });
}

export interface AgentSettings extends BootstrapSettings {
  bootstrapPath: string;
  statusPort: number;
  /** Where the status server listens (every address when absent). */
  statusHost?: string;
  log: Logger;
}

export interface RunningAgent {
  statusPort: number;
  /** Settles with the reason once the agent has stopped. */
  stopped: Promise<string>;
  stop(reason: string): Promise<void>;
}

export async function runAgent(settings: AgentSettings): Promise<RunningAgent> {
  const { env, log } = settings;
  writeGrpcBootstrap(settings.bootstrapPath, podGrpcBootstrap(settings));
  log.info({ path: settings.bootstrapPath }, "gRPC xDS bootstrap written");

  let stop: (reason: string) => Promise<void> = async () => {};
  const status = await startStatusServer({
    host: settings.statusHost,
    port: settings.statusPort,
    nodeType: settings.type ?? "sidecar",
    podIP: env.INSTANCE_IP ?? "",
    kubeAppProbers: env.ISTIO_KUBE_APP_PROBERS || undefined,
    prometheusAnnotations: env.ISTIO_PROMETHEUS_ANNOTATIONS,
    legacyLocalhostProbes: env.REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION === "true",
    metricsLocalhostOnly: env.METRICS_LOCALHOST_ACCESS_ONLY === "true",
    readyProbes: [grpcReadyProbe(settings.bootstrapPath)],
    metrics: new AgentMetrics(),
    shutdown: (reason) => void stop(reason),
    // A proxyless workload has no proxy connections for the agent to drain.
    drain: () => log.info("drain requested; no proxy to drain"),
    log,
  });

  let resolveStopped: (reason: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => {
    resolveStopped = resolve;
  });
  let stopping = false;
  stop = async (reason) => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, "agent stopping");
    await status.close();
    resolveStopped(reason);
  };
  return { statusPort: status.port, stopped, stop };
}
