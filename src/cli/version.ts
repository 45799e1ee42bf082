// `sluice version`: the client's version, and from --xds-address (or, without it, each istiod pod
// of the kubeconfig's cluster) the control plane's (its xDS identifier) and the data plane's (each
// connected proxy's ISTIO_VERSION, from syncz), or with --monitoring-address the control plane's
// /version. Without --short it also prints the git commit the client was built from. The xDS client
// loads only when a control plane is asked (version-xds.ts).
import type { CommandModule } from "yargs";
import { SLUICE_REVISION, SLUICE_VERSION } from "../util/version.ts";
import { reportingFailures } from "./command-error.ts";
import { type ControlPlaneArgs, usesCluster, withControlPlaneOptions } from "./control-plane-options.ts";
import { EXIT_OK } from "./exit-codes.ts";
import { cliLog } from "./log.ts";

interface VersionArgs extends ControlPlaneArgs {
  "monitoring-address"?: string;
  short: boolean;
  output?: "json" | "yaml";
}

interface Versions {
  clientVersion: string;
  /** The git commit this client was built from ("unknown" when run from source). */
  clientRevision?: string;
  controlPlane?: { id?: string; version?: string };
  /** Proxies per ISTIO_VERSION. */
  dataPlane?: Record<string, number>;
}

async function gatherVersions(argv: VersionArgs): Promise<Versions> {
  const versions: Versions = { clientVersion: SLUICE_VERSION, clientRevision: SLUICE_REVISION };
  const monitoring = argv["monitoring-address"];
  if (monitoring) {
    const url = `http://${monitoring}/version`;
    const res = await fetch(url, { signal: AbortSignal.timeout(argv.timeout * 1000) });
    cliLog("http").debug({ method: "GET", url, status: res.status }, "HTTP request");
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    versions.controlPlane = { version: (await res.text()).trim() };
  }
  if (argv["xds-address"] || (!monitoring && usesCluster(argv))) {
    const { xdsVersions } = await import("./version-xds.ts");
    const { controlPlaneId, dataPlane } = await xdsVersions(argv);
    versions.controlPlane = { ...versions.controlPlane, id: controlPlaneId };
    versions.dataPlane = dataPlane;
  }
  return versions;
}

export const versionCommand: CommandModule<object, VersionArgs> = {
  command: "version",
  describe: "The versions of this client, the control plane and the data plane",
  builder: (yargs) =>
    withControlPlaneOptions(yargs)
      .option("monitoring-address", {
        type: "string",
        describe: "host:port of the control plane's monitoring port (15014)",
      })
      .option("short", { type: "boolean", default: false, describe: "Only the client's version" })
      .option("output", { alias: "o", choices: ["json", "yaml"] as const, describe: "Output format" })
      .example("$0 version --short", "This client's version")
      .example("$0 version", "With the control and data plane versions, from the kubeconfig's cluster")
      .example("$0 version --xds-address localhost:15010 --plaintext", "From a control plane's address") as never,
  handler: (argv) =>
    reportingFailures(async () => {
      const versions = argv.short ? { clientVersion: SLUICE_VERSION } : await gatherVersions(argv);
      if (argv.output === "json") process.stdout.write(`${JSON.stringify(versions, null, 2)}\n`);
      else if (argv.output === "yaml") {
        const { stringify } = await import("yaml");
        process.stdout.write(stringify(versions));
      } else {
        const lines = [`client version: ${versions.clientVersion}`];
        if (versions.clientRevision) lines.push(`client revision: ${versions.clientRevision}`);
        const cp = versions.controlPlane;
        if (cp) lines.push(`control plane version: ${[cp.version, cp.id && `(${cp.id})`].filter(Boolean).join(" ")}`);
        for (const [version, count] of Object.entries(versions.dataPlane ?? {})) {
          lines.push(`data plane version: ${version} (${count} proxies)`);
        }
        if (versions.dataPlane && Object.keys(versions.dataPlane).length === 0)
          lines.push("data plane version: none (0 proxies)");
        process.stdout.write(`${lines.join("\n")}\n`);
      }
      process.exitCode = EXIT_OK;
    }),
};
