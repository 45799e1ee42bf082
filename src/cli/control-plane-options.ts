// The flags of the commands that ask a control plane (istioctl's central options), and whether they
// reach it through a cluster: kept apart from the xDS client (xds-client.ts) so that these commands'
// flags, help and decisions load neither gRPC nor the Kubernetes client.
import type { Argv } from "yargs";
import { kubeconfigAvailable } from "./kubeconfig.ts";

/** What the control-plane options give (istioctl's central options). */
export interface ControlPlaneArgs {
  "xds-address"?: string;
  "cert-dir"?: string;
  insecure: boolean;
  plaintext: boolean;
  "token-file"?: string;
  timeout: number;
  istioNamespace?: string;
  kubeconfig?: string;
  context?: string;
  revision?: string;
  "xds-port"?: number;
}

/** The flags of every command that talks to the control plane over xDS (--xds-address is global). */
export function withControlPlaneOptions<T>(yargs: Argv<T>) {
  return yargs
    .option("cert-dir", {
      type: "string",
      describe: "Directory with cert-chain.pem, key.pem and root-cert.pem for mTLS to the control plane",
    })
    .option("insecure", { type: "boolean", default: false, describe: "Skip verifying the control plane's certificate" })
    .option("plaintext", { type: "boolean", default: false, describe: "Plaintext xDS (istiod's 15010) instead of TLS" })
    .option("token-file", { type: "string", describe: "A file holding a bearer token for the TLS port" })
    .option("timeout", { type: "number", default: 30, describe: "Seconds to wait for the control plane" })
    .option("revision", {
      type: "string",
      describe: "Without --xds-address: the control plane revision (istiod pods labelled istio.io/rev=<revision>)",
    })
    .option("xds-port", {
      type: "number",
      describe: "Without --xds-address: the istiod pods' port to forward (default 15012, 15010 with --plaintext)",
    });
}

/** Whether the flags reach the control plane through a cluster: no --xds-address, and a kubeconfig. */
export function usesCluster(argv: ControlPlaneArgs): boolean {
  return !argv["xds-address"] && kubeconfigAvailable(argv.kubeconfig);
}
