// `sluice bug-report` (istioctl's bug-report): the cluster's state, the control plane's debug
// endpoints, the proxies' config and the logs the cluster serves, in bug-report.tar.gz. Flags and help
// only: bug-report-run.ts does the collecting when the command runs.
import type { CommandModule } from "yargs";
import { reportingFailures } from "./command-error.ts";
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";

interface BugReportArgs {
  istioNamespace?: string;
  "istio-namespace"?: string;
  kubeconfig?: string;
  context?: string;
  filename?: string;
  include?: string[];
  exclude?: string[];
  dir?: string;
  "output-dir"?: string;
  "full-secrets"?: boolean;
  "dry-run"?: boolean;
  timeout?: string;
  "start-time"?: string;
  "end-time"?: string;
  duration?: string;
  tail?: number;
  "proxy-admin-port"?: number;
  "rq-concurrency"?: number;
  "critical-errs"?: string[];
  "ignore-errs"?: string[];
  "skip-cluster-dump"?: boolean;
  "skip-analyze"?: boolean;
  "skip-proxy-debug"?: boolean;
  "skip-netstat"?: boolean;
  "skip-coredumps"?: boolean;
}

/** A flag repeated or comma-separated (pflag's StringSlice): its values. */
const commaList = (value: string | string[]): string[] => [value].flat().flatMap((v) => String(v).split(","));

const SPEC_HELP = [
  "The pods whose logs and proxy state are collected are chosen by --include and --exclude specs:",
  "  ns1,ns2/dep1,dep2/pod1,pod2/lbl1=val1,lbl2=val2/ann1=val1,ann2=val2/cntr1,cntr2",
  "(namespaces/deployments/pods/labels/annotations/containers), read as 'in (ns1 OR ns2) AND (dep1 OR",
  "dep2) AND ...'. Every part is optional (ns1//pod1), and names and values may use '*' globs. A container",
  "is collected when it matches an --include spec and no --exclude spec; kube-system, kube-public,",
  "kube-node-lease and local-path-storage are always excluded. The resources, secrets and events dumped",
  "are those of the --include namespaces (and the Istio namespace), less the namespaces of --exclude specs",
  "that name namespaces alone.",
  "",
  "The archive, bug-report.tar.gz in the current directory (or --output-dir), unpacks into bug-report/",
  "with istioctl's folders (cluster/, istio/, proxies/, analyze/, ...); bug-report/summary lists what",
  "could not be collected and why (pod logs and port-forwards need a kubelet; nothing is run in pods).",
  "Secrets are listed without their data unless --full-secrets.",
  "",
  "-f names a YAML file of istioctl's bug-report config fields (kubeConfigPath, context, istioNamespace,",
  "dryRun, fullSecrets, proxyAdminPort, commandTimeout, include, exclude, startTime, endTime, since,",
  "criticalErrors, ignoredErrors, requestConcurrency, tailLines, skipClusterDump, skipAnalyze,",
  "skipProxyDebug, skipNetstat, skipCoredumps). A flag given on the command line overrides the file's",
  "field (a list replaces the file's list whole); the file overrides the defaults. include and exclude",
  "are lists of specs as above.",
  "",
  "Each log collected is rated as istioctl rates it: 1000 per fatal line, 100 per error, 10 per warning,",
  "leaving out lines whose text matches an --ignore-errs pattern; a log with a fatal or error line",
  "matching a --critical-errs pattern comes first. bug-report/summary lists the logs in that order.",
  "Patterns are globs as in --include ('*' does not match '/'); a line's text is what follows its level.",
  "",
  `Exit status: ${EXIT_OK} archive written, ${EXIT_INVALID} the cluster could not be read, ${EXIT_USAGE} usage error.`,
].join("\n");

