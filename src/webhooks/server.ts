// The webhook HTTPS server (Istio's httpsMux on --httpsAddr :15017): /validate (config validation),
// /inject (sidecar injection) and /ready. Both webhooks read the body as Istio's HTTPConfigReader
// does (at most 6 MiB, else 400; empty, 400 "no body found"), then insist on application/json (415).
import type { Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { ConfigObject, MeshConfig, ProxyConfigSpec, ValidationContext } from "../config/index.ts";
import {
  type AdmissionRequest,
  type AdmissionResponse,
  type AdmissionReview,
  decodeAdmissionReview,
  encodeAdmissionResponse,
} from "./admission.ts";
import { InjectionError, injectPod, renderedTemplates } from "./inject/inject.ts";
import type { Pod } from "./inject/pod.ts";
import { injectRequired, webhookSelects } from "./inject/policy.ts";
import { detectNativeSidecar, type InjectionSettings, type NativeSidecarMode } from "./inject/settings.ts";
import { WebhookMetrics } from "./metrics.ts";
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
  /** The current injection settings (they may be reloaded). */
  injection: () => Readonly<InjectionSettings>;
  /** ENABLE_NATIVE_SIDECARS (default "auto", which needs `nodes`; `injection.nativeSidecars` is ignored). */
  nativeSidecarMode?: NativeSidecarMode;
  /** The cluster's Nodes, for the "auto" native sidecar mode. */
  nodes?: () => readonly ConfigObject[];
  /** The mesh's ProxyConfig resources (from the config store), which shape each injected proxy. */
  proxyConfigs?: () => readonly ConfigObject<ProxyConfigSpec>[];
  validation?: ValidationContext;
  /**
   * A namespace's labels, when the server should apply the namespace and object selectors of Istio's
   * MutatingWebhookConfiguration itself (the API server does when the webhook is registered).
   */
  namespaceLabels?: (namespace: string) => Record<string, string> | undefined;
  /** Where Istio's sidecar_injection_* and galley_validation_* metrics go (none when absent). */
  metrics?: Registry;
  /** /ready answers 200 only when this is true (default: always). */
  ready?: () => boolean;
  log: Logger;
}

export interface WebhookServer {
  port: number;
  /** Serves a new certificate to new connections (the CA rotated it). */
  updateCertificate(cert: string | Buffer, key: string | Buffer): void;
  /** The injection templates rendered for a sample pod under the current settings (/debug/inject). */
  injectTemplates(): Record<string, string>;
  stop(): Promise<void>;
}

const TEXT = "text/plain; charset=utf-8";

/** What differs between the two webhooks around the shared request handling. */
interface Endpoint {
  /** Put before a body decode error in the answer. */
  decodeErrorPrefix: string;
  admit(review: AdmissionReview, path: string): AdmissionResponse;
  /** The request was refused before an AdmissionReview could be answered. */
  httpError(status: number): void;
  /** An AdmissionReview answer (possibly a decode error) was sent. */
  answered(decodeError: boolean): void;
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const metrics = options.metrics ? new WebhookMetrics(options.metrics) : undefined;
  const app = fastify({
    logger: false,
    https: { cert: options.cert, key: options.key, minVersion: "TLSv1.2" },
    bodyLimit: MAX_REQUEST_BODY_BYTES,
  });
  const isInjection = (url: string) => url === "/inject" || url.startsWith("/inject/") || url.startsWith("/inject?");
  // Every body is read raw; the handlers decide about content types as Istio's do.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => done(null, body));
  app.addHook("onRequest", async (req) => {
    if (isInjection(req.url)) metrics?.injectionRequests.inc();
  });
  app.setErrorHandler((err, req, reply) => {
    const code = (err as { code?: string }).code;
    if (code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      if (isInjection(req.url)) metrics?.injectionFailure.inc();
      return goHttpError(reply, 400, `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}`);
    }
    const message = err instanceof Error ? err.message : String(err);
    options.log.error({ url: req.url, err: message }, "webhooks: request failed");
    return goHttpError(reply, 500, message);
  });
  app.setNotFoundHandler((_req, reply) => goHttpError(reply, 404, "404 page not found"));

