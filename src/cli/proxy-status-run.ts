// What `sluice proxy-status` does (proxy-status.ts has its flags): asks the control planes for
// syncz and writes every matching proxy's sync status, or compares the control plane's config for
// one proxy with an Envoy config dump.
import { readFileSync } from "node:fs";
import { csds, unpackAny } from "../api/index.ts";
import { SYNCZ_TYPE_URL } from "../xds/generators/status.ts";
import { controlPlaneDump } from "./proxy-config.ts";
import { parseConfigDump } from "./proxy-config-writer.ts";
import type { ProxyStatusArgs } from "./proxy-status-args.ts";
import { compareDumps } from "./proxy-status-compare.ts";
import { controlPlaneId, writeStatus } from "./proxy-status-writer.ts";
import { requestControlPlanes } from "./xds-client.ts";

/** The command's output. */
export async function proxyStatusOutput(argv: ProxyStatusArgs): Promise<string> {
  if (argv.file) {
    if (!argv.proxy) throw new Error("--file compares one proxy's config: name the proxy");
    const envoy = parseConfigDump(readFileSync(argv.file, "utf8"));
    return compareDumps(await controlPlaneDump(argv, argv.proxy), envoy);
  }
  const all = await requestControlPlanes(argv, SYNCZ_TYPE_URL);
  if (argv.proxy) {
    const wanted = argv.proxy;
    for (const response of all) {
      response.resources = response.resources.filter((r) =>
        unpackAny(r, csds.ClientConfigSchema)?.node?.id.includes(wanted),
      );
    }
    if (all.every((r) => r.resources.length === 0)) throw new Error(`no proxy matching "${wanted}" is connected`);
  }
  const responses = new Map(all.map((response) => [controlPlaneId(response), response]));
  const namespace = argv.namespace && argv.namespace !== "" ? argv.namespace : undefined;
  return writeStatus(responses, { format: argv.output, verbose: argv.verbose, namespace });
}
