// A test cluster of its own for istiod beside one of Sluice's controllers, each given a namespace:
// istiod reads only the one labelled `<label>: istiod` (the discovery selectors of its mesh file),
// Sluice's side is the one labelled `<label>: sluice`. istiod runs in istio-system, as installed.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster } from "../cluster/index.ts";
import type { PlaneInputs } from "../compare/control-planes.ts";

export interface IstiodBeside {
  cluster: Cluster;
  /** What startIstiod takes. */
  inputs: PlaneInputs;
  namespaces: { istiod: string; sluice: string };
  /** Stops the cluster and removes the work folder (once istiod is stopped). */
  stop(): Promise<void>;
}

export async function istiodBesideCluster(name: string, label: string): Promise<IstiodBeside> {
  const cluster = await Cluster.start();
  const workDir = mkdtempSync(join(tmpdir(), `sluice-${name}-`));
  const kubeconfig = join(workDir, "kubeconfig");
  cluster.writeKubeconfig(kubeconfig);
  const meshFile = join(workDir, "mesh.yaml");
  writeFileSync(meshFile, `discoverySelectors:\n- matchLabels: {${label}: istiod}\n`);
  await cluster.must("POST", "/api/v1/namespaces", { metadata: { name: "istio-system" } });
  const namespaces = {
    istiod: await cluster.namespace("istiod", { [label]: "istiod" }),
    sluice: await cluster.namespace("sluice", { [label]: "sluice" }),
  };
  const stop = async () => {
    await cluster.stop();
    rmSync(workDir, { recursive: true, force: true });
  };
  return { cluster, inputs: { kubeconfig, meshFile, workDir }, namespaces, stop };
}