  const validation: Endpoint = {
    decodeErrorPrefix: "could not decode body: ",
    admit: (review) => {
      const { response, failure } = validateAdmission(review.request, options.validation);
      const resource = review.request.resource ?? { group: "", version: "", resource: "" };
      const labels = { group: resource.group, version: resource.version, resource: resource.resource };
      // As Istio, a dry run's failure is not counted; its pass is.
      if (failure === undefined) metrics?.validationPassed.inc(labels);
      else if (review.request.dryRun !== true) metrics?.validationFailed.inc({ ...labels, reason: failure });
      return response;
    },
    httpError: (status) => metrics?.validationHttpError.inc({ status: String(status) }),
    answered: () => {},
  };
  const injection: Endpoint = {
    decodeErrorPrefix: "",
    admit: (review, path) => admitPod(review.request, path, options, metrics),
    httpError: () => metrics?.injectionFailure.inc(),
    answered: (decodeError) => {
      if (decodeError) metrics?.injectionFailure.inc();
      metrics?.injectionSuccess.inc();
    },
  };
  const route = (endpoint: Endpoint) => (req: FastifyRequest, reply: FastifyReply) => serve(req, reply, endpoint);
  for (const path of ["/validate", "/validate/*"]) app.all(path, route(validation));
  for (const path of ["/inject", "/inject/*"]) {
    app.all(path, async (req, reply) => {
      const end = metrics?.injectionTime.startTimer();
      try {
        return await serve(req, reply, injection);
      } finally {
        end?.();
      }
    });
  }
  app.get("/ready", async (_req, reply) => reply.code((options.ready ?? (() => true))() ? 200 : 503).send());

  await app.listen({ host: options.host ?? "::", port: options.port ?? 15017 });
  return {
    port: (app.server.address() as AddressInfo).port,
    updateCertificate(cert, key) {
      (app.server as HttpsServer).setSecureContext({ cert, key, minVersion: "TLSv1.2" });
    },
    injectTemplates() {
      const nativeSidecars = detectNativeSidecar(options.nativeSidecarMode ?? "auto", options.nodes?.(), undefined);
      return renderedTemplates(options.mesh(), { ...options.injection(), nativeSidecars });
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

async function serve(req: FastifyRequest, reply: FastifyReply, endpoint: Endpoint): Promise<FastifyReply> {
  const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  if (body.length === 0) {
    endpoint.httpError(400);
    return goHttpError(reply, 400, "no body found");
  }
  if (req.headers["content-type"] !== "application/json") {
    endpoint.httpError(415);
    return goHttpError(reply, 415, "invalid Content-Type, want `application/json`");
  }
  const review = decodeAdmissionReview(body);
  const path = new URL(req.url, "https://webhook").pathname;
  const answer =
    "error" in review
      ? encodeAdmissionResponse(undefined, { allowed: false, message: `${endpoint.decodeErrorPrefix}${review.error}` })
      : encodeAdmissionResponse(review, endpoint.admit(review, path));
  endpoint.answered("error" in review);
  return reply.code(200).type("application/json").send(JSON.stringify(answer));
}

/** Istio's Webhook.inject: the pod's JSON Patch, or allowed without one when it is not to be injected. */
function admitPod(
  request: AdmissionRequest,
  path: string,
  options: WebhookServerOptions,
  metrics: WebhookMetrics | undefined,
): AdmissionResponse {
  const object = request.object;
  if (object === undefined || object === null) return { allowed: false, message: "unexpected end of JSON input" };
  if (typeof object !== "object" || Array.isArray(object)) {
    const jsonType = Array.isArray(object) ? "array" : typeof object;
    return { allowed: false, message: `json: cannot unmarshal ${jsonType} into Go value of type v1.Pod` };
  }
  const pod = structuredClone(object) as Pod;
  pod.metadata ??= {};
  pod.spec ??= { containers: [] };
  pod.spec.containers ??= [];
  delete pod.metadata.managedFields;
  if (!pod.metadata.namespace) pod.metadata.namespace = request.namespace ?? "";
  // One pod is injected under one version of the settings.
  const settings = options.injection();
  const namespaceLabels = options.namespaceLabels?.(pod.metadata.namespace ?? "");
  if (namespaceLabels && !webhookSelects(namespaceLabels, pod.metadata.labels ?? {}, settings.revision)) {
    return { allowed: true };
  }
  if (!injectRequired(settings, pod.spec, pod.metadata)) {
    metrics?.injectionSkip.inc();
    return { allowed: true };
  }
  try {
    const nativeSidecars = detectNativeSidecar(
      options.nativeSidecarMode ?? "auto",
      options.nodes?.(),
      pod.spec.nodeName,
    );
    const { patch } = injectPod({
      pod,
      mesh: options.mesh(),
      settings: { ...settings, nativeSidecars },
      proxyConfigs: options.proxyConfigs?.(),
      proxyEnvs: parseInjectEnvs(path),
    });
    return { allowed: true, patch };
  } catch (err) {
    if (err instanceof InjectionError) {
      metrics?.injectionFailure.inc();
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
