// Istio's checks of the injection annotations (pkg/kube/inject/validate.go): a pod with a bad value
// is not injected, and the webhook answers with every problem found.

import { Findings } from "../../config/index.ts";
import { decodeYaml } from "../../config/mesh-decode.ts";
import { goMultiError, goQuote, isIpPrefix } from "../../config/validation/common/index.ts";
import { parseGoBool } from "../../util/index.ts";
import { isQuantity, QUANTITY_FORMAT_ERROR } from "./quantity.ts";

type Check = (value: string) => string | undefined;

/** strconv.ParseUint(s, 10, bits)'s error, or undefined. */
function parseUintError(s: string, bits: number): string | undefined {
  if (!/^[0-9]+$/.test(s)) return `strconv.ParseUint: parsing ${goQuote(s)}: invalid syntax`;
  return BigInt(s) < 2n ** BigInt(bits) ? undefined : `strconv.ParseUint: parsing ${goQuote(s)}: value out of range`;
}

function portError(port: string): string | undefined {
  const err = parseUintError(port.trim(), 16);
  return err && `failed parsing port '${port}': ${err}`;
}

function portListError(name: string): Check {
  return (ports) => {
    const trimmed = ports.trim();
    if (trimmed === "") return undefined;
    for (const port of trimmed.split(",")) {
      const err = portError(port);
      if (err) return `${name} invalid: failed parsing port '${port}': ${err}`;
    }
    return undefined;
  };
}

function cidrListError(cidrs: string): string | undefined {
  if (cidrs === "") return undefined;
  for (const cidr of cidrs.split(",")) {
    if (isIpPrefix(cidr)) continue;
    const reason = cidr.includes("/") ? "invalid prefix" : "no '/'";
    return `failed parsing cidr '${cidr}': netip.ParsePrefix(${goQuote(cidr)}): ${reason}`;
  }
  return undefined;
}

function quantityError(value: string): string | undefined {
  // Go's unicode.IsControl: C0 controls, DEL and C1 controls.
  const isControl = (c: number) => c < 0x20 || (c >= 0x7f && c <= 0x9f);
  if ([...value].some((ch) => isControl(ch.codePointAt(0) ?? 0))) return "value contains control characters";
  return isQuantity(value) ? undefined : QUANTITY_FORMAT_ERROR;
}

const CHECKS: Readonly<Record<string, Check>> = {
  "sidecar.istio.io/interceptionMode": (mode) =>
    ["REDIRECT", "TPROXY", "NONE"].includes(mode)
      ? undefined
      : `interceptionMode invalid, use REDIRECT,TPROXY,NONE: ${mode}`,
  "status.sidecar.istio.io/port": (port) => {
    const err = portError(port);
    return err && `excludeInboundPorts invalid: ${err}`;
  },
  "readiness.status.sidecar.istio.io/initialDelaySeconds": (v) => parseUintError(v, 32),
  "readiness.status.sidecar.istio.io/periodSeconds": (v) => parseUintError(v, 32),
  "readiness.status.sidecar.istio.io/failureThreshold": (v) => parseUintError(v, 32),
  "traffic.sidecar.istio.io/includeOutboundIPRanges": (v) => {
    const err = v === "*" ? undefined : cidrListError(v);
    return err && `includeIPRanges invalid: ${err}`;
  },
  "traffic.sidecar.istio.io/excludeOutboundIPRanges": (v) => {
    const err = cidrListError(v);
    return err && `excludeIPRanges invalid: ${err}`;
  },
  "traffic.sidecar.istio.io/includeInboundPorts": (v) =>
    v === "*" ? undefined : portListError("includeInboundPorts")(v),
  "traffic.sidecar.istio.io/excludeInboundPorts": portListError("excludeInboundPorts"),
  "traffic.sidecar.istio.io/excludeOutboundPorts": portListError("excludeOutboundPorts"),
  "prometheus.istio.io/merge-metrics": (v) =>
    parseGoBool(v) === undefined ? `strconv.ParseBool: parsing ${goQuote(v)}: invalid syntax` : undefined,
  "sidecar.istio.io/proxyCPU": quantityError,
  "sidecar.istio.io/proxyMemory": quantityError,
  "sidecar.istio.io/proxyCPULimit": quantityError,
  "sidecar.istio.io/proxyMemoryLimit": quantityError,
  "proxy.istio.io/config": (v) => {
    const out = new Findings("");
    decodeYaml(v, "ProxyConfig", out);
    return out.ok
      ? undefined
      : `failed to convert to apply proxy config: ${out.errors.map((e) => e.message).join("; ")}`;
  },
};

/** Istio's AnnotationValidation[name](value): why the value is invalid, or undefined (also for unchecked names). */
export function annotationValueError(name: string, value: string): string | undefined {
  return CHECKS[name]?.(value);
}

/** Istio's validateAnnotations: undefined when every injection annotation is valid. */
export function annotationsError(annotations: Record<string, string>): string | undefined {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(annotations)) {
    const err = annotationValueError(name, value);
    if (err) problems.push(`invalid value '${value}' for annotation '${name}': ${err}`);
  }
  return problems.length > 0 ? goMultiError(problems) : undefined;
}
