// istio.v1.auth.IstioCertificateService/CreateCertificate (Istio's security/pkg/server/ca/server.go):
// authenticate the caller with the xDS server's chain, sign the CSR with the caller's identities (or,
// for a node proxy the node authorizer allows, the one identity it asks for), answer leaf → chain →
// roots. Failures say no more than Istio's messages; keys, CSRs and tokens are never logged.
import { create } from "@bufbuild/protobuf";
import { type ServerUnaryCall, type sendUnaryData, status, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { type Logger, pino } from "pino";
import type { CallSurface, ExtraService } from "../../api/index.ts";
import { istioCa } from "../../api/index.ts";
import type { Caller } from "../authn/authenticator.ts";
import { CaError, type CaErrorType, type CertificateAuthority } from "./ca.ts";
import type { CaMetrics } from "./metrics.ts";
import type { NodeAuthorizer } from "./node-authorizer.ts";

type Request = istioCa.IstioCertificateRequest;
type Response = istioCa.IstioCertificateResponse;
/** A gRPC error status to answer with. */
type Refusal = { code: status; details: string };

export interface CertificateServiceOptions {
  ca: CertificateAuthority;
  /** The authenticator chain (XdsServer.authenticateCall). */
  authenticate: (call: CallSurface) => Promise<Caller | Error>;
  /** CA_TRUSTED_NODE_ACCOUNTS' authorizer: without it, asking for another identity is refused. */
  nodeAuthorizer?: NodeAuthorizer;
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
    // By default the certificate is for the caller; a node proxy may ask for a pod on its node instead.
    let subjectIds = caller.identities;
    const impersonated = call.request.metadata?.ImpersonatedIdentity;
    if (typeof impersonated === "string" && impersonated !== "") {
      const refusal = options.nodeAuthorizer
        ? options.nodeAuthorizer.refusal(caller.kubernetesInfo, impersonated)
        : "impersonation not allowed, as node authorizer (CA_TRUSTED_NODE_ACCOUNTS) is not configured";
      if (refusal !== undefined) {
        metrics?.authenticationFailures.inc();
        log.warn({ identity: impersonated, reason: refusal }, "CA: impersonation failed");
        return { code: status.UNAUTHENTICATED, details: "request impersonation authentication failure" };
      }
      log.debug({ caller: caller.identities, identity: impersonated }, "CA: node caller impersonates");
      subjectIds = [impersonated];
    }
    const ttlSeconds = Number(call.request.validityDuration);
    try {
      const certChain = await options.ca.signForResponse({
        csrPem: call.request.csr,
        subjectIds,
        ttlSeconds,
      });
      metrics?.successes.inc();
      log.debug({ identities: subjectIds, ttlSeconds }, "CA: CSR signed");
      return create(istioCa.IstioCertificateResponseSchema, { certChain });
    } catch (err) {
      if (!(err instanceof CaError)) throw err;
      metrics?.signError(err.type);
      log.error({ identities: subjectIds, type: err.type, err: err.message }, "CA: CSR signing error");
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
