// The sluice commands, one module each. A new command is one file here and one line below.
import type { Argv } from "yargs";
import { adminCommand } from "./admin.ts";
import { analyzeCommand } from "./analyze.ts";
import { bugReportCommand } from "./bug-report.ts";
import { completionCommand } from "./completion.ts";
import { createRemoteSecretCommand } from "./create-remote-secret.ts";
import { dashboardCommand } from "./dashboard.ts";
import { installCommand } from "./install.ts";
import { kubeInjectCommand } from "./kube-inject.ts";
import { configureCliLog } from "./log.ts";
import { proxyConfigCommand } from "./proxy-config-command.ts";
import { proxyStatusCommand } from "./proxy-status.ts";
import { remoteClustersCommand } from "./remote-clusters.ts";
import { tagCommand } from "./tag.ts";
import { validateCommand } from "./validate.ts";
import { versionCommand } from "./version.ts";
import { waypointCommand } from "./waypoint.ts";
import { experimentalCommand } from "./x.ts";
import { ztunnelConfigCommand } from "./ztunnel-config.ts";

export { defaultConfigPath, GLOBAL_FLAGS, loadCliConfig } from "./config.ts";
export { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";
export { rejectUnknownCommandLineFlags } from "./flags.ts";

export function registerCommands(cli: Argv): Argv {
  return cli
    .check((argv) => {
      // Before any command runs: an invalid --log_output_level is a usage error.
      const value = argv.log_output_level;
      configureCliLog(typeof value === "string" ? value : undefined);
      return true;
    }, true)
    .command(adminCommand)
    .command(analyzeCommand)
    .command(validateCommand)
    .command(kubeInjectCommand)
    .command(installCommand)
    .command(tagCommand)
    .command(createRemoteSecretCommand)
    .command(remoteClustersCommand)
    .command(bugReportCommand)
    .command(proxyStatusCommand)
    .command(proxyConfigCommand)
    .command(ztunnelConfigCommand)
    .command(waypointCommand)
    .command(versionCommand)
    .command(dashboardCommand)
    .command(completionCommand)
    .command(experimentalCommand);
}
