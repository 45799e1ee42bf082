// Readiness of a proxyless workload (pilot/cmd/pilot-agent/status/grpcready): its gRPC bootstrap file
// loads, and the certificate files its file_watcher provider names exist.
import { existsSync } from "node:fs";
import { fileWatcherPaths, type GrpcBootstrap, loadGrpcBootstrap } from "./grpc-bootstrap.ts";

/** A readiness check: returns when ready, throws why not. */
export type ReadyProbe = () => void;

export function grpcReadyProbe(bootstrapPath: string): ReadyProbe {
  // Loaded once, as Istio does: the agent writes it once at start.
  let bootstrap: GrpcBootstrap | undefined;
  return () => {
    if (!bootstrap) {
      try {
        bootstrap = loadGrpcBootstrap(bootstrapPath);
      } catch (err) {
        throw new Error(`failed loading ${bootstrapPath}: ${(err as Error).message}`);
      }
    }
    for (const path of fileWatcherPaths(bootstrap)) {
      if (!existsSync(path)) throw new Error(`${path} does not exist`);
    }
  };
}
