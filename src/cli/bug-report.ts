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
  include: string[];
  exclude: string[];
  dir?: string;
  "output-dir"?: string;
  "full-secrets": boolean;
  "dry-run": boolean;
  timeout: string;
  "start-time"?: string;
  "end-time"?: string;
  duration?: string;
  tail: number;
  "proxy-admin-port": number;
  "rq-concurrency": number;
  "skip-cluster-dump": boolean;
  "skip-analyze": boolean;
  "skip-proxy-debug": boolean;
  "skip-netstat": boolean;
  "skip-coredumps": boolean;
}

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
        default: [] as string[],
        describe: "Spec for which pods' proxy logs to include in the archive (see below)",
      })
      .option("exclude", {
        type: "string",
        array: true,
        default: [] as string[],
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
      .option("full-secrets", { type: "boolean", default: false, describe: "Include the secrets' contents" })
      .option("dry-run", { type: "boolean", default: false, describe: "Only print what would be collected" })
      .option("timeout", {
        type: "string",
        default: "30m",
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
      .option("tail", { type: "number", default: 0, describe: "Most log lines per container; 0 for all" })
      .option("proxy-admin-port", { type: "number", default: 15000, describe: "Envoy proxy admin port" })
      .option("rq-concurrency", { type: "number", default: 32, describe: "Requests to the cluster at once" })
      .option("skip-cluster-dump", {
        type: "boolean",
        default: false,
        describe: "Skip the cluster-wide resources (Kubernetes resources, custom resources, nodes, secrets, events)",
      })
      .option("skip-analyze", { type: "boolean", default: false, describe: "Skip the analysis" })
      .option("skip-proxy-debug", { type: "boolean", default: false, describe: "Skip the proxies' Envoy admin" })
      .option("skip-netstat", { type: "boolean", default: false, describe: "Skip netstat in proxy containers" })
      .option("skip-coredumps", { type: "boolean", default: false, describe: "Skip proxy containers' core dumps" })
      .check((argv) => {
        for (const flag of ["tail", "proxy-admin-port", "rq-concurrency"] as const) {
          const value = argv[flag];
          if (!Number.isInteger(value) || value < 0) throw new Error(`--${flag} must be a whole number, not ${value}`);
        }
        return true;
      })
      .example("$0 bug-report", "Everything, from the kubeconfig's cluster, into ./bug-report.tar.gz")
      .example("$0 bug-report --include bookinfo,istio-system --duration 1h", "Two namespaces, the last hour of logs")
      .example("$0 bug-report --exclude 'ns1/*/*/app=test*'", "Without the pods of ns1 labelled app=test...")
      .epilogue(SPEC_HELP) as never,
  handler: (argv) =>
    reportingFailures(async () => {
      const [{ kubeconfigAvailable }, run] = await Promise.all([
        import("./kubeconfig.ts"),
        import("./bug-report-run.ts"),
      ]);
      const usage = (message: string) => {
        process.stderr.write(`Error: ${message}\n`);
        process.exitCode = EXIT_USAGE;
      };
      if (!kubeconfigAvailable(argv.kubeconfig))
        return usage("no kubeconfig to reach a cluster: name one with --kubeconfig");
      const timeout = run.goDuration(argv.timeout);
      if (typeof timeout === "string") return usage(`invalid --timeout: ${timeout}`);
      const range = run.logTimeRange(argv["start-time"], argv["end-time"], argv.duration);
      if (typeof range === "string") return usage(range);
      const { Selection } = await import("./bug-report-select.ts");
      try {
        new Selection(argv.include, argv.exclude);
      } catch (err) {
        return usage((err as Error).message);
      }
      await run.runBugReport({
        kubeconfig: argv.kubeconfig,
        context: argv.context,
        istioNamespace: argv["istio-namespace"] ?? argv.istioNamespace ?? "istio-system",
        include: argv.include,
        exclude: argv.exclude,
        outputDir: argv["output-dir"] ?? process.cwd(),
        dir: argv.dir,
        fullSecrets: argv["full-secrets"],
        dryRun: argv["dry-run"],
        timeoutMs: timeout.ms > 0 ? timeout.ms : Number.MAX_SAFE_INTEGER,
        since: range.since,
        until: range.until,
        tail: argv.tail,
        proxyAdminPort: argv["proxy-admin-port"],
        concurrency: argv["rq-concurrency"] || 32,
        skipClusterDump: argv["skip-cluster-dump"],
        skipAnalyze: argv["skip-analyze"],
        skipProxyDebug: argv["skip-proxy-debug"],
        skipNetstat: argv["skip-netstat"],
        skipCoredumps: argv["skip-coredumps"],
        print: (text) => process.stdout.write(text),
      });
      process.exitCode = EXIT_OK;
    }),
};
