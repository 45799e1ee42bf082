// `sluice remote-clusters` (istioctl's): the clusters each control plane reads endpoints from, with the
// remote secret that named them and their sync status, from each one's /debug/clusterz (over xDS:
// --xds-address, or every running istiod pod of the kubeconfig's cluster), as istioctl's table.
import type { CommandModule } from "yargs";
import { reportingFailures } from "./command-error.ts";
import { type ControlPlaneArgs, usesCluster, withControlPlaneOptions } from "./control-plane-options.ts";
import { EXIT_OK } from "./exit-codes.ts";
import { alignTabs } from "./proxy-config-tabwriter.ts";

/** Istio's cluster.DebugInfo, as /debug/clusterz lists it. */
interface ClusterInfo {
  id: string;
  secretName: string;
  syncStatus: string;
}

/** istioctl's table: by control plane, then in clusterz's order; a pod's revision from its istio.io/rev label. */
export function remoteClustersTable(
  byControlPlane: ReadonlyMap<string, readonly ClusterInfo[]>,
  revisions: ReadonlyMap<string, string>,
): string {
  const lines = ["NAME\tSECRET\tSTATUS\tISTIOD\tREVISION\n"];
  for (const istiod of [...byControlPlane.keys()].sort()) {
    for (const c of byControlPlane.get(istiod) ?? []) {
      lines.push(`${c.id}\t${c.secretName}\t${c.syncStatus}\t${istiod}\t${revisions.get(istiod) ?? ""}\n`);
    }
  }
  return alignTabs(lines.join(""), { minWidth: 0, padding: 5 });
}

export const remoteClustersCommand: CommandModule<object, ControlPlaneArgs> = {
  command: "remote-clusters",
  describe: "Lists the remote clusters each control plane instance is connected to",
  builder: (yargs) =>
    withControlPlaneOptions(yargs)
      .example("$0 remote-clusters", "From each istiod pod of the kubeconfig's cluster")
      .example(
        "$0 remote-clusters --xds-address localhost:15010 --plaintext",
        "From a control plane's address",
      ) as never,
  handler: (argv) =>
    reportingFailures(async () => {
      const [xds, { DEBUG_TYPE_PREFIX }] = await Promise.all([import("./xds-client.ts"), import("../xds/types.ts")]);
      const responses = await xds.requestNamedControlPlanes(argv, `${DEBUG_TYPE_PREFIX}clusterz`);
      const byControlPlane = new Map<string, ClusterInfo[]>();
      // By pod name, as istioctl keys them (clusterz's answer carries no control plane identifier).
      for (const { name: id, response } of responses) {
        const [body = ""] = xds.debugBodies(response);
        let clusters: unknown;
        try {
          clusters = JSON.parse(body);
        } catch {
          throw new Error(`the control plane ${id}: /debug/clusterz answered ${JSON.stringify(body.trim())}`);
        }
        byControlPlane.set(id, Array.isArray(clusters) ? (clusters as ClusterInfo[]) : []);
      }
      const revisions = new Map<string, string>();
      if (usesCluster(argv)) {
        const { clusterAccess } = await import("./kube-access.ts");
        const pods = await clusterAccess(argv).controlPlanePods(argv.istioNamespace ?? "istio-system");
        for (const pod of pods) {
          const revision = pod.metadata.labels?.["istio.io/rev"];
          if (revision !== undefined) revisions.set(pod.metadata.name, revision);
        }
      }
      process.stdout.write(remoteClustersTable(byControlPlane, revisions));
      process.exitCode = EXIT_OK;
    }),
};