export const bugReportCommand: CommandModule<object, BugReportArgs> = {
  command: "bug-report",
  describe: "Cluster information and log capture support tool",
  builder: (yargs) =>
    yargs
      .option("include", {
        type: "string",
        array: true,
        defaultDescription: "everything",
        describe: "Spec for which pods' proxy logs to include in the archive (see below)",
      })
      .option("exclude", {
        type: "string",
        array: true,
        defaultDescription: "none",
        describe: "Spec for which pods' proxy logs to exclude from the archive, after --include",
      })
      .option("istio-namespace", {
        type: "string",
        describe: "Namespace where the control plane is installed (default: -i's, istio-system)",
      })
      .option("dir", {
        type: "string",
        describe: "A directory to write the collected files into as well; the archive then holds them at its top",
      })
      .option("output-dir", {
        type: "string",
        describe: "The directory for bug-report.tar.gz (default: the current one)",
      })
      .option("filename", {
        alias: "f",
        type: "string",
        requiresArg: true,
        describe: "A YAML file of bug-report config fields (see below); flags given override its fields",
      })
      .option("full-secrets", {
        type: "boolean",
        defaultDescription: "false",
        describe: "Include the secrets' contents",
      })
      .option("dry-run", {
        type: "boolean",
        defaultDescription: "false",
        describe: "Only print what would be collected",
      })
      .option("timeout", {
        type: "string",
        defaultDescription: "30m",
        describe: "Maximum time to spend collecting (a Go duration); what was collected by then is archived",
      })
      .option("start-time", {
        type: "string",
        describe: "Start of the logs' time range (RFC 3339); default the infinite past; not with --duration",
      })
      .option("end-time", { type: "string", describe: "End of the logs' time range (RFC 3339); default now" })
      .option("duration", {
        type: "string",
        describe: "How far back from --end-time the logs go (a Go duration); not with --start-time",
      })
      .option("tail", { type: "number", defaultDescription: "0", describe: "Most log lines per container; 0 for all" })
      .option("proxy-admin-port", { type: "number", defaultDescription: "15000", describe: "Envoy proxy admin port" })
      .option("rq-concurrency", {
        type: "number",
        defaultDescription: "32",
        describe: "Requests to the cluster at once",
      })
      .option("critical-errs", {
        type: "string",
        coerce: commaList,
        describe: "Comma-separated globs matched against logs' error lines: a log with a match is listed first",
      })
      .option("ignore-errs", {
        type: "string",
        coerce: commaList,
        describe: "Comma-separated globs matched against logs' error and warning lines: matches are not counted",
      })
      .option("skip-cluster-dump", {
        type: "boolean",
        describe: "Skip the cluster-wide resources (Kubernetes resources, custom resources, nodes, secrets, events)",
      })
      .option("skip-analyze", { type: "boolean", describe: "Skip the analysis" })
      .option("skip-proxy-debug", { type: "boolean", describe: "Skip the proxies' Envoy admin" })
      .option("skip-netstat", { type: "boolean", describe: "Skip netstat in proxy containers" })
      .option("skip-coredumps", { type: "boolean", describe: "Skip proxy containers' core dumps" })
      .check((argv) => {
        for (const flag of ["tail", "proxy-admin-port", "rq-concurrency"] as const) {
          const value = argv[flag];
          if (value !== undefined && (!Number.isInteger(value) || value < 0))
            throw new Error(`--${flag} must be a whole number, not ${value}`);
        }
        return true;
      })
      .example("$0 bug-report", "Everything, from the kubeconfig's cluster, into ./bug-report.tar.gz")
      .example("$0 bug-report --include bookinfo,istio-system --duration 1h", "Two namespaces, the last hour of logs")
      .example("$0 bug-report --exclude 'ns1/*/*/app=test*'", "Without the pods of ns1 labelled app=test...")
      .epilogue(SPEC_HELP) as never,
  handler: (argv) =>
    reportingFailures(async () => {
      const [{ kubeconfigAvailable }, run, config] = await Promise.all([
        import("./kubeconfig.ts"),
        import("./bug-report-run.ts"),
        import("./bug-report-config.ts"),
      ]);
      const usage = (message: string) => {
        process.stderr.write(`Error: ${message}\n`);
        process.exitCode = EXIT_USAGE;
      };
      let file: Partial<import("./bug-report-config.ts").BugReportSettings> = {};
      try {
        if (argv.filename !== undefined) file = config.readBugReportConfig(argv.filename);
      } catch (err) {
        return usage((err as Error).message);
      }
      for (const flag of ["critical-errs", "ignore-errs"] as const) {
        const bad = config.globListError(`--${flag}`, argv[flag] ?? []);
        if (bad) return usage(bad);
      }
      // -i has a default of its own: only another namespace counts as given.
      const globalNamespace = argv.istioNamespace !== "istio-system" ? argv.istioNamespace : undefined;
      const settings = config.mergeBugReportSettings(
        {
          kubeconfig: argv.kubeconfig,
          context: argv.context,
          istioNamespace: argv["istio-namespace"] ?? globalNamespace,
          dryRun: argv["dry-run"],
          fullSecrets: argv["full-secrets"],
          proxyAdminPort: argv["proxy-admin-port"],
          timeout: argv.timeout,
          include: argv.include,
          exclude: argv.exclude,
          startTime: argv["start-time"],
          endTime: argv["end-time"],
          duration: argv.duration,
          criticalErrors: argv["critical-errs"],
          ignoredErrors: argv["ignore-errs"],
          concurrency: argv["rq-concurrency"],
          tail: argv.tail,
          skipClusterDump: argv["skip-cluster-dump"],
          skipAnalyze: argv["skip-analyze"],
          skipProxyDebug: argv["skip-proxy-debug"],
          skipNetstat: argv["skip-netstat"],
          skipCoredumps: argv["skip-coredumps"],
        },
        file,
      );
      if (!kubeconfigAvailable(settings.kubeconfig))
        return usage("no kubeconfig to reach a cluster: name one with --kubeconfig");
      const timeout = run.goDuration(settings.timeout);
      if (typeof timeout === "string") return usage(`invalid --timeout: ${timeout}`);
      const range = run.logTimeRange(settings.startTime, settings.endTime, settings.duration);
      if (typeof range === "string") return usage(range);
      const { Selection } = await import("./bug-report-select.ts");
      try {
        new Selection(settings.include, settings.exclude);
      } catch (err) {
        return usage((err as Error).message);
      }
      await run.runBugReport({
        kubeconfig: settings.kubeconfig,
        context: settings.context,
        istioNamespace: settings.istioNamespace,
        include: settings.include,
        exclude: settings.exclude,
        outputDir: argv["output-dir"] ?? process.cwd(),
        dir: argv.dir,
        fullSecrets: settings.fullSecrets,
        dryRun: settings.dryRun,
        timeoutMs: timeout.ms > 0 ? timeout.ms : Number.MAX_SAFE_INTEGER,
        since: range.since,
        until: range.until,
        tail: settings.tail,
        proxyAdminPort: settings.proxyAdminPort,
        concurrency: settings.concurrency || 32,
        criticalErrors: settings.criticalErrors,
        ignoredErrors: settings.ignoredErrors,
        skipClusterDump: settings.skipClusterDump,
        skipAnalyze: settings.skipAnalyze,
        skipProxyDebug: settings.skipProxyDebug,
        skipNetstat: settings.skipNetstat,
        skipCoredumps: settings.skipCoredumps,
        print: (text) => process.stdout.write(text),
      });
      process.exitCode = EXIT_OK;
    }),
};
