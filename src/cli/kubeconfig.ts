// Whether the CLI has a cluster to reach, decided without loading the Kubernetes client: commands
// that may work from a cluster or from flags ask this before loading it (kube-access.ts).
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** Where client-node's loadFromDefault finds in-cluster credentials. */
const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

/**
 * Whether there is a cluster to reach: client-node's loadFromDefault otherwise falls back to
 * http://localhost:8080, which is no configuration at all.
 */
export function kubeconfigAvailable(kubeconfigPath?: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(
    kubeconfigPath ||
      env.KUBECONFIG ||
      existsSync(join(homedir(), ".kube", "config")) ||
      existsSync(SERVICE_ACCOUNT_TOKEN),
  );
}
