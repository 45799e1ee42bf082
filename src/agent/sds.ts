// The agent's SDS server for Envoy (Istio's security/pkg/nodeagent/sds): SecretDiscoveryService on a
// Unix socket, serving the workload certificate as `default` (tls_certificate) and its roots as
// `ROOTCA` (validation_context), state of the world per stream, and pushing both again when the
// certificate is renewed. A stream asking before the first certificate waits for it.
import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { create } from "@bufbuild/protobuf";
import {
  Server,
  ServerCredentials,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import type { Logger } from "pino";
import { discovery, grpcServiceDefinition, packAny, sds, TypeUrl, tls } from "../api/index.ts";
import type { WorkloadCertificates, WorkloadSecret } from "./certs.ts";

/** The workload certificate's resource name. */
export const WORKLOAD_SECRET_NAME = "default";
/** The roots' resource name. */
export const ROOT_SECRET_NAME = "ROOTCA";
/** Where pilot-agent serves SDS (WORKLOAD_IDENTITY_SOCKET_PATH). */
export const DEFAULT_SDS_SOCKET_PATH = "./var/run/secrets/workload-spiffe-uds/socket";

type Request = discovery.DiscoveryRequest;
type Response = discovery.DiscoveryResponse;

const inline = (pem: string) => ({ specifier: { case: "inlineBytes" as const, value: Buffer.from(pem) } });

/** The Envoy Secret named `name` from the workload secret; undefined for another name. */
export function workloadSecretResource(name: string, secret: WorkloadSecret): tls.Secret | undefined {
  if (name === WORKLOAD_SECRET_NAME) {
    return create(tls.SecretSchema, {
      name,
      type: {
        case: "tlsCertificate",
        value: { certificateChain: inline(secret.certChainPem), privateKey: inline(secret.keyPem) },
      },
    });
  }
  if (name === ROOT_SECRET_NAME) {
    return create(tls.SecretSchema, {
      name,
      type: { case: "validationContext", value: { trustedCa: inline(secret.rootCertPem) } },
    });
  }
  return undefined;
}

function response(names: Iterable<string>, secret: WorkloadSecret, version: string): Response {
  const resources = [...names].flatMap((name) => {
    const resource = workloadSecretResource(name, secret);
    return resource ? [packAny(tls.SecretSchema, resource)] : [];
  });
  return create(discovery.DiscoveryResponseSchema, {
    versionInfo: version,
    typeUrl: TypeUrl.Secret,
    resources,
    nonce: randomUUID(),
  });
}

export interface SdsServerOptions {
  /** The Unix socket to serve on; a stale socket file there is replaced. */
  socketPath: string;
  certificates: Pick<WorkloadCertificates, "current" | "onUpdate">;
  log: Logger;
}

export interface SdsServer {
  close(): Promise<void>;
}

/** One stream's subscription: what it asked for and the nonce of the last response. */
interface Subscription {
  names: Set<string>;
  nonce?: string;
  stream: ServerDuplexStream<Request, Response>;
}

export async function startSdsServer(options: SdsServerOptions): Promise<SdsServer> {
  const { certificates, log } = options;
  const subscriptions = new Set<Subscription>();
  // The version of the secrets served: a new one per certificate.
  let version = 0;

  const send = (sub: Subscription) => {
    const secret = certificates.current;
    if (!secret || sub.names.size === 0) return;
    const message = response(sub.names, secret, String(version));
    sub.nonce = message.nonce;
    sub.stream.write(message);
  };

  const unsubscribe = certificates.onUpdate(() => {
    version++;
    for (const sub of subscriptions) send(sub);
  });
  if (certificates.current) version = 1;

  const streamSecrets = (stream: ServerDuplexStream<Request, Response>) => {
    const sub: Subscription = { names: new Set(), stream };
    subscriptions.add(sub);
    const end = () => subscriptions.delete(sub);
    stream.on("error", end);
    stream.on("cancelled", end);
    stream.on("end", () => {
      end();
      stream.end();
    });
    stream.on("data", (req: Request) => {
      if (req.errorDetail) {
        log.warn({ names: req.resourceNames, error: req.errorDetail.message }, "SDS: Envoy rejected the secrets");
        return;
      }
      const names = new Set(req.resourceNames);
      const unchanged = names.size === sub.names.size && [...names].every((n) => sub.names.has(n));
      // An ACK of the last response asks for nothing new.
      if (unchanged && req.responseNonce !== "" && req.responseNonce === sub.nonce) return;
      sub.names = names;
      send(sub);
    });
  };

  const fetchSecrets = (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>) => {
    const secret = certificates.current;
    if (!secret) callback({ code: status.UNAVAILABLE, details: "no workload certificate yet" });
    else callback(null, response(call.request.resourceNames, secret, String(version)));
  };

  const server = new Server();
  // DeltaSecrets is left unimplemented (grpc-js answers UNIMPLEMENTED): Envoy's SDS uses state of the world.
  server.addService(grpcServiceDefinition(sds.SecretDiscoveryService) as ServiceDefinition, {
    streamSecrets,
    fetchSecrets,
  });
  mkdirSync(dirname(options.socketPath), { recursive: true });
  rmSync(options.socketPath, { force: true });
  await new Promise<number>((resolve, reject) =>
    server.bindAsync(`unix:${options.socketPath}`, ServerCredentials.createInsecure(), (err, port) =>
      err ? reject(err) : resolve(port),
    ),
  );
  log.info({ socket: options.socketPath }, "SDS server listening");
  return {
    async close() {
      unsubscribe();
      for (const sub of subscriptions) sub.stream.end();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      rmSync(options.socketPath, { force: true });
    },
  };
}
