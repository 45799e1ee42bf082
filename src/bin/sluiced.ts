// sluiced: the control plane (Istio's istiod). Flags and start-up only.
// Today it loads the mesh config and feeds the config store from the config directory (watched)
// and from a cluster (--kubeconfig); xDS serving arrives with issue 4.
import { readFileSync } from "node:fs";
import { pino } from "pino";
import { Registry } from "prom-client";
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { type DeclaredOptions, declaredFlagNames, unknownCommandLineFlags } from "../cli/index.ts";
import { loadMeshConfig } from "../config/mesh.ts";
import { ConfigStore, FileSource, KubeSource, loadKubeConfig } from "../sources/index.ts";

const argv = yargs(hideBin(process.argv))
  .scriptName("sluiced")
  .env("SLUICE")
  .option("configDir", {
    type: "string",
    describe: "Directory of Istio/Gateway API/Kubernetes YAML to serve (watched)",
  })
  .option("kubeconfig", { type: "string", describe: "kubeconfig file of a cluster to take config and workloads from" })
  .option("meshConfig", { type: "string", describe: "MeshConfig YAML file (Istio's defaults when absent)" })
  .option("log-level", { type: "string", default: "info", choices: ["debug", "info", "warn", "error"] })
  // Not .strict(): it would also reject SLUICE_* variables meant for other tools; check only the command line.
  .check((_argv, options) => {
    const declared = declaredFlagNames(options as unknown as DeclaredOptions);
    const unknown = unknownCommandLineFlags(hideBin(process.argv), declared);
    return unknown.length === 0 || `Unknown argument: ${unknown.join(", ")}`;
  }, true)
  .help()
  .parseSync();

const log = pino({ name: "sluiced", level: argv["log-level"] });

/** What start-up started, to be stopped on shutdown. */
interface Running {
  stop(): Promise<void> | void;
}

async function start(): Promise<Running[]> {
  const { mesh, warnings } = loadMeshConfig(argv.meshConfig ? readFileSync(argv.meshConfig, "utf8") : undefined);
  for (const warning of warnings) log.warn({ meshConfig: argv.meshConfig }, warning);
  log.info({ trustDomain: mesh.trustDomain, rootNamespace: mesh.rootNamespace }, "mesh config loaded");

  // The process's metrics, served at /metrics once the admin server is there.
  const metrics = new Registry();
  // An object both in the config directory and in the cluster: the file wins.
  const store = new ConfigStore({
    sourceOrder: ["file", "kubernetes"],
    metrics,
    log: log.child({ component: "config" }),
  });
  const running: Running[] = [];
  if (argv.configDir) {
    const files = new FileSource({ dir: argv.configDir, store, log: log.child({ source: "file" }) });
    running.push(files);
    await files.start();
  }
  if (argv.kubeconfig) {
    const cluster = new KubeSource({
      kubeConfig: loadKubeConfig(argv.kubeconfig),
      writer: store,
      discoverySelectors: mesh.discoverySelectors ?? [],
      log: log.child({ source: "kubernetes" }),
    });
    running.push(cluster);
    log.info({ kubeconfig: argv.kubeconfig }, "listing the cluster");
    await cluster.start();
  }

  const byKind: Record<string, number> = {};
  for (const { key } of store.list()) byKind[key.kindKey] = (byKind[key.kindKey] ?? 0) + 1;
  log.info(
    { configDir: argv.configDir, objects: store.list().length, byKind, problems: store.problems().length },
    "config loaded",
  );
  return running;
}

let running: Running[] = [];
try {
  running = await start();
} catch (err) {
  log.fatal((err as Error).message);
  process.exit(1);
}
// Stay up until told to stop, as a control plane does; SIGINT/SIGTERM end the process cleanly.
const keepAlive = setInterval(() => {}, 1 << 30);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    log.info({ signal }, "shutting down");
    clearInterval(keepAlive);
    await Promise.all(running.map((r) => r.stop()));
  });
}
