// `sluice x translate -f PATH [-f PATH ...] [--proxy-type sidecar|router] [--ip IP] [--namespace NS]
// [--labels k=v,...] [--proxy-id ID] [--network NET] [--meshConfig FILE] [--meshNetworks FILE]
// [--types cds,lds,...] [-o json|yaml]`: the
// Envoy config the control plane would send one proxy, built from files without a server, printed as
// Envoy's admin ConfigDump. Flags and help only: the control plane loads when the command runs.
import { existsSync, readFileSync } from "node:fs";
import { isIP } from "node:net";
import type { Argv, CommandModule } from "yargs";
import type { MeshConfig } from "../config/index.ts";
import { STDIN_PATH } from "../config/index.ts";
import type { MeshNetworks } from "../config/mesh-networks.ts";
import { EXIT_INVALID, EXIT_OK } from "./exit-codes.ts";
import { filenameOption } from "./filename-option.ts";
import type { ProxySpec } from "./translate-state.ts";

const OUTPUT_FORMATS = ["json", "yaml"] as const;
const PROXY_TYPES = ["sidecar", "router"] as const;
const TYPES = ["cds", "eds", "lds", "rds", "sds", "nds"] as const;

/** What the proxy options give. */
export interface ProxyArgs {
  filename: string[];
  "proxy-type": (typeof PROXY_TYPES)[number];
  ip: string;
  namespace: string;
  labels: Record<string, string>;
  "proxy-id"?: string;
  network?: string;
  meshConfig?: string;
  meshNetworks?: string;
  domain: string;
}

interface TranslateArgs extends ProxyArgs {
  types?: (typeof TYPES)[number][];
  output: (typeof OUTPUT_FORMATS)[number];
}

/** `k=v,k2=v2` as a label map; throws on an entry without `=` or key. */
export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const entry of text.split(",").filter((e) => e.trim() !== "")) {
    const eq = entry.indexOf("=");
    if (eq <= 0) throw new Error(`--labels: "${entry}" is not key=value`);
    labels[entry.slice(0, eq).trim()] = entry.slice(eq + 1).trim();
  }
  return labels;
}

