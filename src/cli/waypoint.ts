// `sluice waypoint generate|apply|list|status|delete` (istioctl's waypoint): ambient mode's waypoint
// proxies, Gateway API Gateways of class istio-waypoint. Flags, arguments and help only;
// waypoint-run.ts does the work when a verb runs.
import type { Argv, CommandModule } from "yargs";
import { exitOneOnFailure } from "./command-error.ts";
import { groupCommand } from "./group-command.ts";
import type { KubeAccess } from "./kube-access.ts";

type WaypointRun = typeof import("./waypoint-run.ts");

interface WaypointArgs {
  name: string;
  namespace?: string;
  kubeconfig?: string;
  context?: string;
  for?: string;
  revision?: string;
  wait: boolean;
  waypointTimeout: string;
  enrollNamespace: boolean;
  overwrite: boolean;
  allNamespaces: boolean;
  all: boolean;
  names: string[];
}

/** Runs a verb with the cluster and the namespace it works in (-n, else the kubeconfig's, else default). */
function inCluster(
  work: (run: WaypointRun, kube: KubeAccess, argv: WaypointArgs, namespace: string) => Promise<void>,
  check: (argv: WaypointArgs) => void = () => {},
) {
  return (argv: WaypointArgs) =>
    exitOneOnFailure(async () => {
      check(argv);
      const [run, { clusterAccess }] = await Promise.all([import("./waypoint-run.ts"), import("./kube-access.ts")]);
      const kube = clusterAccess(argv);
      await work(run, kube, argv, kube.namespaceOrDefault(argv.namespace));
    });
}

const out = (text: string) => process.stdout.write(text);

const options = (argv: WaypointArgs) => ({
  name: argv.name,
  namespace: argv.namespace ?? "",
  trafficType: argv.for ?? "",
  revision: argv.revision ?? "",
});

const forOption = <T>(yargs: Argv<T>) =>
  yargs.option("for", {
    type: "string",
    describe: "The traffic the waypoint handles: all, none, service or workload (its istio.io/waypoint-for label)",
  });

const revisionOption = <T>(yargs: Argv<T>, describe: string) =>
  yargs.option("revision", { alias: "r", type: "string", describe });

const timeoutOption = <T>(yargs: Argv<T>, describe: string) =>
  yargs.option("waypoint-timeout", { type: "string", default: "1m30s", describe });

const allNamespacesOption = <T>(yargs: Argv<T>, describe: string) =>
  yargs.option("all-namespaces", { alias: "A", type: "boolean", default: false, describe });

const generateCommand: CommandModule<object, WaypointArgs> = {
  command: "generate",
  describe: "Print a waypoint's Gateway as YAML",
  builder: (yargs) =>
    revisionOption(forOption(yargs), "The revision (istio.io/rev label) of the waypoint").example(
      "$0 waypoint generate -n default",
      "The Gateway of the namespace's waypoint",
    ) as never,
  handler: (argv) =>
    exitOneOnFailure(async () => {
      const { generateWaypoint } = await import("./waypoint-run.ts");
      out(generateWaypoint(options(argv)));
    }),
};

const applyCommand: CommandModule<object, WaypointArgs> = {
  command: "apply",
  describe: "Create or update a waypoint in the cluster",
  builder: (yargs) =>
    timeoutOption(
      revisionOption(forOption(yargs), "The revision (istio.io/rev label) of the waypoint")
        .option("enroll-namespace", {
          type: "boolean",
          default: false,
          describe: "Label the namespace istio.io/use-waypoint=<name>: its workloads use the waypoint",
        })
        .option("overwrite", {
          type: "boolean",
          default: false,
          describe: "With --enroll-namespace: replace the waypoint the namespace already uses",
        })
        .option("wait", { alias: "w", type: "boolean", default: false, describe: "Wait until it is Programmed" }),
      "How long --wait waits (a Go duration)",
    )
      .example("$0 waypoint apply -n default --enroll-namespace", "A waypoint for the namespace, used by it")
      .example("$0 waypoint apply -n default --wait", "And wait until it is programmed") as never,
  handler: inCluster(async (run, kube, argv, namespace) => {
    await run.applyWaypoint(kube.client, {
      ...options(argv),
      enrollNamespace: argv.enrollNamespace,
      overwrite: argv.overwrite,
      waitFor: argv.wait ? run.parseGoDuration(argv.waypointTimeout) : undefined,
      targetNamespace: namespace,
      out,
    });
  }),
};

const listCommand: CommandModule<object, WaypointArgs> = {
  command: "list",
  describe: "List the waypoints (revision, traffic type, programmed)",
  builder: (yargs) =>
    allNamespacesOption(yargs, "Of every namespace").example("$0 waypoint list -A", "Every waypoint") as never,
  handler: inCluster(async (run, kube, argv, namespace) => {
    out(await run.listWaypoints(kube.client, argv.allNamespaces ? "" : namespace));
  }),
};

const statusCommand: CommandModule<object, WaypointArgs> = {
  command: "status",
  describe: "The waypoints' conditions, waiting until each is programmed",
  builder: (yargs) =>
    timeoutOption(
      allNamespacesOption(yargs, "Of every namespace").option("wait", {
        alias: "w",
        type: "boolean",
        default: true,
        describe: "Read each waypoint again until it is Programmed (--wait=false: once)",
      }),
      "How long --wait waits (a Go duration)",
    ).example("$0 waypoint status -n default --wait=false", "Each waypoint's condition, read once") as never,
  handler: inCluster(async (run, kube, argv, namespace) => {
    const waitFor = argv.wait ? run.parseGoDuration(argv.waypointTimeout) : undefined;
    out(await run.waypointStatus(kube.client, argv.allNamespaces ? "" : namespace, waitFor));
  }),
};

const deleteCommand: CommandModule<object, WaypointArgs> = {
  command: "delete [names..]",
  describe: "Delete waypoints: by name, of a revision (--revision), or all of the namespace (--all)",
  builder: (yargs) =>
    revisionOption(
      yargs
        .positional("names", { type: "string", array: true, default: [] as string[], describe: "Waypoint names" })
        .option("all", { type: "boolean", default: false, describe: "Every waypoint of the namespace" }),
      "Every waypoint of this revision in the namespace",
    )
      .example("$0 waypoint delete waypoint -n default", "The waypoint named waypoint")
      .example("$0 waypoint delete --all -n default", "Every waypoint of the namespace") as never,
  handler: inCluster(
    async (run, kube, argv, namespace) => {
      const bulk = argv.all || !!argv.revision;
      await run.deleteWaypoints(kube.client, namespace, bulk ? undefined : argv.names, argv.revision ?? "", out);
    },
    (argv) => {
      const bulk = argv.all || !!argv.revision;
      if (bulk && argv.names.length > 0) throw new Error("cannot specify waypoint names when deleting all waypoints");
      if (!bulk && argv.names.length === 0) {
        throw new Error(
          "must specify a waypoint name or delete all using --all or delete specific revision using --revision",
        );
      }
    },
  ),
};

export const waypointCommand = groupCommand({
  command: "waypoint",
  describe: "Ambient mode's waypoint proxies: generate, apply, list, status, delete",
  builder: (yargs) =>
    yargs
      .option("name", { type: "string", default: "waypoint", describe: "The waypoint's name" })
      .command(generateCommand)
      .command(applyCommand)
      .command(listCommand)
      .command(statusCommand)
      .command(deleteCommand),
});
