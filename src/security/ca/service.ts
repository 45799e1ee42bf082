// istio.v1.auth.IstioCertificateService/CreateCertificate (Istio's security/pkg/server/ca/server.go):
// authenticate the caller with the xDS server's chain, sign the CSR with the caller's identities,
// answer leaf → chain → roots. Failures say no more than Istio's messages; keys, CSRs and tokens
// are never logged.
import { create } from "@bufbuild/protobuf";
import { type ServerUnaryCall, type sendUnaryData, status, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { type Logger, pino } from "pino";
import type { CallSurface, ExtraService } from "../../api/index.ts";
import { istioCa } from "../../api/index.ts";
import type { Caller } from "../authn/authenticator.ts";
import { CaError, type CaErrorType, type CertificateAuthority } from "./ca.ts";
import type { CaMetrics } from "./metrics.ts";

type Request = istioCa.IstioCertificateRequest;
type Response = istioCa.IstioCertificateResponse;
/** A gRPC error status to answer with. */
type Refusal = { code: status; details: string };

export interface CertificateServiceOptions {
  ca: CertificateAuthority;
  /** The authenticator chain (XdsServer.authenticateCall). */
  authenticate: (call: CallSurface) => Promise<Caller | Error>;
  log?: Logger;
  metrics?: CaMetrics;
}

/** Istio's HTTPErrorCode: bad requests are InvalidArgument, the CA's own troubles Internal. */
const CODES: Record<CaErrorType, status> = {
  CA_NOT_READY: status.INTERNAL,
  CERT_GEN_ERROR: status.INTERNAL,
  CSR_ERROR: status.INVALID_ARGUMENT,
  TTL_ERROR: status.INVALID_ARGUMENT,
};

/** The service to add to the xDS server's TLS port: `xds.addService(certificateService({...}))`. */
export function certificateService(options: CertificateServiceOptions): ExtraService {
  const log = options.log ?? pino({ level: "silent" });
  const metrics = options.metrics;
  const createCertificate = async (call: ServerUnaryCall<Request, Response>): Promise<Response | Refusal> => {
    metrics?.csrs.inc();
    const caller = await options.authenticate(call);
    if (caller instanceof Error) {
      metrics?.authenticationFailures.inc();
      log.warn({ peer: call.getPeer(), err: caller.message }, "CA: request authentication failed");
      return { code: status.UNAUTHENTICATED, details: "request authenticate failure" };
    }
    // Signing for another identity needs a node authorizer (CA_TRUSTED_NODE_ACCOUNTS), which
    // Sluice does not have: refused as Istio refuses it without one.
    if (typeof call.request.metadata?.ImpersonatedIdentity === "string" && call.request.metadata.ImpersonatedIdentity) {
      metrics?.authenticationFailures.inc();
      log.warn({ identities: caller.identities }, "CA: impersonation not allowed (no CA_TRUSTED_NODE_ACCOUNTS)");
      return { code: status.UNAUTHENTICATED, details: "request impersonation authentication failure" };
    }
    const ttlSeconds = Number(call.request.validityDuration);
    try {
      const certChain = await options.ca.signForResponse({
        csrPem: call.request.csr,
        subjectIds: caller.identities,
        ttlSeconds,
      });
      metrics?.successes.inc();
      log.debug({ identities: caller.identities, ttlSeconds }, "CA: CSR signed");
      return create(istioCa.IstioCertificateResponseSchema, { certChain });
    } catch (err) {
      if (!(err instanceof CaError)) throw err;
      metrics?.signError(err.type);
      log.error({ identities: caller.identities, type: err.type, err: err.message }, "CA: CSR signing error");
      return { code: CODES[err.type], details: `CSR signing error (${err.message})` };
    }
  };
  const implementation: UntypedServiceImplementation = {
    createCertificate: (call: ServerUnaryCall<Request, Response>, callback: sendUnaryData<Response>) => {
      createCertificate(call).then(
        (result) => ("code" in result ? callback(result) : callback(null, result)),
        (err: unknown) => {
          log.error({ err: err instanceof Error ? err.message : String(err) }, "CA: CreateCertificate failed");
          callback({ code: status.INTERNAL, details: "internal error" });
        },
      );
    },
  };
  return { service: istioCa.IstioCertificateService, implementation };
}
