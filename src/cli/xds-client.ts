// How the CLI asks a control plane for debug information over xDS (istioctl's xds client): one ADS
// stream, one DiscoveryRequest for an `istio.io/debug/...` type URL from a node with GENERATOR=event,
// the first response, then the stream is closed. Plaintext (15010) or TLS (15012) with an optional
// client certificate (--cert-dir) and bearer token.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { create, toJson } from "@bufbuild/protobuf";
import { type ChannelCredentials, Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import type { Argv } from "yargs";
import { discovery, registry, schemaForTypeUrl, unpackAny } from "../api/index.ts";
import { deserializer, methodPath, serializer } from "../xds/server/index.ts";
import { TypeUrl } from "../xds/types.ts";
import { goJson } from "./proxy-config-format.ts";

export interface XdsClientOptions {
  /** host:port of the control plane's ADS. */
  address: string;
  /** Plaintext (istiod's 15010); otherwise TLS. */
  plaintext: boolean;
  /** TLS without verifying the server certificate (istioctl's --insecure). */
  insecure: boolean;
  /** A directory with cert-chain.pem, key.pem and root-cert.pem (istioctl's --cert-dir). */
  certDir?: string;
  /** A bearer token sent as `authorization` (the TLS port's JWT authenticators). */
  token?: string;
  /** The istio namespace the CLI's node claims (istioctl's node metadata NAMESPACE). */
  namespace: string;
  timeoutMs: number;
}

/** Sends one request of `typeUrl` (naming `resourceNames`) and returns the first response. */
export function requestDebug(
  options: XdsClientOptions,
  typeUrl: string,
  resourceNames: string[] = [],
): Promise<discovery.DiscoveryResponse> {
  const client = new Client(options.address, channelCredentials(options));
  const method = discovery.AggregatedDiscoveryService.method.streamAggregatedResources;
  const metadata = new Metadata();
  if (options.token) metadata.set("authorization", `Bearer ${options.token}`);
  const stream = client.makeBidiStreamRequest(
    methodPath(method),
    serializer(method.input),
    deserializer(method.output),
    metadata,
    {
      deadline: Date.now() + options.timeoutMs,
    },
  );
  return new Promise((resolve, reject) => {
    const finish = (outcome: () => void) => {
      stream.removeAllListeners();
      stream.on("error", () => {});
      stream.cancel();
      client.close();
      outcome();
    };
    stream.on("data", (response: discovery.DiscoveryResponse) => finish(() => resolve(response)));
    stream.on("error", (err: ServiceError) =>
      finish(() => reject(new Error(`xDS request to ${options.address} failed: ${err.details || err.message}`))),
    );
    stream.on("end", () =>
      finish(() => reject(new Error(`xDS stream to ${options.address} ended without a response`))),
    );
    stream.write(
      create(discovery.DiscoveryRequestSchema, {
        node: {
          id: `sidecar~0.0.0.0~sluice-${process.pid}.${options.namespace}~${options.namespace}.svc.cluster.local`,
          metadata: { GENERATOR: "event", NAMESPACE: options.namespace },
        },
        typeUrl,
        resourceNames,
      }),
    );
  });
}

function channelCredentials(options: XdsClientOptions): ChannelCredentials {
  if (options.plaintext) return credentials.createInsecure();
  const read = (name: string) => (options.certDir ? readFileSync(join(options.certDir, name)) : null);
  const root = options.insecure ? null : read("root-cert.pem");
  return credentials.createSsl(
    root,
    read("key.pem"),
    read("cert-chain.pem"),
    options.insecure ? { checkServerIdentity: () => undefined, rejectUnauthorized: false } : undefined,
  );
}

/** What the control-plane options give (istioctl's central options). */
export interface ControlPlaneArgs {
  "xds-address"?: string;
  "cert-dir"?: string;
  insecure: boolean;
  plaintext: boolean;
  "token-file"?: string;
  timeout: number;
  istioNamespace?: string;
}

/** The flags of every command that talks to the control plane over xDS (--xds-address is global). */
export function withControlPlaneOptions<T>(yargs: Argv<T>) {
  return yargs
    .option("cert-dir", {
      type: "string",
      describe: "Directory with cert-chain.pem, key.pem and root-cert.pem for mTLS to the control plane",
    })
    .option("insecure", { type: "boolean", default: false, describe: "Skip verifying the control plane's certificate" })
    .option("plaintext", { type: "boolean", default: false, describe: "Plaintext xDS (istiod's 15010) instead of TLS" })
    .option("token-file", { type: "string", describe: "A file holding a bearer token for the TLS port" })
    .option("timeout", { type: "number", default: 30, describe: "Seconds to wait for the control plane" });
}

/** The client options from the flags; a one-line error without an address. */
export function xdsClientOptions(argv: ControlPlaneArgs): XdsClientOptions {
  const address = argv["xds-address"];
  if (!address) {
    throw new Error("no control plane address: pass --xds-address host:port (15010 with --plaintext, or 15012)");
  }
  return {
    address,
    plaintext: argv.plaintext,
    insecure: argv.insecure,
    certDir: argv["cert-dir"],
    token: argv["token-file"] ? readFileSync(argv["token-file"], "utf8").trim() : undefined,
    namespace: argv.istioNamespace ?? "istio-system",
    timeoutMs: argv.timeout * 1000,
  };
}

/**
 * The bodies of an `istio.io/debug/<endpoint>` response, one per resource: an endpoint's text as
 * sent, any other resource (syncz's ClientConfigs) as proto JSON.
 */
export function debugBodies(response: discovery.DiscoveryResponse): string[] {
  return response.resources.map((r) => {
    if (r.typeUrl === TypeUrl.Debug) return new TextDecoder().decode(r.value);
    const schema = schemaForTypeUrl(r.typeUrl);
    const message = schema ? unpackAny(r, schema) : undefined;
    return schema && message
      ? goJson(toJson(schema, message, { registry }))
      : `(${r.typeUrl}: ${r.value.length} bytes)`;
  });
}

/**
 * An error a command reports as one line (sluice prints the stack only of errors without a code,
 * which are bugs): for what the user or the control plane got wrong.
 */
export class CommandError extends Error {
  readonly code = "ESLUICE_COMMAND";
}

/** Runs a command's work, its failures reported as one-line CommandErrors. */
export async function reportingFailures(work: () => Promise<void> | void): Promise<void> {
  try {
    await work();
  } catch (err) {
    throw err instanceof Error && !(err instanceof TypeError) && !(err instanceof RangeError)
      ? new CommandError(err.message)
      : err;
  }
}
