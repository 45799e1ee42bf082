// How the CLI asks a control plane for debug information over xDS (istioctl's xds client and
// multixds): one ADS stream, one DiscoveryRequest for an `istio.io/debug/...` type URL from a node
// with GENERATOR=event, the first response, then the stream is closed. Plaintext (15010) or TLS
// (15012) with an optional client certificate (--cert-dir) and bearer token. The control plane is
// --xds-address, or else every istiod pod of the kubeconfig's cluster through a port-forward, over
// TLS verified with the mesh's CA root and a token the TokenRequest API issues.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { create, toJson } from "@bufbuild/protobuf";
import { type ChannelCredentials, Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import {
  deserializer,
  discovery,
  methodPath,
  registry,
  schemaForTypeUrl,
  serializer,
  unpackAny,
} from "../api/index.ts";
import { PROXY_NOT_CONNECTED } from "../xds/generators/debug-endpoints.ts";
import { TypeUrl } from "../xds/types.ts";
import { type ControlPlaneArgs, usesCluster } from "./control-plane-options.ts";
import { clusterAccess, type KubeAccess } from "./kube-access.ts";
import { cliLog } from "./log.ts";
import { goJson } from "./proxy-config-format.ts";

// istioctl's multixds: tokens for the istio namespace's `default` account, for the CA's audience, an hour long.
const TOKEN_SERVICE_ACCOUNT = "default";
const TOKEN_AUDIENCES = ["istio-ca"];
const TOKEN_EXPIRATION_SECONDS = 60 * 60;

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
  /** The CA root (PEM) that verifies the server when --cert-dir gives none. */
  rootCert?: string;
  /** The name the server's certificate must carry, when the address is not it (a port-forward). */
  serverName?: string;
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
  const nameOverride = options.serverName
    ? { "grpc.ssl_target_name_override": options.serverName, "grpc.default_authority": options.serverName }
    : {};
  cliLog("xds").debug({ address: options.address, typeUrl, resourceNames }, "xDS debug request");
  const client = new Client(options.address, channelCredentials(options), nameOverride);
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
    stream.on("data", (response: discovery.DiscoveryResponse) => {
      cliLog("xds").debug({ typeUrl, resources: response.resources.length }, "xDS debug response");
      finish(() => resolve(response));
    });
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
  const root = options.insecure
    ? null
    : (read("root-cert.pem") ?? (options.rootCert ? Buffer.from(options.rootCert) : null));
  return credentials.createSsl(
    root,
    read("key.pem"),
    read("cert-chain.pem"),
    options.insecure ? { checkServerIdentity: () => undefined, rejectUnauthorized: false } : undefined,
  );
}

/** The client options of --xds-address and the other flags; a one-line error without an address. */
export function xdsClientOptions(argv: ControlPlaneArgs): XdsClientOptions {
  const address = argv["xds-address"];
  if (!address) {
    throw new Error(
      "no control plane address: pass --xds-address host:port (15010 with --plaintext, or 15012), or a kubeconfig (--kubeconfig, $KUBECONFIG or ~/.kube/config)",
    );
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
 * Sends one request to the control plane the flags reach: --xds-address, else each running istiod
 * pod of the cluster in turn (istioctl's multixds). "all" asks every pod; "first" stops at the first
 * answer that is not "Proxy not connected to this Pilot instance" (the last pod's answer stands).
 */
export async function requestControlPlanes(
  argv: ControlPlaneArgs,
  typeUrl: string,
  resourceNames: string[] = [],
  mode: "all" | "first" = "all",
): Promise<discovery.DiscoveryResponse[]> {
  return (await requestNamedControlPlanes(argv, typeUrl, resourceNames, mode)).map(({ response }) => response);
}

/** requestControlPlanes, each answer with who gave it: the istiod pod's name, else --xds-address. */
export async function requestNamedControlPlanes(
  argv: ControlPlaneArgs,
  typeUrl: string,
  resourceNames: string[] = [],
  mode: "all" | "first" = "all",
): Promise<{ name: string; response: discovery.DiscoveryResponse }[]> {
  if (!usesCluster(argv)) {
    const options = xdsClientOptions(argv);
    return [{ name: options.address, response: await requestDebug(options, typeUrl, resourceNames) }];
  }
  const kube = clusterAccess(argv);
  const istioNamespace = argv.istioNamespace ?? "istio-system";
  const pods = await kube.controlPlanePods(istioNamespace, argv.revision);
  const options = await clusterClientOptions(kube, argv, istioNamespace);
  const port = argv["xds-port"] ?? (argv.plaintext ? 15010 : 15012);
  const responses: { name: string; response: discovery.DiscoveryResponse }[] = [];
  for (const [index, pod] of pods.entries()) {
    const response = await kube
      .withPortForward(pod.metadata, port, (address) => requestDebug({ ...options, address }, typeUrl, resourceNames))
      .catch((err: unknown) => {
        const why = err instanceof Error ? err.message : String(err);
        throw new Error(`could not get XDS from discovery pod "${pod.metadata.name}": ${why}`);
      });
    if (mode === "first" && index < pods.length - 1 && notConnectedHere(response)) continue;
    responses.push({ name: pod.metadata.name, response });
    if (mode === "first") break;
  }
  return responses;
}

/** The client options for istiod pods reached through port-forwards (istioctl's xds.DialOptions). */
async function clusterClientOptions(
  kube: KubeAccess,
  argv: ControlPlaneArgs,
  istioNamespace: string,
): Promise<Omit<XdsClientOptions, "address">> {
  const certDir = argv["cert-dir"];
  const tls = !argv.plaintext;
  let token: string | undefined;
  if (argv["token-file"]) token = readFileSync(argv["token-file"], "utf8").trim();
  else if (tls && !certDir) {
    token = await kube.serviceAccountToken(
      istioNamespace,
      TOKEN_SERVICE_ACCOUNT,
      TOKEN_AUDIENCES,
      TOKEN_EXPIRATION_SECONDS,
    );
  }
  // istioctl's makeSan: the istiod Service's DNS name, which istiod's certificate carries (the default
  // revision's Service is plain `istiod`).
  const revision = argv.revision && argv.revision !== "default" ? argv.revision : undefined;
  return {
    plaintext: argv.plaintext,
    insecure: argv.insecure,
    certDir,
    token,
    rootCert: tls && !argv.insecure && !certDir ? await kube.caRoot(istioNamespace) : undefined,
    serverName: revision ? `istiod-${revision}.${istioNamespace}.svc` : `istiod.${istioNamespace}.svc`,
    namespace: istioNamespace,
    timeoutMs: argv.timeout * 1000,
  };
}

function notConnectedHere(response: discovery.DiscoveryResponse): boolean {
  return (
    response.resources.length === 1 &&
    new TextDecoder().decode(response.resources[0].value).includes(PROXY_NOT_CONNECTED.body.trim())
  );
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