/** `cds,LDS` as the dump types; throws on an unknown one. */
function parseTypes(text: string | string[]): (typeof TYPES)[number][] {
  const names = [text]
    .flat()
    .flatMap((t) => t.split(","))
    .map((t) => t.trim().toLowerCase());
  const unknown = names.filter((n) => !(TYPES as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`--types: unknown ${unknown.join(", ")} (valid: ${TYPES.join(", ")})`);
  return names as (typeof TYPES)[number][];
}

/** The options naming the proxy and the mesh, shared by `x translate` and `x envoyfilter diff`. */
export function withProxyOptions<T extends { filename: string[] }>(yargs: Argv<T>) {
  return yargs
    .option("proxy-type", { choices: PROXY_TYPES, default: "sidecar" as const, describe: "The proxy's type" })
    .option("ip", { type: "string", default: "10.0.0.1", describe: "The proxy's IP address" })
    .option("namespace", { type: "string", default: "default", describe: "The proxy's namespace" })
    .option("labels", {
      type: "string",
      default: "",
      coerce: parseLabels,
      describe: "The proxy's workload labels, k=v,... (for a router they select the Gateways)",
    })
    .option("proxy-id", {
      type: "string",
      describe: "The proxy's id, <pod>.<namespace> (default: <type>.<namespace>)",
    })
    .option("network", {
      type: "string",
      requiresArg: true,
      describe: "The proxy's network (ISTIO_META_NETWORK): endpoints on others go through their gateways",
    })
    .option("meshConfig", { type: "string", requiresArg: true, describe: "MeshConfig YAML file (default: Istio's)" })
    .option("meshNetworks", {
      type: "string",
      requiresArg: true,
      describe: "MeshNetworks YAML file (istiod's --networksConfig): networks' endpoints and gateways",
    })
    .option("domain", { type: "string", default: "cluster.local", describe: "Cluster DNS domain suffix" })
    .check((argv) => {
      const optionFiles = [argv.meshConfig, argv.meshNetworks].filter((path) => path !== undefined);
      const missing = [...argv.filename, ...optionFiles].filter((path) => path !== STDIN_PATH && !existsSync(path));
      if (missing.length > 0) throw new Error(`no such file or directory: ${missing.join(", ")}`);
      if (isIP(argv.ip) === 0) throw new Error(`--ip: ${argv.ip} is not an IP address`);
      return true;
    });
}

/** The mesh config the proxy options name; undefined (with the error on stderr and exit status 1) when it does not load. */
export async function loadProxyMesh(meshConfig: string | undefined): Promise<MeshConfig | undefined> {
  const { loadMeshConfig } = await import("../config/mesh.ts");
  return loadOptionFile(meshConfig, (text) => loadMeshConfig(text).mesh);
}

/** The mesh networks the proxy options name (none without the option); undefined, as loadProxyMesh, when they do not load. */
export async function loadProxyMeshNetworks(meshNetworks: string | undefined): Promise<MeshNetworks | undefined> {
  const { loadMeshNetworks } = await import("../config/mesh-networks.ts");
  return loadOptionFile(meshNetworks, loadMeshNetworks);
}

/** `load` over the file's text (no text without a file); its error goes to stderr with exit status 1. */
function loadOptionFile<T>(path: string | undefined, load: (text: string | undefined) => T): T | undefined {
  try {
    return load(path ? readFileSync(path, "utf8") : undefined);
  } catch (err) {
    process.stderr.write(`Error: ${path}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = EXIT_INVALID;
    return undefined;
  }
}

/** The proxy the options describe. */
export function proxySpecFromArgs(argv: ProxyArgs): ProxySpec {
  const type = argv["proxy-type"];
  return {
    type,
    ip: argv.ip,
    namespace: argv.namespace,
    labels: argv.labels,
    id: argv["proxy-id"] ?? `${type}.${argv.namespace}`,
    ...(argv.network ? { network: argv.network } : {}),
  };
}

export const translateCommand: CommandModule<object, TranslateArgs> = {
  command: "translate",
  describe: "Print the Envoy config (an admin ConfigDump) the control plane would send a proxy for config files",
  builder: (yargs) =>
    withProxyOptions(yargs.option("filename", filenameOption("translate")))
      .option("types", {
        type: "string",
        coerce: parseTypes,
        describe: `Resource types to print, comma-separated: ${TYPES.join(", ")} (default: every Envoy type)`,
      })
      .option("output", { alias: "o", choices: OUTPUT_FORMATS, default: "json" as const, describe: "Output format" })
      .demandCommand(0, 0)
      .example("$0 x translate -f examples/mesh --namespace bookinfo --labels app=productpage", "A sidecar's config")
      .example("$0 x translate -f gateway.yaml --proxy-type router --labels istio=ingressgateway", "A gateway's config")
      .example(
        "$0 x translate -f mesh/ --meshNetworks networks.yaml --network network1 --types eds",
        "Endpoints as a proxy on network1 sees them",
      )
      .epilogue(
        [
          "Builds the config store, service registry and push context from the files, then prints the proxy's",
          "dynamic clusters, listeners, routes, secrets and endpoints as Envoy's admin /config_dump shows them",
          "(proto3 JSON, @type on every Any; bootstrap omitted). nds adds the DNS name table.",
          "As a cluster would, it skips kinds the control plane does not read and prunes unknown fields (with warnings).",
          "EnvoyFilter patches that cannot be applied are skipped with a warning.",
          "With --meshNetworks, endpoints on other networks than the proxy's (--network) are sent as their networks' gateways.",
          "Exit status: 0 printed, 1 some input is invalid, 2 usage error.",
        ].join("\n"),
      ),
  handler: async (argv) => {
    const [{ translate }, { configDumpJson }, { describePatchError, envoyFilterStatus }] = await Promise.all([
      import("./translate-state.ts"),
      import("../xds/index.ts"),
      import("../networking/envoyfilter/index.ts"),
    ]);
    const mesh = await loadProxyMesh(argv.meshConfig);
    if (!mesh) return;
    const meshNetworks = await loadProxyMeshNetworks(argv.meshNetworks);
    if (!meshNetworks) return;
    const result = translate(argv.filename, proxySpecFromArgs(argv), {
      mesh,
      meshNetworks,
      domainSuffix: argv.domain,
      types: argv.types?.map((t) => t.toUpperCase() as Uppercase<typeof t>),
    });
    if (!result.dump) {
      for (const problem of result.problems) process.stderr.write(`Error: ${problem}\n`);
      process.exitCode = EXIT_INVALID;
      return;
    }
    for (const warning of result.warnings) process.stderr.write(`Warning: ${warning}\n`);
    for (const e of envoyFilterStatus.recordedErrors()) process.stderr.write(`Warning: ${describePatchError(e)}\n`);
    const json = configDumpJson(result.dump);
    if (argv.output === "json") {
      process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    } else {
      const { stringify } = await import("yaml");
      process.stdout.write(stringify(json, { lineWidth: 0 }));
    }
    process.exitCode = EXIT_OK;
  },
};
