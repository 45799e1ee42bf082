// The ADS server: streams, subscriptions, ACK/NACK, pushes, authentication and sync status.
export {
  type AuthContext,
  type Authenticator,
  authenticate,
  type Caller,
  ClientCertAuthenticator,
  checkConnectionIdentity,
  parseSpiffeId,
  type SpiffeId,
} from "./auth.ts";
export type { AckInfo, ConnectionStatus, NackInfo, SentInfo, TypeSyncStatus } from "./connection.ts";
export { type BuildInfo, type ControlPlaneInstance, controlPlaneIdentifier } from "./control-plane.ts";
export type { HealthReport } from "./env.ts";
export { XdsMetrics } from "./metrics.ts";
export { PushQueue } from "./push-queue.ts";
export { addReflection, Reflection } from "./reflection.ts";
export {
  adsServiceDefinition,
  type BoundPorts,
  type ConnectionHooks,
  type ConnectionInfo,
  type ListenOptions,
  maxReceiveMessageBytesFromEnv,
  pushThrottleFromEnv,
  type TlsFiles,
  type TlsProviders,
  XdsServer,
  type XdsServerOptions,
} from "./server.ts";
