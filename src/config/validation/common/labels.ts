// Label keys and values (Istio's labels.Instance.Validate): Kubernetes-style qualified names.
import type { Findings } from "../findings.ts";
import { goQuote } from "./format.ts";

const DNS_LABEL = "[a-zA-Z0-9](?:[-a-zA-Z0-9]*[a-zA-Z0-9])?";
const QUALIFIED_NAME = "(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY = new RegExp(`^(${DNS_LABEL}(?:\\.${DNS_LABEL})*/)?(${QUALIFIED_NAME})$`);
const LABEL_VALUE = new RegExp(`^(${QUALIFIED_NAME})?$`);
const MAX_PREFIX_LENGTH = 253;
const MAX_NAME_LENGTH = 63;

export function labelKeyError(key: string): string | undefined {
  const m = LABEL_KEY.exec(key);
  if (!m) return `invalid tag key: ${goQuote(key)}`;
  const prefix = m[1] ?? "";
  if (prefix.length - 1 > MAX_PREFIX_LENGTH) return `invalid tag key: ${goQuote(key)} (DNS prefix is too long)`;
  if (m[2].length > MAX_NAME_LENGTH) return `invalid tag key: ${goQuote(key)} (name is too long)`;
  return undefined;
}

export function labelValueError(value: string): string | undefined {
  return LABEL_VALUE.test(value) ? undefined : `invalid tag value: ${goQuote(value)}`;
}

/** Every error of a label map, one per bad key or value (Istio returns them as one multierror). */
export function labelErrors(labels: Record<string, string>): string[] {
  const errors: string[] = [];
  for (const [key, value] of Object.entries(labels)) {
    for (const message of [labelKeyError(key), labelValueError(value)]) {
      if (message) errors.push(message);
    }
  }
  return errors;
}

/** Reports each label error on `out` (positioned at the labels field). True when all are valid. */
export function validateLabels(labels: Record<string, string>, out: Findings): boolean {
  const errors = labelErrors(labels);
  for (const message of errors) out.error(message);
  return errors.length === 0;
}
