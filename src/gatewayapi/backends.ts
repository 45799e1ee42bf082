// backendRefs → Istio destinations: Services, ServiceImports, Hostnames, XBackends and InferencePools,
// with ReferenceGrant checks across namespaces.
import {
  EXTENSION_FAILURE_MODE_LABEL,
  EXTENSION_PORT_LABEL,
  EXTENSION_SERVICE_LABEL,
  inferencePoolServiceName,
} from "./inference-service.ts";
import type { ClusterObjects, ConfigError, ConversionSettings, ServiceLookup } from "./model.ts";
import { lookupService } from "./model.ts";
import type { ReferenceGrants } from "./referencegrant.ts";

export interface BackendRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  port?: number;
  weight?: number;
}

/** Istio's Destination in protobuf-JSON form. */
export interface Destination {
  host?: string;
  subset?: string;
  port?: { number: number };
}

export interface BackendContext {
  settings: ConversionSettings;
  cluster: ClusterObjects;
  grants: ReferenceGrants;
  services: ServiceLookup;
}

export const REASON_INVALID_DESTINATION = "InvalidDestination";
export const REASON_REF_NOT_PERMITTED = "RefNotPermitted";
export const REASON_INVALID_KIND = "InvalidKind";
export const REASON_BACKEND_NOT_FOUND = "BackendNotFound";

/** Errors that drop one backend but keep the route (the spec's "invalid backend" cases). */
export function isInvalidBackend(error: ConfigError): boolean {
  return (
    error.reason === REASON_REF_NOT_PERMITTED ||
    error.reason === REASON_BACKEND_NOT_FOUND ||
    error.reason === REASON_INVALID_KIND
  );
}

/** What an InferencePool backend adds: where its endpoint picker runs. */
export interface InferencePoolTarget {
  endpointPicker: string;
  port: string;
  failureMode: string;
}

export interface BuiltDestination {
  /** Undefined on a hard error (the whole rule fails). */
  destination?: Destination;
  error?: ConfigError;
  inferencePool?: InferencePoolTarget;
}

function normalizedKind(ref: BackendRef): string {
  const group = ref.group ?? "";
  const kind = ref.kind ?? "Service";
  if (group === "" || group === "core") return kind === "Service" ? "Service" : `/${kind}`;
  return `${group}/${kind}`;
}

export function buildDestination(
  ctx: BackendContext,
  to: BackendRef,
  routeNamespace: string,
  fromKind: string,
  enforceGrant: boolean,
): BuiltDestination {
  const kind = normalizedKind(to);
  const grantKind = kind === "Service" ? "Service" : kind.slice(kind.indexOf("/") + 1);
  if (enforceGrant && to.namespace !== undefined && to.namespace !== routeNamespace) {
    if (!ctx.grants.allowed(fromKind, routeNamespace, grantKind, to.namespace, to.name)) {
      return {
        destination: {},
        error: {
          reason: REASON_REF_NOT_PERMITTED,
          message: `backendRef ${to.name}/${to.namespace} not accessible to a ${fromKind} in namespace "${routeNamespace}" (missing a ReferenceGrant?)`,
        },
      };
    }
  }
  const namespace = to.namespace ?? routeNamespace;
  const suffix = ctx.settings.domainSuffix;
  let hostname: string;
  let invalid: ConfigError | undefined;
  switch (kind) {
    case "gateway.networking.x-k8s.io/XBackend":
      if (!ctx.settings.alphaGatewayApi) {
        return {
          destination: {},
          error: {
            reason: REASON_INVALID_KIND,
            message:
              "The Alpha Gateway API is not enabled, XBackend is invalid. To enable, set PILOT_ENABLE_ALPHA_GATEWAY_API to true in istiod.",
          },
        };
      }
      return xBackendDestination(ctx, to, namespace);
    case "Service": {
      if (to.name.includes(".")) {
        return {
          error: {
            reason: REASON_INVALID_DESTINATION,
            message: "service name invalid; the name of the Service must be used, not the hostname.",
          },
        };
      }
      hostname = `${to.name}.${namespace}.svc.${suffix}`;
      if (!ctx.cluster.services.has(`${namespace}/${to.name}`)) invalid = notFound(hostname);
      break;
    }
    case "networking.istio.io/Hostname":
      if (to.namespace !== undefined) {
        return {
          error: { reason: REASON_INVALID_DESTINATION, message: "namespace may not be set with Hostname type" },
        };
      }
      hostname = to.name;
      if (!lookupService(ctx.services, hostname, namespace)) invalid = notFound(hostname);
      break;
    case "multicluster.x-k8s.io/ServiceImport":
      // Without MCS host support a ServiceImport is served by the Service of the same name.
      hostname = `${to.name}.${namespace}.svc.${suffix}`;
      if (!ctx.cluster.services.has(`${namespace}/${to.name}`)) invalid = notFound(hostname);
      break;
    case "inference.networking.k8s.io/InferencePool":
      return inferencePoolDestination(ctx, to, namespace);
    default:
      return {
        destination: {},
        error: {
          reason: REASON_INVALID_KIND,
          message: `referencing unsupported backendRef: group "${to.group ?? ""}" kind "${to.kind ?? ""}"`,
        },
      };
  }
  if (to.port === undefined) {
    return { error: { reason: REASON_INVALID_DESTINATION, message: "port is required in backendRef" } };
  }
  return { destination: { host: hostname, port: { number: to.port } }, error: invalid };
}

