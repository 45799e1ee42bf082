export {
  type ApiResponse,
  CLUSTER_ENV,
  CLUSTER_PEERS,
  Cluster,
  type ClusterInfo,
  type ClusterOptions,
  clusterSkipReason,
  defaultCrdDir,
  SERVICE_ACCOUNT_ISSUER,
  sharedCluster,
  startCluster,
} from "./cluster.ts";
export { inferencePoolCrdFile } from "./inference-crd.ts";
export { type ClusterPki, makeClusterPki } from "./pki.ts";
