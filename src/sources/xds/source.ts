// The xDS config source (MeshConfig `configSources` with `xds://host:port`, Istio's "MCP over xDS"
// client): one ADS stream to another control plane subscribing to every kind's `group/version/kind`
// type URL. Each response is the whole set of one kind and replaces what this source holds of it;
// a lost stream is reopened with backoff, keeping the objects received meanwhile.
import { hostname } from "node:os";
import { create } from "@bufbuild/protobuf";
import { type ChannelCredentials, Client, type ClientDuplexStream, credentials } from "@grpc/grpc-js";
import type { Logger } from "pino";
import {
  apiTypeUrl,
  deserializer,
  discovery,
  mcp,
  methodPath,
  parseApiTypeUrl,
  serializer,
  unpackAny,
} from "../../api/index.ts";
import { type ConfigObject, KINDS, type KindInfo } from "../../config/index.ts";
import { Backoff, type BackoffOptions } from "../kube/backoff.ts";
import { admitObject, describeIssue } from "../store-admit.ts";
import type { ConfigWriter, SourceProblem } from "../types.ts";
import { fromMcpResource } from "./convert.ts";

export interface XdsSourceTls {
  /** Roots the server certificate is verified against (system roots when absent). */
  caCertificates?: Buffer;
  /** Client certificate and key (PEM), for a server that authenticates its callers. */
  clientCertificate?: Buffer;
  privateKey?: Buffer;
}

export interface XdsSourceOptions {
  /** `host:port` of the control plane serving config (the part after `xds://`). */
  address: string;
  writer: ConfigWriter;
  /** Source id in the store; default `xds`. */
  source?: string;
  /** Kinds to subscribe to; default every supported kind, at its preferred version. */
  kinds?: readonly KindInfo[];
  /** TLS to the server; plaintext without it. */
  tls?: XdsSourceTls;
  /** Namespace the node claims (the server's identity check compares it with the client certificate). */
  namespace: string;
  /** Node name part; default the host name. */
  podName?: string;
  backoff?: BackoffOptions;
  log?: Logger;
}

type Stream = ClientDuplexStream<discovery.DiscoveryRequest, discovery.DiscoveryResponse>;

const ADS = discovery.AggregatedDiscoveryService.method.streamAggregatedResources;

export class XdsSource {
  readonly #options: XdsSourceOptions;
  readonly #source: string;
  readonly #typeUrls: string[];
  readonly #client: Client;
  readonly #backoff: Backoff;
  /** Type URLs answered at least once since start. */
  readonly #synced = new Set<string>();
  #syncWaiters: Array<() => void> = [];
  #stream: Stream | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  constructor(options: XdsSourceOptions) {
    this.#options = options;
    this.#source = options.source ?? "xds";
    this.#typeUrls = (options.kinds ?? KINDS.filter((k) => k.supported)).map((k) =>
      apiTypeUrl(k.group, k.preferredVersion, k.kind),
    );
    this.#client = new Client(options.address, channelCredentials(options.tls), {
      "grpc.max_receive_message_length": -1,
    });
    this.#backoff = new Backoff(options.backoff ?? { initialMs: 1000, maxMs: 30_000 });
  }

  /** Whether every kind has been received once (Istio's HasSynced). */
  get synced(): boolean {
    return this.#synced.size === this.#typeUrls.length;
  }

  /** Connects, and resolves once every kind has been received; retries until then. */
  async start(): Promise<void> {
    this.#connect();
    if (this.synced) return;
    await new Promise<void>((resolve) => this.#syncWaiters.push(resolve));
  }

  /** Closes the stream; the objects received stay in the store. */
  stop(): void {
    this.#stopped = true;
    if (this.#retry) clearTimeout(this.#retry);
    this.#stream?.cancel();
    this.#client.close();
    for (const wake of this.#syncWaiters.splice(0)) wake();
  }

  #connect(): void {
    if (this.#stopped) return;
    const stream: Stream = this.#client.makeBidiStreamRequest(
      methodPath(ADS),
      serializer(ADS.input),
      deserializer(ADS.output),
    );
    this.#stream = stream;
    let ended = false;
    const lost = (why: string) => {
      if (ended) return;
      ended = true;
      if (this.#stopped) return;
      const delay = this.#backoff.next();
      this.#options.log?.warn(
        { address: this.#options.address, why, retryMs: Math.round(delay) },
        "xDS config source lost",
      );
      this.#retry = setTimeout(() => this.#connect(), delay);
    };
    stream.on("data", (res: discovery.DiscoveryResponse) => this.#onResponse(stream, res));
    stream.on("error", (err: Error) => lost(err.message));
    stream.on("end", () => lost("stream ended"));
    const node = this.#node();
    for (const [i, typeUrl] of this.#typeUrls.entries()) {
      // The node goes with the first request only, as Envoy sends it.
      stream.write(create(discovery.DiscoveryRequestSchema, { typeUrl, node: i === 0 ? node : undefined }));
    }
  }

  #node() {
    const namespace = this.#options.namespace;
    const pod = this.#options.podName ?? hostname();
    return {
      id: `sidecar~127.0.0.1~${pod}.${namespace}~${namespace}.svc.cluster.local`,
      metadata: { GENERATOR: "api", NAMESPACE: namespace },
    };
  }

  #onResponse(stream: Stream, res: discovery.DiscoveryResponse): void {
    const gvk = parseApiTypeUrl(res.typeUrl);
    if (!gvk || !this.#typeUrls.includes(res.typeUrl)) return;
    const scope = `${this.#options.address} ${res.typeUrl}`;
    const objects: ConfigObject[] = [];
    const problems: SourceProblem[] = [];
    for (const any of res.resources) {
      const resource = unpackAny(any, mcp.ResourceSchema);
      const obj = resource ? fromMcpResource(gvk, resource) : new Error(`not an MCP resource: ${any.typeUrl}`);
      if (obj instanceof Error) {
        problems.push({ source: this.#source, where: scope, message: obj.message });
        continue;
      }
      // Same defaulting and validation as every other source.
      const admission = admitObject(obj);
      const where = `${scope} ${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
      for (const e of admission.errors) problems.push({ source: this.#source, where, message: describeIssue(e) });
      if (admission.errors.length === 0) objects.push(admission.object);
    }
    this.#options.writer.reportProblems(this.#source, scope, problems);
    this.#options.writer.replace(this.#source, scope, objects);
    stream.write(
      create(discovery.DiscoveryRequestSchema, {
        typeUrl: res.typeUrl,
        versionInfo: res.versionInfo,
        responseNonce: res.nonce,
      }),
    );
    this.#backoff.reset();
    this.#synced.add(res.typeUrl);
    if (this.synced) for (const wake of this.#syncWaiters.splice(0)) wake();
  }
}

function channelCredentials(tls: XdsSourceTls | undefined): ChannelCredentials {
  if (!tls) return credentials.createInsecure();
  return credentials.createSsl(tls.caCertificates ?? null, tls.privateKey ?? null, tls.clientCertificate ?? null);
}
