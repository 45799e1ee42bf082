// BackendTLSPolicy → client TLS for the Services and ServiceEntries it targets (the oldest policy per
// target wins, others are Conflicted), and its ancestor status (mesh, and the Gateways routing there).
import { type ConfigObject, type gatewayapi, kindKey } from "../config/index.ts";
import { isKind, serviceSpecOf } from "../config/typed.ts";
import type { ConditionSpec } from "./conditions.ts";
import {
  type AncestorIndex,
  type AncestorRef,
  type AncestorStatus,
  ancestorStatus,
  type BackendPolicy,
  backendCaCredential,
  type ClientTls,
  gatewaysOf,
  ignoredPolicyStatus,
  isIgnored,
  mergeAncestors,
  referenced,
  referenceKind,
} from "./destinationrule.ts";
import { GATEWAY_CONTROLLER, MESH_CONTROLLER } from "./gatewayclass.ts";
import type { ClusterObjects } from "./model.ts";

type TargetRef = gatewayapi.BackendTLSPolicyTargetRefs;

const SERVICE_ENTRY = kindKey("networking.istio.io", "ServiceEntry");

export interface PolicyOutput {
  policies: BackendPolicy[];
  status: Record<string, unknown>;
}

export function subjectAltNames(sans: readonly gatewayapi.ValidationSubjectAltNames[] | undefined): string[] {
  return (sans ?? []).flatMap((san) => {
    if (san.type === "Hostname") return [san.hostname ?? ""];
    if (san.type === "URI") return [san.uri ?? ""];
    return [];
  });
}

function sameTarget(a: TargetRef, b: TargetRef): boolean {
  return a.group === b.group && a.kind === b.kind && a.name === b.name && a.sectionName === b.sectionName;
}

// Older first, then by name.
function olderThan(a: ConfigObject, b: ConfigObject): boolean {
  const ta = a.metadata.creationTimestamp ? Date.parse(a.metadata.creationTimestamp) : Number.NEGATIVE_INFINITY;
  const tb = b.metadata.creationTimestamp ? Date.parse(b.metadata.creationTimestamp) : Number.NEGATIVE_INFINITY;
  return ta !== tb ? ta < tb : (a.metadata.name ?? "") < (b.metadata.name ?? "");
}

/** The older (then alphabetically first) active policy with the same target, if any. */
function conflictingPolicy(
  policy: gatewayapi.BackendTLSPolicy,
  target: TargetRef,
  all: readonly gatewayapi.BackendTLSPolicy[],
): string | undefined {
  for (const other of all) {
    // Istio tells policies apart by UID, so objects without one (file input) never conflict.
    if ((other.metadata.uid ?? "") === (policy.metadata.uid ?? "")) continue;
    if (isIgnored(other) || other.metadata.namespace !== policy.metadata.namespace) continue;
    if (!(other.spec?.targetRefs ?? []).some((t) => sameTarget(target, t))) continue;
    if (olderThan(other, policy)) return other.metadata.name;
  }
  return undefined;
}

function targetProblem(
  target: TargetRef,
  namespace: string,
  cluster: ClusterObjects,
): { obj?: ConfigObject; error?: string } {
  const kind = referenceKind(target);
  if (!kind) return { error: `unsupported kind ${target.kind}` };
  const obj = referenced(cluster, kind, `${namespace}/${target.name}`);
  if (!obj) return { error: `reference ${namespace}/${target.name} (of kind ${target.kind}) not found` };
  if (kind !== "Service" && kind !== "ServiceEntry") return { error: `unsupported reference kind: ${target.kind}` };
  if (target.sectionName) {
    const ports = (isKind(obj, SERVICE_ENTRY) ? obj.spec?.ports : serviceSpecOf(obj)?.ports) ?? [];
    if (!ports.some((p) => p.name === target.sectionName)) {
      return { error: `sectionName "${target.sectionName}" does not exist in ${kind} ${namespace}/${target.name}` };
    }
  }
  return { obj };
}

export function convertBackendTLSPolicy(
  policy: gatewayapi.BackendTLSPolicy,
  all: readonly gatewayapi.BackendTLSPolicy[],
  cluster: ClusterObjects,
  ancestors: AncestorIndex,
  domainSuffix: string,
): PolicyOutput {
  const refs = policy.spec?.targetRefs ?? [];
  const meshRef = (t: TargetRef): AncestorRef => ({
    group: t.group,
    kind: t.kind,
    name: t.name,
    ...(t.sectionName !== undefined ? { sectionName: t.sectionName } : {}),
  });
  if (isIgnored(policy)) return { policies: [], status: ignoredPolicyStatus(policy, refs.map(meshRef)) };
  const namespace = policy.metadata.namespace ?? "";
  const live = (policy.status ?? {}) as { ancestors?: AncestorStatus[] };
  const validation = policy.spec?.validation ?? { hostname: "" };
  let conditions: Record<string, ConditionSpec> = {
    Accepted: { reason: "Accepted", message: "Configuration is valid" },
    ResolvedRefs: { reason: "ResolvedRefs", message: "Configuration is valid" },
  };
  const tls: ClientTls = { mode: "SIMPLE" };
  if (validation.hostname) tls.sni = validation.hostname;
  const sans = subjectAltNames(validation.subjectAltNames);
  if (sans.length > 0) tls.subjectAltNames = sans;
  const credential = backendCaCredential(validation, namespace, conditions, cluster);
  if (credential) tls.credentialName = credential;

  const policies: BackendPolicy[] = [];
  const statuses: AncestorStatus[] = [];
  const gateways = new Set<string>();
  for (const target of refs) {
    // Each target reports its own conditions, starting from those of the policy as a whole.
    conditions = Object.fromEntries(Object.entries(conditions).map(([k, v]) => [k, { ...v }]));
    const { obj, error } = targetProblem(target, namespace, cluster);
    if (error || !obj) {
      conditions.Accepted.error = { reason: "TargetNotFound", message: `targetRefs invalid: ${error}` };
    } else {
      const hosts = isKind(obj, SERVICE_ENTRY)
        ? (obj.spec?.hosts ?? [])
        : [`${target.name}.${namespace}.svc.${domainSuffix}`];
      const winner = conflictingPolicy(policy, target, all);
      if (winner) {
        conditions.Accepted.error = {
          reason: "Conflicted",
          message: `Conflicts with BackendTLSPolicy "${winner}" targeting the same backend`,
        };
      } else {
        for (const host of hosts) {
          policies.push({
            source: policy,
            targetKind: obj.kind,
            targetNamespace: namespace,
            targetName: target.name,
            host,
            ...(target.sectionName ? { sectionName: target.sectionName } : {}),
            tls,
          });
        }
      }
      for (const g of gatewaysOf(ancestors, obj.kind, namespace, target.name)) gateways.add(g);
    }
    statuses.push(
      ancestorStatus(meshRef(target), live.ancestors ?? [], policy.metadata.generation, conditions, MESH_CONTROLLER),
    );
  }
  for (const g of [...gateways].sort()) {
    const name = g.slice(g.indexOf("/") + 1);
    const ref: AncestorRef = { group: "gateway.networking.k8s.io", kind: "Gateway", name };
    statuses.push(
      ancestorStatus(ref, live.ancestors ?? [], policy.metadata.generation, conditions, GATEWAY_CONTROLLER),
    );
  }
  return { policies, status: { ...live, ancestors: mergeAncestors(live.ancestors ?? [], statuses, 16) } };
}
