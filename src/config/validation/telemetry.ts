// Telemetry (telemetry.istio.io): Istio's ValidateTelemetry for metrics, tracing and access logging.
import { parse as parseCel } from "@bufbuild/cel";
import { decodeDurationField } from "./common/durations.ts";
import { readEnum } from "./common/enums.ts";
import {
  asObject,
  field,
  has,
  type JsonObject,
  listField,
  mapEntries,
  objectField,
  stringField,
} from "./common/json.ts";
import { forEachMessage } from "./common/report.ts";
import { validatePolicyTargets } from "./common/selectors.ts";
import type { Findings, SemanticValidator } from "./findings.ts";
import { ISTIO_METRIC, TAG_OPERATION, TELEMETRY_WORKLOAD_MODE } from "./security-decode.ts";

export const validateTelemetry: SemanticValidator = (obj, _ctx, out) => {
  const spec = asObject(obj.spec) ?? {};
  validatePolicyTargets(spec, out);
  forEachEntry(spec, "metrics", out, validateMetrics);
  if ((listField(spec, "tracing") ?? []).length > 1)
    out.at("tracing").warn("multiple tracing is not currently supported");
  forEachEntry(spec, "tracing", out, validateTracing);
  forEachEntry(spec, "accessLogging", out, validateAccessLogging);
};

// Null list entries are skipped, as Istio does for metrics, tracing and access logging.
function forEachEntry(
  container: JsonObject,
  name: string,
  out: Findings,
  check: (entry: JsonObject, out: Findings) => void,
): void {
  (listField(container, name) ?? []).forEach((entry, i) => {
    const obj = asObject(entry);
    if (obj) check(obj, out.at(name, i));
  });
}

// Istio reports only the first provider reference without a name.
function validateProviders(entry: JsonObject, out: Findings): void {
  const providers = listField(entry, "providers") ?? [];
  const unnamed = providers.findIndex((provider) => stringField(asObject(provider) ?? {}, "name") === "");
  if (unnamed >= 0) out.at("providers", unnamed).error("providers.name may not be empty");
}

function validateMetrics(metrics: JsonObject, out: Findings): void {
  validateProviders(metrics, out);
  decodeDurationField(metrics, "reportingInterval", out);
  forEachMessage(
    listField(metrics, "overrides"),
    out.at("overrides"),
    "tagOverrides may not be null",
    (override, at) => {
      for (const [name, tag] of mapEntries(override, "tagOverrides")) {
        validateTagOverride(name, tag, at.at("tagOverrides").at(name));
      }
      const match = objectField(override, "match");
      if (match) {
        readEnum(field(match, "metric"), ISTIO_METRIC, at.at("match.metric"));
        readEnum(field(match, "mode"), TELEMETRY_WORKLOAD_MODE, at.at("match.mode"));
        if (field(match, "customMetric") === "") at.at("match.customMetric").error("customMetric may not be empty");
      }
    },
  );
}

function validateTagOverride(name: string, value: unknown, out: Findings): void {
  if (name === "") out.warn("tagOverrides.name may not be empty");
  const tag = asObject(value);
  if (!tag) {
    out.error("tagOverrides may not be null");
    return;
  }
  // The operation defaults to UPSERT, so an override without one needs a value.
  const operation = readEnum(field(tag, "operation"), TAG_OPERATION, out.at("operation"));
  const tagValue = stringField(tag, "value");
  if (operation === "UPSERT" && tagValue === "") out.error("tagOverrides.value must be set when operation is UPSERT");
  if (operation === "REMOVE" && tagValue !== "") {
    out.error("tagOverrides.value may only be set when operation is UPSERT");
  }
}

function validateTracing(tracing: JsonObject, out: Findings): void {
  if ((listField(tracing, "providers") ?? []).length > 1)
    out.at("providers").warn("multiple providers is not currently supported");
  validateProviders(tracing, out);
  const percentage = field(tracing, "randomSamplingPercentage");
  if (typeof percentage === "number" && (percentage < 0 || percentage > 100)) {
    out.at("randomSamplingPercentage").error("randomSamplingPercentage must be in range [0.0, 100.0]");
  }
  readEnum(field(objectField(tracing, "match") ?? {}, "mode"), TELEMETRY_WORKLOAD_MODE, out.at("match.mode"));
  for (const [name, value] of mapEntries(tracing, "customTags")) {
    validateCustomTag(name, value, out.at("customTags").at(name));
  }
}

function validateCustomTag(name: string, value: unknown, out: Findings): void {
  if (name === "") out.error("tag name may not be empty");
  const tag = asObject(value);
  if (!tag) {
    out.error(`tag '${name}' may not have a nil value`);
    return;
  }
  // A tag sets one of literal, environment, header (or formatter, unchecked).
  if (has(tag, "literal")) {
    if (stringField(objectField(tag, "literal") ?? {}, "value") === "")
      out.at("literal.value").error("literal tag value may not be empty");
  } else if (has(tag, "environment")) {
    if (stringField(objectField(tag, "environment") ?? {}, "name") === "") {
      out.at("environment.name").error("environment tag name may not be empty");
    }
  } else if (has(tag, "header")) {
    if (stringField(objectField(tag, "header") ?? {}, "name") === "")
      out.at("header.name").error("header tag name may not be empty");
  }
}

function validateAccessLogging(logging: JsonObject, out: Findings): void {
  const filter = objectField(logging, "filter");
  if (filter) {
    try {
      parseCel(stringField(filter, "expression"));
    } catch (err) {
      out.at("filter.expression").error(`must be a valid CEL expression, ${(err as Error).message}`);
    }
  }
  validateProviders(logging, out);
  readEnum(field(objectField(logging, "match") ?? {}, "mode"), TELEMETRY_WORKLOAD_MODE, out.at("match.mode"));
}
