// `sluice kube-inject -f FILE [-o FILE] [--meshConfigFile FILE] [--valuesFile FILE] [--revision REV]
// [--nativeSidecars]`:
// the sidecar injector run offline over Kubernetes manifests, as istioctl kube-inject does. The pod
// template of every Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job,
// CronJob and Pod is injected with the webhook's own code; other objects are printed unchanged.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { CommandModule } from "yargs";
import { STDIN_PATH } from "../config/decode-paths.ts";
import { EXIT_INVALID, EXIT_OK } from "./exit-codes.ts";
import { filenameOption } from "./filename-option.ts";

interface KubeInjectArgs {
  filename: string[];
  output?: string;
  meshConfigFile?: string;
  valuesFile?: string;
  revision?: string;
  nativeSidecars: boolean;
}

export const kubeInjectCommand: CommandModule<object, KubeInjectArgs> = {
  command: "kube-inject",
  describe: "Inject the Istio sidecar into Kubernetes workload manifests",
  builder: (yargs) =>
    yargs
      .option("filename", filenameOption("inject"))
      .option("output", {
        alias: "o",
        type: "string",
        requiresArg: true,
        describe: "Write the result here (default: standard output)",
      })
      .option("meshConfigFile", {
        type: "string",
        requiresArg: true,
        describe: "MeshConfig YAML file (default: Istio's)",
      })
      .option("valuesFile", {
        type: "string",
        requiresArg: true,
        describe:
          "Istio's Helm values (global.hub, global.tag, global.proxy.*, sidecarInjectorWebhook.*) as YAML or JSON",
      })
      .option("revision", {
        alias: "r",
        type: "string",
        describe: "Control plane revision (default: the values' revision)",
      })
      .option("nativeSidecars", {
        type: "boolean",
        default: false,
        describe: "Run the proxy as a native sidecar (ENABLE_NATIVE_SIDECARS=true also turns this on)",
      })
      .check((argv) => {
        const paths = [argv.filename, argv.meshConfigFile ?? [], argv.valuesFile ?? []].flat();
        const missing = paths.filter((path) => path !== STDIN_PATH && !existsSync(path));
        if (missing.length > 0) throw new Error(`no such file or directory: ${missing.join(", ")}`);
        return true;
      })
      .demandCommand(0, 0)
      .example("$0 kube-inject -f deployment.yaml", "Print the injected manifests")
      .example("$0 kube-inject -f app.yaml -o app-injected.yaml --meshConfigFile mesh.yaml", "With a mesh config")
      .epilogue(
        [
          "Uses Istio's built-in templates (selected per pod by inject.istio.io/templates: sidecar, gateway,",
          "grpc-agent, grpc-simple) with Istio's default values (or --valuesFile's) and the proxy image",
          "docker.io/istio/proxyv2. A Kubernetes List stays a List, with its items injected.",
          "Pods with hostNetwork, in kube-system/kube-public/kube-node-lease/local-path-storage, or labelled or",
          'annotated sidecar.istio.io/inject: "false" are left alone, with a message on standard error.',
          "Exit status: 0 written, 1 some input could not be read or injected, 2 usage error.",
        ].join("\n"),
      ),
  handler: async (argv) => {
    const [{ configFiles }, { loadMeshConfig }, webhooks, { parse }] = await Promise.all([
      import("../config/decode.ts"),
      import("../config/mesh.ts"),
      import("../webhooks/index.ts"),
      import("yaml"),
    ]);
    try {
      const mesh = loadMeshConfig(argv.meshConfigFile ? readFileSync(argv.meshConfigFile, "utf8") : undefined).mesh;
      const values: unknown = argv.valuesFile ? parse(readFileSync(argv.valuesFile, "utf8")) : {};
      const settings = webhooks.injectionSettingsFromValues(values);
      if (argv.revision !== undefined) settings.revision = argv.revision;
      // Offline there are no nodes to ask, so only an explicit choice turns native sidecars on.
      settings.nativeSidecars = argv.nativeSidecars || webhooks.nativeSidecarModeFromEnv() === "enabled";
      const opts = { mesh, settings, warn: (message: string) => process.stderr.write(message) };
      const text = argv.filename
        .flatMap(configFiles)
        .map((file) => webhooks.kubeInjectText(readFileSync(file === STDIN_PATH ? 0 : file, "utf8"), file, opts))
        .join("");
      if (argv.output) writeFileSync(argv.output, text);
      else process.stdout.write(text);
      process.exitCode = EXIT_OK;
    } catch (err) {
      process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = EXIT_INVALID;
    }
  },
};