function notFound(what: string): ConfigError {
  return { reason: REASON_BACKEND_NOT_FOUND, message: `backend(${what}) not found` };
}

function xBackendDestination(ctx: BackendContext, to: BackendRef, namespace: string): BuiltDestination {
  const backend = ctx.cluster.backends.get(`${namespace}/${to.name}`);
  if (!backend) return { destination: {}, error: notFound(to.name) };
  const spec = (backend.spec ?? {}) as {
    type?: string;
    externalHostname?: { hostname?: string };
    port?: { port?: number };
  };
  if (spec.type !== "ExternalHostname" || !spec.externalHostname) {
    return {
      destination: {},
      error: {
        reason: REASON_INVALID_KIND,
        message: `backend(${to.name}) type: expected ExternalHostname, got ${spec.type ?? ""}`,
      },
    };
  }
  const hostname = spec.externalHostname.hostname ?? "";
  const port = spec.port?.port ?? 0;
  let error = lookupService(ctx.services, hostname, namespace) ? undefined : notFound(hostname);
  if (to.port !== undefined && to.port !== port) {
    error = {
      reason: REASON_BACKEND_NOT_FOUND,
      message: `backend(${to.name}) does not expose port ${to.port}, expected ${port}`,
    };
    return { destination: {}, error };
  }
  return { destination: { host: hostname, port: { number: port } }, error };
}

function inferencePoolDestination(ctx: BackendContext, to: BackendRef, namespace: string): BuiltDestination {
  if (to.name.includes(".")) {
    return {
      error: {
        reason: REASON_INVALID_DESTINATION,
        message: "InferencePool.Name invalid; the name of the InferencePool must be used, not the hostname.",
      },
    };
  }
  if (!ctx.cluster.inferencePools.has(`${namespace}/${to.name}`)) return { destination: {}, error: notFound(to.name) };
  const hostname = `${inferencePoolServiceName(to.name)}.${namespace}.svc.${ctx.settings.domainSuffix}`;
  const service = lookupService(ctx.services, hostname, namespace);
  if (!service) return { destination: {}, error: notFound(hostname) };
  const labels = service.labels;
  const missingLabels: ConfigError = {
    reason: REASON_INVALID_DESTINATION,
    message: "InferencePool service invalid, extensionRef labels not found",
  };
  if (!labels) return { destination: {}, error: missingLabels };
  const target: InferencePoolTarget = {
    endpointPicker: labels[EXTENSION_SERVICE_LABEL]
      ? `${labels[EXTENSION_SERVICE_LABEL]}.${namespace}.svc.${ctx.settings.domainSuffix}`
      : "",
    port: labels[EXTENSION_PORT_LABEL] ?? "",
    failureMode: labels[EXTENSION_FAILURE_MODE_LABEL] ?? "",
  };
  const incomplete = target.endpointPicker === "" || target.port === "" || target.failureMode === "";
  // The first service port's cluster holds the endpoints of every target port.
  return {
    destination: { host: hostname, port: { number: service.ports[0]?.port ?? 0 } },
    error: incomplete ? missingLabels : undefined,
    inferencePool: target,
  };
}

/** Weights Istio writes: zero-weight refs dropped, and a single remaining ref gets no weight. */
export function effectiveWeights<T extends { weight?: number }>(refs: readonly T[]): { ref: T; weight: number }[] {
  const kept = refs.filter((r) => (r.weight ?? 1) !== 0).map((ref) => ({ ref, weight: ref.weight ?? 1 }));
  if (kept.length === 1) kept[0].weight = 0;
  return kept;
}

export function weightSum(refs: readonly { weight?: number }[]): number {
  return refs.reduce((sum, r) => sum + (r.weight ?? 1), 0);
}
