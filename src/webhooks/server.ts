// The webhook HTTPS server (Istio's httpsMux on --httpsAddr :15017): /validate (config validation),
// /inject (sidecar injection) and /ready. Both webhooks read the body as Istio's HTTPConfigReader
// does (at most 6 MiB, else 400; empty, 400 "no body found"), then insist on application/json (415).
import type { Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { ConfigObject, MeshConfig, ValidationContext } from "../config/index.ts";
import {
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionReview,
  decodeAdmissionReview,
  encodeAdmissionResponse,
} from "./admission.ts";
import { InjectionError, injectPod } from "./inject/inject.ts";
import type { Pod } from "./inject/pod.ts";
import { injectRequired, webhookSelects } from "./inject/policy.ts";
import type { InjectionSettings } from "./inject/settings.ts";
import { validateAdmission } from "./validate.ts";

/** Istio's MaxRequestBodyBytes: Kubernetes objects are at most 3 MiB in etcd, twice that on the wire. */
export const MAX_REQUEST_BODY_BYTES = 6 * 1024 * 1024;

export interface WebhookServerOptions {
  /** PEM certificate chain and key of the server (istiod's DNS certificate from the CA). */
  cert: string | Buffer;
  key: string | Buffer;
  /** Listen address; default every interface on 15017. */
  host?: string;
  port?: number;
  /** The current mesh config (it may be reloaded). */
  mesh: () => MeshConfig;
  injection: InjectionSettings;
  /** The mesh's ProxyConfig resources (from the config store), which shape each injected proxy. */
  proxyConfigs?: () => readonly ConfigObject[];
  validation?: ValidationContext;
  /**
   * A namespace's labels, when the server should apply the namespace and object selectors of Istio's
   * MutatingWebhookConfiguration itself (the API server does when the webhook is registered).
   */
  namespaceLabels?: (namespace: string) => Record<string, string> | undefined;
  /** /ready answers 200 only when this is true (default: always). */
  ready?: () => boolean;
  log: Logger;
}

export interface WebhookServer {
  port: number;
  /** Serves a new certificate to new connections (the CA rotated it). */
  updateCertificate(cert: string | Buffer, key: string | Buffer): void;
  stop(): Promise<void>;
}

const TEXT = "text/plain; charset=utf-8";

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const app = fastify({
    logger: false,
    https: { cert: options.cert, key: options.key, minVersion: "TLSv1.2" },
    bodyLimit: MAX_REQUEST_BODY_BYTES,
  });
  // Every body is read raw; the handlers decide about content types as Istio's do.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => done(null, body));
  app.setErrorHandler((err, req, reply) => {
    const code = (err as { code?: string }).code;
    if (code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      return goHttpError(reply, 400, `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}`);
    }
    const message = err instanceof Error ? err.message : String(err);
    options.log.error({ url: req.url, err: message }, "webhooks: request failed");
    return goHttpError(reply, 500, message);
  });
  app.setNotFoundHandler((_req, reply) => goHttpError(reply, 404, "404 page not found"));

  const validate = (req: FastifyRequest, reply: FastifyReply) =>
    serve(req, reply, "could not decode body: ", (review) => validateAdmission(review.request, options.validation));
  const inject = (req: FastifyRequest, reply: FastifyReply) =>
    serve(req, reply, "", (review) => admitPod(review.request, new URL(req.url, "https://webhook").pathname, options));
  for (const path of ["/validate", "/validate/*"]) app.all(path, validate);
  for (const path of ["/inject", "/inject/*"]) app.all(path, inject);
  app.get("/ready", async (_req, reply) => reply.code((options.ready ?? (() => true))() ? 200 : 503).send());

  await app.listen({ host: options.host ?? "::", port: options.port ?? 15017 });
  return {
    port: (app.server.address() as AddressInfo).port,
    updateCertificate(cert, key) {
      (app.server as HttpsServer).setSecureContext({ cert, key, minVersion: "TLSv1.2" });
    },
    async stop() {
      await app.close();
    },
  };
}

