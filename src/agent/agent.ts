// The agent beside a proxyless gRPC workload (Istio's pilot-agent with DISABLE_ENVOY): it writes the
// gRPC xDS bootstrap from the pod's environment, serves the status port, keeps the workload
// certificate fresh (files for gRPC, SDS for Envoy) when asked to, and stays up until SIGTERM or
// /quitquitquit.
import { readFileSync } from "node:fs";
import type { JsonObject } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import { parse as parseYaml } from "yaml";
import { loadMeshConfig, mergeProxyConfig, type ProxyConfig, parseGoDuration } from "../config/index.ts";
import type { NodeType } from "../model/index.ts";
import { keyAlgorithmFromEnv, WorkloadCertificates, workloadIdentity } from "./certs.ts";
import { caClientSigner } from "./certs-client.ts";
import { type GrpcBootstrap, grpcBootstrap, writeGrpcBootstrap } from "./grpc-bootstrap.ts";
import { grpcReadyProbe } from "./grpc-ready.ts";
import { AgentMetrics } from "./metrics.ts";
import { type Env, nodeMetadata, proxyIdentity, serviceNode } from "./node.ts";
import { startSdsServer } from "./sds.ts";
import { startStatusServer } from "./status-server.ts";

/** Where pilot-agent reads the mesh config (its --meshConfig default). */
export const DEFAULT_MESH_CONFIG_PATH = "./etc/istio/config/mesh";
/** Where the downward API mounts the pod's labels and annotations (constants.PodInfo*Path). */
export const DEFAULT_POD_INFO_DIR = "./etc/istio/pod";

/**
 * The proxy's ProxyConfig as pilot-agent builds it: Istio's defaults, the mesh config file's
 * defaultConfig (when the file exists), then the PROXY_CONFIG variable (YAML or JSON) field by field.
 */
export function agentProxyConfig(env: Env, meshConfigPath: string): ProxyConfig {
  let meshText: string | undefined;
  try {
    meshText = readFileSync(meshConfigPath, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const base = loadMeshConfig(meshText).mesh.defaultConfig ?? {};
  if (!env.PROXY_CONFIG) return base;
  const overlay: unknown = parseYaml(env.PROXY_CONFIG);
  if (typeof overlay !== "object" || overlay === null || Array.isArray(overlay)) {
    throw new Error("PROXY_CONFIG is not a ProxyConfig object");
  }
  return mergeProxyConfig(base, overlay as JsonObject);
}

export interface BootstrapSettings {
  env: Env;
  /** The proxy's ProxyConfig (see agentProxyConfig); its discoveryAddress is where istiod is. */
  proxyConfig: ProxyConfig;
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
    proxyConfig: settings.proxyConfig,
    podInfoDir: settings.podInfoDir ?? DEFAULT_POD_INFO_DIR,
  });
  return grpcBootstrap({
    nodeId: settings.nodeId ?? serviceNode(identity),
    metadata,
    locality,
    discoveryAddress: settings.proxyConfig.discoveryAddress ?? "",
    certDir: settings.certDir,
    channelCreds: settings.channelCreds,
  });
}

/** Where the workload certificate comes from (the CA) and where SDS is served. */
export interface AgentCertificateSettings {
  /** CA_ADDR `host:port`. */
  caAddress: string;
  /** CA_ROOT_CA: the roots the CA's serving certificate chains to. */
  caRootCertPath: string;
  /** The name the CA's certificate carries when the address's host is not it (ISTIOD_SAN). */
  caServerName?: string;
  /** The bearer token file (istio-token). */
  tokenPath: string;
  /** The Unix socket of the SDS server for Envoy; none when absent. */
  sdsSocketPath?: string;
}

/** SECRET_TTL (Go duration, 24h by default) in seconds. */
function secretTtlSeconds(env: Env): number | undefined {
  if (!env.SECRET_TTL) return undefined;
  const parsed = parseGoDuration(env.SECRET_TTL);
  if ("error" in parsed) throw new Error(`SECRET_TTL: ${parsed.error}`);
  return Math.floor(parsed.ms / 1000);
}

export interface AgentSettings extends BootstrapSettings {
  bootstrapPath: string;
  /** Fetch and renew the workload certificate into certDir (and serve SDS); nothing when absent. */
  certificates?: AgentCertificateSettings;
  /** Where the status server listens (every address when absent). */
  statusHost?: string;
  log: Logger;
}

export interface RunningAgent {
  /** The status server's port; undefined when the ProxyConfig's statusPort is 0 (no status server). */
  statusPort: number | undefined;
  /** Settles with the reason once the agent has stopped. */
  stopped: Promise<string>;
  stop(reason: string): Promise<void>;
}

export async function runAgent(settings: AgentSettings): Promise<RunningAgent> {
  const { env, log } = settings;
  writeGrpcBootstrap(settings.bootstrapPath, podGrpcBootstrap(settings));
  log.info({ path: settings.bootstrapPath }, "gRPC xDS bootstrap written");
  const certificates = settings.certificates && workloadCertificates(settings, settings.certificates);
  // Readiness waits for the files; the first certificate arrives in the background, retried until it does.
  certificates?.start().catch(() => {});
  const sds =
    certificates && settings.certificates?.sdsSocketPath
      ? await startSdsServer({ socketPath: settings.certificates.sdsSocketPath, certificates, log })
      : undefined;

  let stop: (reason: string) => Promise<void> = async () => {};
  // As pilot-agent, a status port of 0 means no status server.
  const statusPort = settings.proxyConfig.statusPort ?? 0;
  const status =
    statusPort > 0
      ? await startStatusServer({
          host: settings.statusHost,
          port: statusPort,
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
        })
      : undefined;

  let resolveStopped: (reason: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => {
    resolveStopped = resolve;
  });
  let stopping = false;
  stop = async (reason) => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, "agent stopping");
    certificates?.stop();
    await sds?.close();
    await status?.close();
    resolveStopped(reason);
  };
  return { statusPort: status?.port, stopped, stop };
}

function workloadCertificates(settings: AgentSettings, ca: AgentCertificateSettings): WorkloadCertificates {
  const { env } = settings;
  const certificates: WorkloadCertificates = new WorkloadCertificates({
    identity: workloadIdentity(env),
    sign: caClientSigner({
      address: ca.caAddress,
      rootCertPath: ca.caRootCertPath,
      serverName: ca.caServerName,
      tokenPath: ca.tokenPath,
      // The current certificate also vouches for the workload while it is valid (a token may be gone).
      clientCertificate: () => {
        const current = certificates.current;
        return current && current.expiresAt > Date.now() ? current : undefined;
      },
      clusterId: env.ISTIO_META_CLUSTER_ID,
    }),
    outputDir: settings.certDir,
    ttlSeconds: secretTtlSeconds(env),
    keyAlgorithm: keyAlgorithmFromEnv(env),
    log: settings.log,
  });
  return certificates;
}
