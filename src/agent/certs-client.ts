// The agent's side of istio.v1.auth.IstioCertificateService (Istio's citadel CA client): CreateCertificate
// over TLS to CA_ADDR, trusting the CA root file (CA_ROOT_CA), authenticated by a bearer token read
// from its file on every request (projected tokens are refreshed by the kubelet) and/or a client
// certificate. Errors carry the gRPC status only: never the token.
import { readFileSync } from "node:fs";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Client, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { istioCa } from "../api/index.ts";
import type { CsrSigner } from "./certs.ts";

const CREATE_CERTIFICATE = "/istio.v1.auth.IstioCertificateService/CreateCertificate";
/** Where pilot-agent reads the istio-ca-root-cert ConfigMap (CA_ROOT_CA unset). */
export const DEFAULT_CA_ROOT_CERT_PATH = "./var/run/secrets/istio/root-cert.pem";
/** The projected token pilot-agent sends (audience istio-ca). */
export const DEFAULT_TOKEN_PATH = "./var/run/secrets/tokens/istio-token";

export interface CaClientOptions {
  /** CA_ADDR `host:port` (istiod's 15012 by default). */
  address: string;
  /** PEM file of the roots the CA's serving certificate chains to. */
  rootCertPath: string;
  /** The name the CA's certificate must carry, when it is not the address's host (ISTIOD_SAN). */
  serverName?: string;
  /** A bearer token file; a missing file sends no token (a client certificate may authenticate). */
  tokenPath?: string;
  /** The client certificate to present, when there is one (re-read on every request). */
  clientCertificate?: () => { keyPem: string; certChainPem: string } | undefined;
  /** Sent as the ClusterID header, as pilot-agent does. */
  clusterId?: string;
  /** How long one request may take. */
  timeoutMs?: number;
}

function readToken(path: string | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, "utf8").trim() || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** A CsrSigner calling the CA; each call dials afresh (once per renewal), picking up new roots, tokens and certificates. */
export function caClientSigner(options: CaClientOptions): CsrSigner {
  return async (csrPem, ttlSeconds) => {
    const roots = readFileSync(options.rootCertPath);
    const clientCert = options.clientCertificate?.();
    const creds = clientCert
      ? credentials.createSsl(roots, Buffer.from(clientCert.keyPem), Buffer.from(clientCert.certChainPem))
      : credentials.createSsl(roots);
    const channelOptions = options.serverName ? { "grpc.ssl_target_name_override": options.serverName } : {};
    const client = new Client(options.address, creds, channelOptions);
    const metadata = new Metadata();
    const token = readToken(options.tokenPath);
    if (token) metadata.set("authorization", `Bearer ${token}`);
    if (options.clusterId) metadata.set("ClusterID", options.clusterId);
    const request = create(istioCa.IstioCertificateRequestSchema, {
      csr: csrPem,
      validityDuration: BigInt(ttlSeconds),
    });
    try {
      return await new Promise<string[]>((resolve, reject) => {
        client.makeUnaryRequest(
          CREATE_CERTIFICATE,
          (req: istioCa.IstioCertificateRequest) => Buffer.from(toBinary(istioCa.IstioCertificateRequestSchema, req)),
          (bytes: Buffer) => fromBinary(istioCa.IstioCertificateResponseSchema, bytes),
          request,
          metadata,
          { deadline: Date.now() + (options.timeoutMs ?? 30_000) },
          (err: ServiceError | null, response?: istioCa.IstioCertificateResponse) => {
            if (err) reject(new Error(`CreateCertificate: ${status[err.code]}: ${err.details}`));
            else if (!response || response.certChain.length === 0) reject(new Error("CreateCertificate: empty answer"));
            else resolve(response.certChain);
          },
        );
      });
    } finally {
      client.close();
    }
  };
}
