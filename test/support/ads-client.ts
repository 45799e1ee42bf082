// A raw ADS client for tests: sends DiscoveryRequests (SotW or delta) on one stream and hands out
// responses in order. Waits are bounded; a stream that ends rejects pending and later reads.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import {
  type ChannelCredentials,
  Client,
  type ClientDuplexStream,
  credentials,
  type ServiceError,
} from "@grpc/grpc-js";
import { deserializer, methodPath, serializer } from "../../src/api/grpc-service.ts";
import { type core, discovery, unpackAny } from "../../src/api/index.ts";

const WAIT_MS = 10_000;

export interface StreamEnd {
  code: number;
  details: string;
}

class AdsStreamClient<Req extends object, Res> {
  readonly #responses: Res[] = [];
  readonly #waiters: { resolve: (r: Res) => void; reject: (e: Error) => void }[] = [];
  #ended: StreamEnd | undefined;
  readonly ended: Promise<StreamEnd>;

  constructor(
    readonly client: Client,
    private readonly stream: ClientDuplexStream<Req, Res>,
  ) {
    let resolveEnd: (e: StreamEnd) => void = () => {};
    this.ended = new Promise((r) => {
      resolveEnd = r;
    });
    const end = (e: StreamEnd) => {
      if (this.#ended) return;
      this.#ended = e;
      resolveEnd(e);
      for (const w of this.#waiters.splice(0)) w.reject(new Error(`stream ended: ${e.code} ${e.details}`));
    };
    stream.on("data", (res: Res) => {
      const w = this.#waiters.shift();
      if (w) w.resolve(res);
      else this.#responses.push(res);
    });
    stream.on("error", (err: ServiceError) => end({ code: err.code, details: err.details }));
    stream.on("status", (s: StreamEnd) => end({ code: s.code, details: s.details }));
  }

  send(req: Req): void {
    this.stream.write(req);
  }

  /** The next response, waiting at most 10 s. */
  next(): Promise<Res> {
    const queued = this.#responses.shift();
    if (queued) return Promise.resolve(queued);
    if (this.#ended) return Promise.reject(new Error(`stream ended: ${this.#ended.code} ${this.#ended.details}`));
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (r: Res) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new Error("no response within 10 s"));
      }, WAIT_MS);
      this.#waiters.push(waiter);
    });
  }

  /** Responses received and not yet read. */
  get buffered(): number {
    return this.#responses.length;
  }

  close(): void {
    this.stream.end();
    this.client.close();
  }
}

export type NodeInit = MessageInitShape<typeof core.NodeSchema>;

/** A sidecar node as the agent sends it. */
export function sidecarNode(podName = "app-1", namespace = "default", metadata: NodeInit["metadata"] = {}): NodeInit {
  return {
    id: `sidecar~10.0.0.1~${podName}.${namespace}~${namespace}.svc.cluster.local`,
    metadata: { NAMESPACE: namespace, ISTIO_VERSION: "1.24.0", ...metadata },
  };
}

export class SotwClient extends AdsStreamClient<discovery.DiscoveryRequest, discovery.DiscoveryResponse> {
  static connect(address: string, creds: ChannelCredentials = credentials.createInsecure()): SotwClient {
    const client = new Client(address, creds);
    const m = discovery.AggregatedDiscoveryService.method.streamAggregatedResources;
    return new SotwClient(
      client,
      client.makeBidiStreamRequest(methodPath(m), serializer(m.input), deserializer(m.output)),
    );
  }

  request(init: MessageInitShape<typeof discovery.DiscoveryRequestSchema>): void {
    this.send(create(discovery.DiscoveryRequestSchema, init));
  }

  /** Sends a request, waits for its response and ACKs it for the same names; returns the response. */
  async requestAndAck(
    init: MessageInitShape<typeof discovery.DiscoveryRequestSchema>,
  ): Promise<discovery.DiscoveryResponse> {
    this.request(init);
    const res = await this.next();
    this.ack(res, init.resourceNames ?? []);
    return res;
  }

  /** ACKs a response, keeping (or changing) the subscribed names. */
  ack(res: discovery.DiscoveryResponse, resourceNames: string[] = []): void {
    this.request({ typeUrl: res.typeUrl, versionInfo: res.versionInfo, responseNonce: res.nonce, resourceNames });
  }

  nack(res: discovery.DiscoveryResponse, message: string, resourceNames: string[] = []): void {
    this.request({
      typeUrl: res.typeUrl,
      responseNonce: res.nonce,
      resourceNames,
      errorDetail: { code: 3, message },
    });
  }
}

export class DeltaClient extends AdsStreamClient<discovery.DeltaDiscoveryRequest, discovery.DeltaDiscoveryResponse> {
  static connect(address: string, creds: ChannelCredentials = credentials.createInsecure()): DeltaClient {
    const client = new Client(address, creds);
    const m = discovery.AggregatedDiscoveryService.method.deltaAggregatedResources;
    return new DeltaClient(
      client,
      client.makeBidiStreamRequest(methodPath(m), serializer(m.input), deserializer(m.output)),
    );
  }

  request(init: MessageInitShape<typeof discovery.DeltaDiscoveryRequestSchema>): void {
    this.send(create(discovery.DeltaDiscoveryRequestSchema, init));
  }

  ack(res: discovery.DeltaDiscoveryResponse): void {
    this.request({ typeUrl: res.typeUrl, responseNonce: res.nonce });
  }

  nack(res: discovery.DeltaDiscoveryResponse, message: string): void {
    this.request({ typeUrl: res.typeUrl, responseNonce: res.nonce, errorDetail: { code: 3, message } });
  }
}

/** Resource names of a response, sorted. */
export function names(res: discovery.DiscoveryResponse | discovery.DeltaDiscoveryResponse): string[] {
  if (res.$typeName === "envoy.service.discovery.v3.DeltaDiscoveryResponse") {
    return res.resources.map((r) => r.name).sort();
  }
  return res.resources.map((any) => resourceName(any)).sort();
}

function resourceName(any: Any): string {
  const msg = unpackAny(any);
  if (!msg) return "";
  if ("clusterName" in msg && typeof msg.clusterName === "string") return msg.clusterName;
  return "name" in msg && typeof msg.name === "string" ? msg.name : "";
}
