// sluice-agent: the node agent beside a proxyless gRPC workload (Istio's pilot-agent).
export {
  type AgentSettings,
  type BootstrapSettings,
  DEFAULT_DISCOVERY_ADDRESS,
  DEFAULT_POD_INFO_DIR,
  DEFAULT_STATUS_PORT,
  podGrpcBootstrap,
  proxyConfigFromEnv,
  type RunningAgent,
  runAgent,
} from "./agent.ts";
export { type Prober, parseKubeAppProbers } from "./app-probers.ts";
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
export { type StatusServer, type StatusServerOptions, startStatusServer } from "./status-server.ts";
