// AdmissionReview (admission.k8s.io/v1 and v1beta1) as Istio's webhooks read and answer it
// (pkg/kube/adapter.go): the answer has the request's apiVersion and echoes its uid; a body that is
// not an AdmissionReview is answered, as Go's serializer leaves it, without kind or apiVersion.
import { asObject, type JsonObject } from "../config/validation/common/index.ts";

const ADMISSION_VERSIONS = ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"] as const;

export interface AdmissionRequest {
  uid: string;
  kind?: { group: string; version: string; kind: string };
  resource?: { group: string; version: string; resource: string };
  namespace?: string;
  name?: string;
  operation?: string;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  [key: string]: unknown;
}

export interface AdmissionResponse {
  allowed: boolean;
  /** Why not (metav1.Status.message). */
  message?: string;
  /** RFC 6902 operations; sent base64-encoded with patchType JSONPatch. */
  patch?: unknown[];
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: string;
  request: AdmissionRequest;
}

/** The review in `body`, or the decode error Istio answers with. */
export function decodeAdmissionReview(body: Buffer): AdmissionReview | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch (err) {
    return { error: `couldn't get version/kind; json parse error: ${(err as Error).message}` };
  }
  const review = asObject(parsed);
  const apiVersion = review?.apiVersion;
  const kind = review?.kind;
  if (typeof apiVersion !== "string" || typeof kind !== "string" || apiVersion === "" || kind === "") {
    return { error: `Object 'Kind' is missing in '${body.toString("utf8")}'` };
  }
  if (kind !== "AdmissionReview" || !(ADMISSION_VERSIONS as readonly string[]).includes(apiVersion)) {
    return { error: `no kind "${kind}" is registered for version "${apiVersion}" in scheme` };
  }
  const request = asObject(review?.request);
  return { apiVersion, request: (request ?? { uid: "" }) as AdmissionRequest };
}

/** The AdmissionReview answering `review` (undefined: the body could not be decoded). */
export function encodeAdmissionResponse(review: AdmissionReview | undefined, response: AdmissionResponse): JsonObject {
  const out: JsonObject = {};
  if (review) {
    out.kind = "AdmissionReview";
    out.apiVersion = review.apiVersion;
  }
  const body: JsonObject = { uid: review?.request.uid ?? "", allowed: response.allowed };
  if (response.message !== undefined) body.status = { metadata: {}, message: response.message };
  if (response.patch) {
    body.patch = Buffer.from(JSON.stringify(response.patch)).toString("base64");
    body.patchType = "JSONPatch";
  }
  if (response.warnings && response.warnings.length > 0) body.warnings = response.warnings;
  out.response = body;
  return out;
}