/** Go's http.Error: the message and a newline, as plain text. */
function goHttpError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type(TEXT).header("x-content-type-options", "nosniff").send(`${message}\n`);
}

async function serve(
  req: FastifyRequest,
  reply: FastifyReply,
  decodeErrorPrefix: string,
  admit: (review: AdmissionReview) => AdmissionResponse,
): Promise<FastifyReply> {
  const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  if (body.length === 0) return goHttpError(reply, 400, "no body found");
  if (req.headers["content-type"] !== "application/json") {
    return goHttpError(reply, 415, "invalid Content-Type, want `application/json`");
  }
  const review = decodeAdmissionReview(body);
  const answer =
    "error" in review
      ? encodeAdmissionResponse(undefined, { allowed: false, message: `${decodeErrorPrefix}${review.error}` })
      : encodeAdmissionResponse(review, admit(review));
  return reply.code(200).type("application/json").send(JSON.stringify(answer));
}

/** Istio's Webhook.inject: the pod's JSON Patch, or allowed without one when it is not to be injected. */
function admitPod(request: AdmissionRequest, path: string, options: WebhookServerOptions): AdmissionResponse {
  const object = request.object;
  if (typeof object !== "object" || object === null || Array.isArray(object)) {
    return { allowed: false, message: "json: cannot unmarshal into Go value of type v1.Pod" };
  }
  const pod = structuredClone(object) as Pod;
  pod.metadata ??= {};
  pod.spec ??= { containers: [] };
  pod.spec.containers ??= [];
  delete pod.metadata.managedFields;
  if (!pod.metadata.namespace) pod.metadata.namespace = request.namespace ?? "";
  const namespaceLabels = options.namespaceLabels?.(pod.metadata.namespace ?? "");
  if (namespaceLabels && !webhookSelects(namespaceLabels, pod.metadata.labels ?? {}, options.injection.revision)) {
    return { allowed: true };
  }
  if (!injectRequired(options.injection.policy, pod.spec, pod.metadata)) return { allowed: true };
  try {
    const { patch } = injectPod({
      pod,
      mesh: options.mesh(),
      settings: options.injection,
      proxyConfigs: options.proxyConfigs?.(),
      proxyEnvs: parseInjectEnvs(path),
    });
    return { allowed: true, patch };
  } catch (err) {
    if (err instanceof InjectionError) {
      options.log.error({ pod: `${pod.metadata.namespace}/${pod.metadata.name ?? ""}` }, err.message);
      return { allowed: false, message: err.message };
    }
    throw err;
  }
}

const URL_PARAMETER_ENV: Readonly<Record<string, string>> = {
  cluster: "ISTIO_META_CLUSTER_ID",
  net: "ISTIO_META_NETWORK",
};

/** Istio's parseInjectEnvs: `/inject/k1/v1/k2/v2` (or the older `/inject/:ENV:K=V:ENV:K2=V2`) → proxy env. */
export function parseInjectEnvs(path: string): Record<string, string> {
  const parts = path.replace(/\/$/, "").split("/");
  // ["", "inject", rest...]: anything after the third part belongs to the values.
  const rest = parts.length >= 3 ? parts.slice(2).join("/") : undefined;
  let pairs: string[] = [];
  if (rest !== undefined) {
    if (rest.startsWith(":ENV:")) {
      for (const entry of rest.split(":ENV:").slice(1)) {
        const eq = entry.indexOf("=");
        if (eq > 0) pairs.push(entry.slice(0, eq), entry.slice(eq + 1));
      }
    } else {
      pairs = rest.split("/").map((value, i) => (i % 2 === 1 ? value.replaceAll("--slash--", "/") : value));
    }
  }
  const envs: Record<string, string> = {};
  // A last key without a value is ignored.
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const env = URL_PARAMETER_ENV[pairs[i]] ?? pairs[i].toUpperCase();
    if (env !== "") envs[env] = pairs[i + 1];
  }
  return envs;
}
