// XBackend (an external hostname as a route backend) → client TLS for its port, and its status
// (parents: the XBackend itself for the mesh, and each Gateway routing to it).
import type { ConfigObject } from "../config/index.ts";
import type { PolicyOutput } from "./backendtls.ts";
import { subjectAltNames } from "./backendtls.ts";
import type { ConditionSpec } from "./conditions.ts";
import {
  type AncestorIndex,
  type AncestorStatus,
  ancestorStatus,
  type BackendPolicy,
  backendCaCredential,
  type CaValidation,
  type ClientTls,
  gatewaysOf,
  mergeAncestors,
} from "./destinationrule.ts";
import { GATEWAY_CONTROLLER, MESH_CONTROLLER } from "./gatewayclass.ts";
import type { ClusterObjects } from "./model.ts";

/** The fields read from an XBackend: an experimental kind with no generated type (Sluice has no schema for it). */
interface XBackendSpec {
  type?: string;
  externalHostname?: { hostname?: string };
  port?: { port?: number };
  tls?: {
    mode?: string;
    validation?: CaValidation & {
      hostname?: string;
      subjectAltNames?: { type: "Hostname" | "URI"; hostname?: string; uri?: string }[];
    };
  };
}

function clientTls(
  backend: ConfigObject,
  spec: XBackendSpec,
  conditions: Record<string, ConditionSpec>,
  cluster: ClusterObjects,
): ClientTls | undefined {
  const tls = spec.tls;
  if (!tls) return undefined;
  switch (tls.mode) {
    case "ServerOnly":
      break;
    case "None":
      return undefined;
    case "ClientAndServer":
      conditions.Accepted.error = {
        reason: "Invalid",
        message: "unsupported ClientAndServer TLS mode: Istio does not support client certificates on backend",
      };
      return undefined;
    default:
      conditions.Accepted.error = { reason: "Invalid", message: `unsupported TLS mode: "${tls.mode ?? ""}"` };
      return undefined;
  }
  const validation = tls.validation ?? {};
  const out: ClientTls = { mode: "SIMPLE", sni: validation.hostname || spec.externalHostname?.hostname || "" };
  const sans = subjectAltNames(validation.subjectAltNames);
  if (sans.length > 0) out.subjectAltNames = sans;
  const credential = backendCaCredential(validation, backend.metadata.namespace ?? "", conditions, cluster);
  if (credential) out.credentialName = credential;
  return out;
}

export function convertXBackend(
  backend: ConfigObject,
  cluster: ClusterObjects,
  ancestors: AncestorIndex,
): PolicyOutput {
  // No schema admitted it (see XBackendSpec): the cast is the conversion's reading of the experimental kind.
  const spec = (backend.spec ?? {}) as XBackendSpec;
  const namespace = backend.metadata.namespace ?? "";
  const name = backend.metadata.name ?? "";
  const live = (backend.status ?? {}) as {
    parents?: {
      parentRef: AncestorStatus["ancestorRef"];
      controllerName: string;
      conditions: AncestorStatus["conditions"];
    }[];
  };
  const conditions: Record<string, ConditionSpec> = {
    Accepted: { reason: "Accepted", message: "Configuration is valid" },
    ResolvedRefs: { reason: "ResolvedRefs", message: "Configuration is valid" },
  };
  const policies: BackendPolicy[] = [];
  if (spec.type !== "ExternalHostname" || !spec.externalHostname) {
    conditions.Accepted.error = { reason: "Invalid", message: `unsupported backend type: ${spec.type ?? ""}` };
  } else {
    const tls = clientTls(backend, spec, conditions, cluster);
    if (tls) {
      policies.push({
        source: backend,
        targetKind: "XBackend",
        targetNamespace: namespace,
        targetName: name,
        host: spec.externalHostname.hostname ?? "",
        port: spec.port?.port ?? 0,
        tls,
      });
    }
  }
  // The shared ancestor helpers speak "ancestorRef"; an XBackend's status calls it "parentRef".
  const liveAncestors: AncestorStatus[] = (live.parents ?? []).map((p) => ({
    ancestorRef: p.parentRef,
    controllerName: p.controllerName,
    conditions: p.conditions,
  }));
  const incoming = [
    ancestorStatus(
      { group: "gateway.networking.x-k8s.io", kind: "XBackend", name },
      liveAncestors,
      backend.metadata.generation,
      conditions,
      MESH_CONTROLLER,
    ),
    ...gatewaysOf(ancestors, "XBackend", namespace, name).map((g) => {
      const [gatewayNamespace, gatewayName] = g.split("/");
      const ref = {
        group: "gateway.networking.k8s.io",
        kind: "Gateway",
        namespace: gatewayNamespace,
        name: gatewayName,
      };
      return ancestorStatus(ref, liveAncestors, backend.metadata.generation, conditions, GATEWAY_CONTROLLER);
    }),
  ];
  const parents = mergeAncestors(liveAncestors, incoming, 32).map((a) => ({
    conditions: a.conditions,
    controllerName: a.controllerName,
    parentRef: a.ancestorRef,
  }));
  return { policies, status: { ...live, parents } };
}
