// `sluice tag set|generate|list|remove` (istioctl's tag): revision tags, mutable names for control
// plane revisions. A namespace labelled istio.io/rev=prod is injected by whichever revision the tag
// prod points at, so moving the tag moves the namespaces without relabelling them. Flags, arguments
// and help only; tag-run.ts does the work against the cluster when a verb runs.
import type { Argv, CommandModule } from "yargs";
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";
import { groupCommand } from "./group-command.ts";
import type { TagContext, TagResult } from "./tag-run.ts";

type TagRun = typeof import("./tag-run.ts");

interface ClusterArgs {
  istioNamespace: string;
  kubeconfig?: string;
  context?: string;
}

interface SetArgs extends ClusterArgs {
  tags: string[];
  revision?: string;
  overwrite: boolean;
  skipConfirmation: boolean;
  webhookName?: string;
  autoInjectNamespaces: boolean;
}

interface ListArgs extends ClusterArgs {
  output: string;
}

interface RemoveArgs extends ClusterArgs {
  tags: string[];
  skipConfirmation: boolean;
}

const SKIP_CONFIRMATION = {
  alias: ["y", "skip-confirmation"],
  type: "boolean",
  default: false,
  describe: "Do not ask for confirmation: answer yes to every question",
} as const;

/** Runs a verb's work against the kubeconfig's cluster and reports it as istioctl does. */
async function runTag(argv: ClusterArgs, work: (run: TagRun, ctx: TagContext) => Promise<TagResult>): Promise<void> {
  const [{ kubeconfigAvailable }, { clusterAccess }, run] = await Promise.all([
    import("./kubeconfig.ts"),
    import("./kube-access.ts"),
    import("./tag-run.ts"),
  ]);
  if (!kubeconfigAvailable(argv.kubeconfig)) {
    process.stderr.write("Error: no kubeconfig to reach a cluster: name one with --kubeconfig\n");
    process.exitCode = EXIT_USAGE;
    return;
  }
  let result: TagResult;
  try {
    result = await work(run, {
      client: clusterAccess(argv).client,
      istioNamespace: argv.istioNamespace,
      warn: (text) => process.stderr.write(text),
      confirm: run.confirmOnTerminal,
    });
  } catch (err) {
    // The cluster could not be read or written (unreachable, refused): istioctl's exit status 1.
    result = { stdout: "", stderr: `Error: ${(err as Error).message}\n`, code: EXIT_INVALID };
  }
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.code;
}

/** One tag argument, or istioctl's message for none or several. */
function oneTag(none: string, several: string) {
  return (argv: { tags: string[] }) => {
    if (argv.tags.length === 0) throw new Error(none);
    if (argv.tags.length > 1) throw new Error(several);
    return true;
  };
}

/** `set` and `generate` share their flags and checks. */
function setBuilder(yargs: Argv): Argv<SetArgs> {
  return yargs
    .positional("tags", { type: "string", array: true, default: [] as string[], describe: "The revision tag" })
    .option("revision", {
      alias: "r",
      type: "string",
      describe: "Control plane revision to reference from a given revision tag",
    })
    .option("overwrite", {
      type: "boolean",
      default: false,
      describe: "Replace the tag if it exists (otherwise an existing tag is an error)",
    })
    .option("skipConfirmation", SKIP_CONFIRMATION)
    .option("webhookName", {
      alias: "webhook-name",
      type: "string",
      describe: "Name to use for a revision tag's mutating webhook configuration",
    })
    .option("autoInjectNamespaces", {
      alias: "auto-inject-namespaces",
      type: "boolean",
      default: false,
      describe: "With the tag default: inject sidecars into every namespace by default",
    })
    .check(oneTag("must provide a tag for modification", "must provide a single tag for creation"))
    .check((argv) => {
      if (!argv.revision) throw new Error('required flag(s) "revision" not set');
      return true;
    }) as unknown as Argv<SetArgs>;
}

const setHandler = (generate: boolean) => (argv: SetArgs) =>
  runTag(argv, (run, ctx) =>
    run.setTag(ctx, {
      tag: argv.tags[0],
      revision: argv.revision ?? "",
      overwrite: argv.overwrite,
      skipConfirmation: argv.skipConfirmation,
      webhookName: argv.webhookName,
      autoInjectNamespaces: argv.autoInjectNamespaces,
      generate,
    }),
  );

const setCommand: CommandModule<object, SetArgs> = {
  command: "set [tags..]",
  describe: "Create or modify a revision tag",
  builder: (yargs) =>
    setBuilder(yargs)
      .example("$0 tag set prod --revision canary", "Tag the revision canary prod")
      .example("kubectl label ns test-ns istio.io/rev=prod", "Then a namespace uses it")
      .example("$0 tag set prod --revision blue --overwrite", "Point prod at another revision")
      .example(
        "$0 tag set default --revision blue",
        "Make blue the default revision: it injects istio-injection=enabled namespaces and validates config",
      ) as never,
  handler: setHandler(false),
};

const generateCommand: CommandModule<object, SetArgs> = {
  command: "generate [tags..]",
  describe: "Print a revision tag's objects instead of applying them",
  builder: (yargs) =>
    setBuilder(yargs).example("$0 tag generate prod --revision canary > tag.yaml", "The tag's objects") as never,
  handler: setHandler(true),
};

const listCommand: CommandModule<object, ListArgs> = {
  command: "list [extra..]",
  aliases: ["show"],
  describe: "List the revision tags (and revisions without one), with the namespaces using each",
  builder: (yargs) =>
    yargs
      .option("output", {
        alias: "o",
        type: "string",
        default: "table",
        describe: "Output format: table, json or yaml",
      })
      .check((argv) => {
        if ((argv.extra as string[] | undefined)?.length) throw new Error("tag list command does not accept arguments");
        return true;
      }) as never,
  handler: (argv) => runTag(argv, (run, ctx) => run.listTags(ctx, argv.output)),
};

const removeCommand: CommandModule<object, RemoveArgs> = {
  command: "remove [tags..]",
  aliases: ["delete"],
  describe: "Remove a revision tag (asking first when namespaces still use it)",
  builder: (yargs) =>
    yargs
      .positional("tags", { type: "string", array: true, default: [] as string[], describe: "The revision tag" })
      .option("skipConfirmation", SKIP_CONFIRMATION)
      .check(oneTag("must provide a tag for removal", "must provide a single tag for removal"))
      .example("$0 tag remove prod", "Remove the tag prod") as never,
  handler: (argv) => runTag(argv, (run, ctx) => run.removeTag(ctx, argv.tags[0], argv.skipConfirmation)),
};

export const tagCommand = groupCommand({
  command: "tag",
  describe: "Revision tags: mutable names for control plane revisions, for istio.io/rev namespace labels",
  builder: (yargs) =>
    yargs
      .command(setCommand)
      .command(generateCommand)
      .command(listCommand)
      .command(removeCommand)
      .epilogue(
        [
          "A namespace labelled istio.io/rev=<tag> is injected by the revision the tag points at; moving the tag",
          "(set --overwrite) moves every such namespace without relabelling it. The tag default also takes over",
          "istio-injection=enabled namespaces and the validation of config not labelled for a revision.",
          `Exit status: ${EXIT_OK} done (or declined), ${EXIT_INVALID} refused (see the message), ${EXIT_USAGE} usage error.`,
        ].join("\n"),
      ),
});
