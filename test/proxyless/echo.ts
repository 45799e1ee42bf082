// A tiny gRPC echo service for end-to-end tests with real grpc-js clients: raw bytes, no protos.
// A backend answers with its own name; a test can make it fail or hold calls to exercise retries,
// timeouts and circuit breaking.
import {
  type Client,
  type Metadata,
  type MethodDefinition,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceError,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";

const raw = (b: Buffer) => b;

/** A unary method whose requests and responses are raw bytes. */
export function rawUnaryMethod(path: string): MethodDefinition<Buffer, Buffer> {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: raw,
    requestDeserialize: raw,
    responseSerialize: raw,
    responseDeserialize: raw,
  };
}

/** `/sluice.test.Echo/Echo` and a second method, for method (path) matching. */
export const ECHO_METHOD = rawUnaryMethod("/sluice.test.Echo/Echo");
export const OTHER_METHOD = rawUnaryMethod("/sluice.test.Echo/Other");

export class Backend {
  /** Calls that reached this backend. */
  calls = 0;
  /** The next `failNext` calls end with UNAVAILABLE. */
  failNext = 0;
  /** Every call ends with this status instead of an answer (an unhealthy backend). */
  failAll?: status;
  /** Calls wait this long before answering. */
  holdMs = 0;
  /** Calls wait until `release()`. */
  holding = false;
  private readonly held: (() => void)[] = [];
  port = 0;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly name: string,
    readonly server: Server = new Server(),
  ) {
    const handler = (_call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      this.calls++;
      const answer = () => {
        if (this.failNext > 0) {
          this.failNext--;
          callback({ code: status.UNAVAILABLE, details: `${name} fails on purpose` });
        } else if (this.failAll !== undefined) callback({ code: this.failAll, details: `${name} is unhealthy` });
        else callback(null, Buffer.from(name));
      };
      if (this.holding) return void this.held.push(answer);
      if (this.holdMs === 0) return answer();
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        answer();
      }, this.holdMs);
      this.timers.add(timer);
    };
    server.addService({ echo: ECHO_METHOD, other: OTHER_METHOD }, { echo: handler, other: handler });
  }

  /** Binds `address` (127.0.0.1:0 for a plain server; an xDS server needs a fixed port). */
  async listen(
    address = "127.0.0.1:0",
    credentials: ServerCredentials = ServerCredentials.createInsecure(),
  ): Promise<number> {
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(address, credentials, (err, p) => (err ? reject(err) : resolve(p))),
    );
    return this.port;
  }

  /** Answers the held calls and stops holding. */
  release(): void {
    this.holding = false;
    for (const answer of this.held.splice(0)) answer();
  }

  stop(): void {
    this.release();
    for (const t of this.timers) clearTimeout(t);
    this.server.forceShutdown();
  }
}

export async function startBackend(name: string): Promise<Backend> {
  const backend = new Backend(name);
  await backend.listen();
  return backend;
}

export interface CallOptions {
  method?: MethodDefinition<Buffer, Buffer>;
  metadata?: Metadata;
  deadlineMs?: number;
}

/** One unary call: the answering backend's name, or the error. */
export function call(client: Client, options: CallOptions = {}): Promise<string> {
  const m = options.method ?? ECHO_METHOD;
  const callOptions = { deadline: Date.now() + (options.deadlineMs ?? 10_000) };
  return new Promise((resolve, reject) => {
    const done = (err: ServiceError | null, res?: Buffer) => (err ? reject(err) : resolve(String(res)));
    if (options.metadata)
      client.makeUnaryRequest(m.path, raw, raw, Buffer.alloc(0), options.metadata, callOptions, done);
    else client.makeUnaryRequest(m.path, raw, raw, Buffer.alloc(0), callOptions, done);
  });
}

/** The outcome of one call: the backend's name, or `error:<code>`. */
export function outcome(client: Client, options: CallOptions = {}): Promise<string> {
  return call(client, options).then(
    (name) => name,
    (err: ServiceError) => `error:${status[err.code]}`,
  );
}

/** `n` calls, `concurrency` at a time; how many ended each way. */
export async function tally(
  client: Client,
  n: number,
  options: CallOptions = {},
  concurrency = 50,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let started = 0;
  const worker = async () => {
    while (started < n) {
      started++;
      const result = await outcome(client, options);
      counts.set(result, (counts.get(result) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return counts;
}
