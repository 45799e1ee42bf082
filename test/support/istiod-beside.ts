// A cluster of its own with istiod beside a controller of Sluice's under test: istiod (the peer build,
// in istio-system, where it takes its Leases) reads the namespace labelled `<label>: istiod`, the
// test's controller the one labelled `<label>: sluice`, each given the same objects and steps.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster } from "../cluster/index.ts";
import { type ControlPlane, startIstiod } from "../compare/control-planes.ts";

export interface IstiodBeside {
  cluster: Cluster;
  /** The namespace each side reads. */
  namespaces: { istiod: string; sluice: string };
  /** istiod, serving. */
  istiod: ControlPlane;
  /** Stops istiod and the cluster (stop the test's controller first). */
  stop(): Promise<void>;
}

export interface IstiodBesideOptions {
  /** The label of the namespaces each side's discoverySelectors select. */
  selectLabel: string;
  /** Names the work folder. */
  name: string;
  /** istiod's environment beyond its defaults. */
  env?: NodeJS.ProcessEnv;
  /** Run once the namespaces exist and before istiod starts (objects istiod must find at start). */
  prepare?: (cluster: Cluster, namespaces: IstiodBeside["namespaces"]) => Promise<unknown>;
}

export async function startIstiodBeside(options: IstiodBesideOptions): Promise<IstiodBeside> {
  const cluster = await Cluster.start();
  const work = mkdtempSync(join(tmpdir(), `sluice-${options.name}-`));
  let stopIstiod: (() => Promise<void>) | undefined;
  const stop = async () => {
    await stopIstiod?.();
    await cluster.stop();
    rmSync(work, { recursive: true, force: true });
  };
  try {
    const kubeconfig = join(work, "kubeconfig");
    cluster.writeKubeconfig(kubeconfig);
    const meshFile = join(work, "mesh.yaml");
    writeFileSync(meshFile, `discoverySelectors:\n- matchLabels: {${options.selectLabel}: istiod}\n`);
    await cluster.must("POST", "/api/v1/namespaces", { metadata: { name: "istio-system" } });
    const namespaces = {
      istiod: await cluster.namespace("istiod", { [options.selectLabel]: "istiod" }),
      sluice: await cluster.namespace("sluice", { [options.selectLabel]: "sluice" }),
    };
    await options.prepare?.(cluster, namespaces);
    const istiod = await startIstiod({ kubeconfig, meshFile, workDir: work }, options.env);
    stopIstiod = istiod.plane.stop;
    await istiod.ready();
    return { cluster, namespaces, istiod: istiod.plane, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
