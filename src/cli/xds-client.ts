// How the CLI asks a control plane for debug information over xDS (istioctl's xds client): one ADS
// stream, one DiscoveryRequest for an `istio.io/debug/...` type URL from a node with GENERATOR=event,
// the first response, then the stream is closed. Plaintext (15010) or TLS (15012) with an optional
// client certificate (--cert-dir) and bearer token.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { type ChannelCredentials, Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { discovery } from "../api/index.ts";
import { deserializer, methodPath, serializer } from "../xds/server/index.ts";

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
          id: `sluice~0.0.0.0~sluice-${process.pid}.${options.namespace}~${options.namespace}.svc.cluster.local`,
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
