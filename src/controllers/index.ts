// Controllers that write to the cluster, each run by the leader of its Lease (Istio's election ids).
export {
  type AmbientStatusOptions,
  type AmbientStatusTarget,
  AmbientStatusWriter,
  conditionsPatch,
  currentConditions,
  storeStatusTarget,
} from "./ambient-status.ts";
export {
  type AnalysisStatusOptions,
  type AnalysisStatusTarget,
  AnalysisStatusWriter,
  type ConfigAnalysis,
  type ValidationMessage,
} from "./analysis-status.ts";
export { GatewayClassCreator, type GatewayClassCreatorOptions } from "./gateway-classes.ts";
export { GatewayDeploymentController, type GatewayDeploymentOptions } from "./gateway-deployment.ts";
export { InferencePoolServices, type InferencePoolServicesOptions } from "./inference-pool-services.ts";
export { type IngressStatusOptions, type IngressStatusTarget, IngressStatusWriter } from "./ingress-status.ts";
export { type IpAutoallocateOptions, type IpAutoallocateTarget, IpAutoallocator } from "./ip-autoallocate.ts";
export type { KubeRequests } from "./kube-requests.ts";
export {
  defaultRevisionPreempts,
  LEASE_HOLDER_KEY,
  LeaseElection,
  type LeaseElectionOptions,
  REMOTE_HOLDER_PREFIX,
} from "./lease-election.ts";
export {
  ROOT_CERT_CONFIGMAP,
  ROOT_CERT_KEY,
  RootCertPublisher,
  type RootCertPublisherOptions,
} from "./root-cert-publisher.ts";
export {
  DEFAULT_REVISION_VALIDATOR,
  DEFAULT_TAG_WEBHOOK,
  isMineIn,
  type RevisionTags,
  TagWatcher,
  type TagWatcherOptions,
} from "./tag-watcher.ts";
export { WebhookPatcher, type WebhookPatcherOptions } from "./webhook-patcher.ts";

/** Istio's election ids (pilot/pkg/leaderelection). */
export const ELECTION_IDS = {
  namespaceController: "istio-namespace-controller-election",
  gatewayStatus: "istio-gateway-status-leader",
  /** Per revision: `-<revision>` is appended. */
  gatewayDeployment: "istio-gateway-deployment",
  ingress: "istio-leader",
  ipAutoallocate: "istio-ip-autoallocate",
  analyze: "istio-analyze-leader",
  /** Ambient's status (a prioritized Lease, as istio-leader). */
  status: "istio-status-leader",
} as const;
export {
  MULTICLUSTER_SECRET_LABEL,
  type RemoteClusterInfo,
  type RemoteClusterRegistry,
  RemoteClusters,
  type RemoteClustersOptions,
  remoteKubeConfig,
  type ServingCluster,
} from "./remote-clusters.ts";
export {
  CONTROL_PLANE_CLUSTERS_ANNOTATION,
  namesControlPlaneCluster,
  RemoteNamespaceController,
  type RemoteNamespaceControllerOptions,
} from "./remote-namespace-controller.ts";
export {
  WorkloadAutoRegistration,
  type WorkloadAutoRegistrationOptions,
  type WorkloadEntryTarget,
} from "./workload-autoregistration.ts";
