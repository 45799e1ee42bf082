// sluice-agent: the node agent beside each proxyless gRPC workload (Istio's pilot-agent with
// DISABLE_ENVOY). `grpc-bootstrap` writes the gRPC xDS bootstrap and exits; `proxy` writes it, serves
// the status port (15020) and stays up until SIGTERM or /quitquitquit. Settings come from the pod's
// environment as pilot-agent reads it (POD_NAME, POD_NAMESPACE, INSTANCE_IP, ISTIO_META_*, PROXY_CONFIG,
// GRPC_XDS_BOOTSTRAP, OUTPUT_CERTS, ISTIO_KUBE_APP_PROBERS, ISTIO_PROMETHEUS_ANNOTATIONS). With
// OUTPUT_CERTS, `proxy` fetches the workload certificate from the CA (CA_ADDR, CA_ROOT_CA) and renews it.
import { pino } from "pino";
import yargs, { type Argv } from "yargs";
import { hideBin } from "yargs/helpers";
import {
  agentProxyConfig,
  DEFAULT_CA_ROOT_CERT_PATH,
  DEFAULT_GRPC_BOOTSTRAP_PATH,
  DEFAULT_MESH_CONFIG_PATH,
  DEFAULT_POD_INFO_DIR,
  DEFAULT_TOKEN_PATH,
  podGrpcBootstrap,
  runAgent,
  waitUntilReady,
  writeGrpcBootstrap,
} from "../agent/index.ts";
import { rejectUnknownCommandLineFlags } from "../cli/flags.ts";
import type { ProxyConfig } from "../config/index.ts";
import { parseOutputLevels, pinoLevel, scopeLevel } from "../log/index.ts";
import { NODE_TYPES, type NodeType } from "../model/index.ts";

const env = process.env;

/** Exit code for a command line that cannot run (as sluice's). */
const EXIT_USAGE = 2;

function fail(message: string): never {
  process.stderr.write(`sluice-agent: ${message}\n`);
  process.exit(EXIT_USAGE);
}

/** The options both commands share: where istiod is and what the bootstrap says. */
function bootstrapOptions<T>(y: Argv<T>) {
  return y
    .option("meshConfig", {
      type: "string",
      default: DEFAULT_MESH_CONFIG_PATH,
      describe: "Mesh config file whose defaultConfig is the proxy's ProxyConfig (read when present)",
    })
    .option("discovery-address", {
      type: "string",
      describe: "xDS server HOST:PORT (default: the ProxyConfig's discoveryAddress, istiod.istio-system.svc:15012)",
    })
    .option("node-id", {
      type: "string",
      describe: "xDS node id (default: sidecar~$INSTANCE_IP~$POD_NAME.$POD_NAMESPACE~$POD_NAMESPACE.svc.cluster.local)",
    })
    .option("domain", {
      type: "string",
      describe: "DNS domain of the node id (default: $POD_NAMESPACE.svc.cluster.local)",
    })
    .option("output-certs", {
      type: "string",
      default: env.OUTPUT_CERTS || undefined,
      describe: "Directory of the workload certificates the bootstrap's file_watcher provider reads (OUTPUT_CERTS)",
    })
    .option("channel-creds", {
      type: "string",
      choices: ["insecure", "tls"] as const,
      default: "insecure" as const,
      describe: "xDS channel credentials (tls reads the certificates of --output-certs)",
    })
    .option("pod-info-dir", {
      type: "string",
      default: DEFAULT_POD_INFO_DIR,
      describe: "Downward API directory with the pod's labels and annotations files",
    });
}

interface BootstrapArgs {
  meshConfig: string;
  discoveryAddress?: string;
  nodeId?: string;
  type: string;
  domain?: string;
  outputCerts?: string;
  channelCreds: "insecure" | "tls";
  podInfoDir: string;
}

/** The bootstrap settings of a command line: flags over the ProxyConfig pilot-agent would build. */
function bootstrapSettings(argv: BootstrapArgs, overrides: ProxyConfig = {}) {
  const proxyConfig: ProxyConfig = { ...agentProxyConfig(env, argv.meshConfig), ...overrides };
  if (argv.discoveryAddress) proxyConfig.discoveryAddress = argv.discoveryAddress;
  return {
    env,
    proxyConfig,
    nodeId: argv.nodeId,
    type: argv.type as NodeType,
    domain: argv.domain,
    certDir: argv.outputCerts,
    channelCreds: argv.channelCreds,
    podInfoDir: argv.podInfoDir,
  };
}

/** Unknown flags fail grpc-bootstrap and wait; `proxy` ignores them, as pilot-agent's proxy command does. */
const rejectUnknownFlags = rejectUnknownCommandLineFlags(hideBin(process.argv));

const bootstrapPath = (output: string | undefined) => output || env.GRPC_XDS_BOOTSTRAP || DEFAULT_GRPC_BOOTSTRAP_PATH;

