// `sluice dashboard`: the URLs of the control plane's built-in pages (the debug index, metrics,
// version) on its monitoring port; sluice opens no browser and forwards no ports.
import type { CommandModule } from "yargs";
import { EXIT_OK } from "./exit-codes.ts";

interface DashboardArgs {
  "monitoring-address": string;
}

export const dashboardCommand: CommandModule<object, DashboardArgs> = {
  command: "dashboard",
  aliases: ["dash", "d"],
  describe: "Print the URLs of the control plane's built-in pages",
  builder: (yargs) =>
    yargs
      .option("monitoring-address", {
        type: "string",
        default: "localhost:15014",
        describe: "host:port of the control plane's monitoring port",
      })
      .example("$0 dashboard", "The pages of a control plane on localhost:15014")
      .example("$0 dashboard --monitoring-address 10.0.0.5:15014", "Of another") as never,
  handler: (argv) => {
    const base = `http://${argv["monitoring-address"]}`;
    const pages = [
      ["debug", `${base}/debug`],
      ["metrics", `${base}/metrics`],
      ["version", `${base}/version`],
    ];
    process.stdout.write(pages.map(([name, url]) => `${name}: ${url}\n`).join(""));
    process.exitCode = EXIT_OK;
  },
};
