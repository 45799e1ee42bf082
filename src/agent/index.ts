// sluice-agent: the node agent beside a proxyless gRPC workload (Istio's pilot-agent).
export {
  type AgentCertificateSettings,
  type AgentSettings,
  agentProxyConfig,
  type BootstrapSettings,
  DEFAULT_MESH_CONFIG_PATH,
  DEFAULT_POD_INFO_DIR,
  podGrpcBootstrap,
  type RunningAgent,
  runAgent,
} from "./agent.ts";
export { type Prober, parseKubeAppProbers } from "./app-probers.ts";
export {
  type CsrSigner,
  keyAlgorithmFromEnv,
  rotationDelayMs,
  WorkloadCertificates,
  type WorkloadCertificatesOptions,
  type WorkloadSecret,
  workloadIdentity,
  writeSecretFiles,
} from "./certs.ts";
export { type CaClientOptions, caClientSigner, DEFAULT_CA_ROOT_CERT_PATH, DEFAULT_TOKEN_PATH } from "./certs-client.ts";
export {
  DEFAULT_GRPC_BOOTSTRAP_PATH,
  type GrpcBootstrap,
  grpcBootstrap,
  loadGrpcBootstrap,
  SERVER_LISTENER_NAME_TEMPLATE,
  writeGrpcBootstrap,
} from "./grpc-bootstrap.ts";
export { grpcReadyProbe, type ReadyProbe } from "./grpc-ready.ts";
export { AgentMetrics } from "./metrics.ts";
export { type Env, nodeMetadata, type ProxyIdentity, proxyIdentity, serviceNode } from "./node.ts";
export { DEFAULT_SDS_SOCKET_PATH, type SdsServer, startSdsServer, workloadSecretResource } from "./sds.ts";
export { type StatusServer, type StatusServerOptions, startStatusServer } from "./status-server.ts";
export { type WaitOptions, waitUntilReady } from "./wait.ts";
export {
  DEFAULT_ZDS_ACK_TIMEOUT_MS,
  DEFAULT_ZTUNNEL_SOCKET_PATH,
  type ZdsPod,
  ZdsServer,
  type ZdsServerOptions,
} from "./zds-server.ts";