try {
  await yargs(hideBin(process.argv))
    .scriptName("sluice-agent")
    .usage("$0 <command> [options]\n\nThe node agent beside a proxyless gRPC workload.")
    .command(
      "grpc-bootstrap",
      "Write the gRPC xDS bootstrap file and exit",
      (y) =>
        bootstrapOptions(y)
          .option("type", {
            type: "string",
            choices: NODE_TYPES,
            default: "sidecar",
            describe: "Proxy type of the node id",
          })
          .option("output", {
            type: "string",
            describe: `Bootstrap file to write (default: $GRPC_XDS_BOOTSTRAP, else ${DEFAULT_GRPC_BOOTSTRAP_PATH})`,
          })
          .check(rejectUnknownFlags),
      (argv) => {
        const path = bootstrapPath(argv.output);
        writeGrpcBootstrap(path, podGrpcBootstrap(bootstrapSettings(argv)));
        process.stdout.write(`${path}\n`);
      },
    )
    .command(
      "proxy [type]",
      "Write the gRPC bootstrap, serve the status port and run until SIGTERM or /quitquitquit",
      (y) =>
        bootstrapOptions(y)
          .positional("type", { type: "string", choices: NODE_TYPES, default: "sidecar", describe: "Proxy type" })
          .option("statusPort", {
            type: "number",
            describe: "Status server port; 0 runs none (default: the ProxyConfig's statusPort, 15020)",
          })
          .option("grpc-bootstrap", {
            type: "string",
            describe: `Bootstrap file to write (default: $GRPC_XDS_BOOTSTRAP, else ${DEFAULT_GRPC_BOOTSTRAP_PATH})`,
          })
          .option("ca-address", {
            type: "string",
            default: env.CA_ADDR || undefined,
            describe: "CA HOST:PORT for the workload certificate (CA_ADDR; default: the discovery address)",
          })
          .option("ca-root-cert", {
            type: "string",
            default: env.CA_ROOT_CA || DEFAULT_CA_ROOT_CERT_PATH,
            describe: "Roots the CA's serving certificate chains to (CA_ROOT_CA)",
          })
          .option("ca-server-name", {
            type: "string",
            default: env.ISTIOD_SAN || undefined,
            describe: "Name the CA's certificate carries, when not the address's host (ISTIOD_SAN)",
          })
          .option("token-path", {
            type: "string",
            default: DEFAULT_TOKEN_PATH,
            describe: "Bearer token file sent to the CA",
          })
          .option("sds-socket", {
            type: "string",
            describe: "Serve SDS (default, ROOTCA) for Envoy on this Unix socket (needs --output-certs)",
          })
          .option("log_output_level", {
            type: "string",
            default: "default:info",
            describe: "Agent log level, as Istio's <scope>:<level>,... list (the agent logs as the default scope)",
          })
          .option("log_as_json", { type: "boolean", describe: "Accepted for Istio's templates: logs are always JSON" })
          .option("proxyLogLevel", { type: "string", describe: "Accepted for Istio's templates: there is no Envoy" })
          .option("proxyComponentLogLevel", {
            type: "string",
            describe: "Accepted for Istio's templates: there is no Envoy",
          }),
      async (argv) => {
        // The agent logs as one scope, Istio's default.
        const levels = parseOutputLevels(argv.log_output_level);
        const log = pino({ name: "sluice-agent", level: pinoLevel(scopeLevel(levels, "default", "info")) });
        const overrides: ProxyConfig = argv.statusPort === undefined ? {} : { statusPort: argv.statusPort };
        const settings = bootstrapSettings(argv, overrides);
        const agent = await runAgent({
          ...settings,
          bootstrapPath: bootstrapPath(argv.grpcBootstrap),
          // OUTPUT_CERTS asks for the workload certificate, as Istio's grpc-agent template sets it.
          certificates: argv.outputCerts
            ? {
                caAddress: argv.caAddress || settings.proxyConfig.discoveryAddress || "",
                caRootCertPath: argv.caRootCert,
                caServerName: argv.caServerName,
                tokenPath: argv.tokenPath,
                sdsSocketPath: argv.sdsSocket,
              }
            : undefined,
          log,
        });
        for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void agent.stop(signal));
        // Stay up until stopped, as pilot-agent does without Envoy.
        const keepAlive = setInterval(() => {}, 1 << 30);
        await agent.stopped;
        clearInterval(keepAlive);
        log.info("stopped");
        process.exit(0);
      },
    )
    .command(
      "wait",
      "Wait until a readiness URL answers 200 (a postStart hook holding the application)",
      (y) =>
        y
          .option("timeoutSeconds", { type: "number", default: 60, describe: "Give up after this long" })
          .option("requestTimeoutMillis", { type: "number", default: 500, describe: "Timeout of each request" })
          .option("periodMillis", { type: "number", default: 500, describe: "Pause between requests" })
          .option("url", { type: "string", default: "http://localhost:15021/healthz/ready", describe: "URL to poll" })
          .check(rejectUnknownFlags),
      async (argv) => {
        process.stdout.write(`Waiting for Envoy proxy to be ready (timeout: ${argv.timeoutSeconds} seconds)...\n`);
        try {
          await waitUntilReady({
            url: argv.url,
            timeoutMs: argv.timeoutSeconds * 1000,
            requestTimeoutMs: argv.requestTimeoutMillis,
            periodMs: argv.periodMillis,
          });
        } catch (err) {
          // pilot-agent exits -1 when a command fails.
          process.stderr.write(`${(err as Error).message}\n`);
          process.exit(255);
        }
        process.stdout.write("Envoy is ready!\n");
      },
    )
    .demandCommand(1, "Name a command; see --help.")
    .strictCommands()
    .help()
    .version(false)
    .fail((message, error) => fail(message ?? error?.message ?? String(error)))
    .parseAsync();
} catch (err) {
  fail((err as Error).message);
}
