// sluiced: the control plane (Istio's istiod). Flags and start-up only.
// Today it loads the mesh config and the config directory through the one validation path and keeps
// the valid objects; the store, watches and xDS serving arrive with issues 3 and 4.
import { readFileSync } from "node:fs";
import { pino } from "pino";
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { type DeclaredOptions, declaredFlagNames, unknownCommandLineFlags } from "../cli/index.ts";
import { readConfigPaths } from "../config/decode.ts";
import { type ConfigObject, objectRef, validateObject } from "../config/index.ts";
import { loadMeshConfig } from "../config/mesh.ts";

const argv = yargs(hideBin(process.argv))
  .scriptName("sluiced")
  .env("SLUICE")
  .option("configDir", { type: "string", describe: "Directory of Istio/Gateway API/Kubernetes YAML to serve" })
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

function start(): void {
  const { mesh, warnings } = loadMeshConfig(argv.meshConfig ? readFileSync(argv.meshConfig, "utf8") : undefined);
  for (const warning of warnings) log.warn({ meshConfig: argv.meshConfig }, warning);
  log.info({ trustDomain: mesh.trustDomain, rootNamespace: mesh.rootNamespace }, "mesh config loaded");

  const accepted: ConfigObject[] = [];
  if (argv.configDir) {
    for (const doc of readConfigPaths([argv.configDir])) {
      const where = `${doc.position.file}:${doc.position.line}`;
      if (!doc.object) {
        log.error({ where }, doc.error ?? "unreadable document");
        continue;
      }
      const result = validateObject(doc.object);
      const ref = `${doc.object.kind} ${objectRef(doc.object)}`;
      for (const w of result.warnings) log.warn({ where, path: w.path }, `${ref}: ${w.message}`);
      if (result.errors.length > 0) {
        for (const e of result.errors) log.error({ where, path: e.path }, `${ref} rejected: ${e.message}`);
        continue;
      }
      accepted.push(doc.object);
    }
  }
  const byKind: Record<string, number> = {};
  for (const obj of accepted) byKind[obj.kind] = (byKind[obj.kind] ?? 0) + 1;
  log.info({ configDir: argv.configDir, objects: accepted.length, byKind }, "config loaded");
}

try {
  start();
} catch (err) {
  log.fatal((err as Error).message);
  process.exit(1);
}
// Stay up until told to stop, as a control plane does; SIGINT/SIGTERM end the process cleanly.
const keepAlive = setInterval(() => {}, 1 << 30);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log.info({ signal }, "shutting down");
    clearInterval(keepAlive);
  });
}
