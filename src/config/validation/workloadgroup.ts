// WorkloadGroup webhook validation (validation-rules.md §10). The template is not validated: fields
// such as the address are filled in per workload.
import type { ConfigObject } from "../model.ts";
import {
  asObject,
  asStringMap,
  field,
  goMultiError,
  type JsonObject,
  labelErrors,
  listField,
  numberField,
  objectField,
  probeHeaderNameError,
  report,
  stringField,
  validatePort,
} from "./common/index.ts";
import type { Findings, SemanticValidator } from "./findings.ts";

export const validateWorkloadGroup: SemanticValidator = (obj: ConfigObject, _ctx, out: Findings) => {
  const spec = asObject(obj.spec) ?? {};
  if (!objectField(spec, "template")) {
    out.at("template").error("template is required");
    return;
  }
  const metadata = objectField(spec, "metadata");
  if (metadata) {
    const errors = labelErrors(asStringMap(field(metadata, "labels")) ?? {});
    if (errors.length > 0) {
      out.at("metadata.labels").error(`invalid labels: ${goMultiError(errors)}`);
      return;
    }
  }
  const probe = objectField(spec, "probe");
  if (probe) validateReadinessProbe(probe, out.at("probe"));
};

const PROBE_COUNTERS = [
  "periodSeconds",
  "initialDelaySeconds",
  "timeoutSeconds",
  "successThreshold",
  "failureThreshold",
];

// The oneof health-check methods, in the order Istio's decoder would meet them, and the Go type
// name Istio prints for the ones it does not handle.
const PROBE_METHODS = ["httpGet", "tcpSocket", "exec", "grpc"] as const;

function validateReadinessProbe(probe: JsonObject, out: Findings): void {
  for (const field of PROBE_COUNTERS) {
    if (numberField(probe, field) < 0) out.at(field).error(`${field} must be non-negative`);
  }
  const method = PROBE_METHODS.find((m) => m in probe && probe[m] !== undefined);
  if (method === undefined) {
    out.error("unknown health check method <nil>");
    return;
  }
  const at = out.at(method);
  const body = asObject(probe[method]);
  if (method === "grpc") {
    at.error("unknown health check method *v1alpha3.ReadinessProbe_Grpc");
    return;
  }
  if (!body) {
    at.error(`${method} may not be nil`);
    return;
  }
  if (method === "httpGet") {
    validatePort(numberField(body, "port"), at.at("port"));
    const scheme = stringField(body, "scheme");
    if (scheme !== "" && scheme !== "HTTPS" && scheme !== "HTTP") {
      at.at("scheme").error('httpGet.scheme must be one of "HTTPS", "HTTP"');
    }
    (listField(body, "httpHeaders") ?? []).forEach((header, i) => {
      const h = asObject(header);
      if (!h) at.at("httpHeaders", i).error("invalid nil header");
      else report(at.at("httpHeaders", i).at("name"), probeHeaderNameError(stringField(h, "name")));
    });
  } else if (method === "tcpSocket") {
    validatePort(numberField(body, "port"), at.at("port"));
  } else if (!listField(body, "command")) {
    at.at("command").error("exec.command is required");
  }
}
