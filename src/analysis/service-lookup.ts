// How Istio's analyzers resolve a host to a service (analyzers/util/service_lookup.go, hosts.go):
// ServiceEntries and Kubernetes Services keyed by "<visible-in scope>/<fqdn>", honouring exportTo.
// The analyzers use this simplified view rather than the registry's, and report exactly what it finds.
import type { AnalysisContext } from "./analyzer.ts";
import { K } from "./kinds.ts";
import { annotationsOf, asArray, asRecord, asString, asStringArray, asStringMap, specOf } from "./resource.ts";

export const ALL_NAMESPACES = "*";
const NAMESPACE_LOCAL = ".";
const EXPORT_TO_ANNOTATION = "networking.istio.io/exportTo";

/** The part of a ServiceEntry (or a Service seen as one) the analyzers read. */
export interface ServiceEntryView {
  hosts: string[];
  ports: { number: number; name: string; protocol: string }[];
  workloadSelectorLabels: Record<string, string>;
}

/** "<scope>/<fqdn>" → the service visible under it. */
export type ServiceHostMap = Map<string, ServiceEntryView>;

/** A host as its FQDN: a name without a dot (and not a wildcard) is a Service of `namespace`. */
export function hostToFqdn(namespace: string, host: string): string {
  return host.startsWith("*") || host.includes(".") ? host : `${host}.${namespace}.svc.cluster.local`;
}

export function scopedFqdn(scope: string, namespace: string, host: string): string {
  return `${scope}/${hostToFqdn(namespace, host)}`;
}

/** util.InitServiceEntryHostMap. */
export function serviceHostMap(ctx: AnalysisContext): ServiceHostMap {
  const result: ServiceHostMap = new Map();
  for (const r of ctx.list(K.ServiceEntry)) {
    const spec = specOf(r);
    const view: ServiceEntryView = {
      hosts: asStringArray(spec.hosts),
      ports: asArray(spec.ports).map((p) => {
        const port = asRecord(p);
        return { number: Number(port.number ?? 0), name: asString(port.name), protocol: asString(port.protocol) };
      }),
      workloadSelectorLabels: asStringMap(asRecord(spec.workloadSelector).labels),
    };
    const exportTo = asStringArray(spec.exportTo);
    for (const host of view.hosts) {
      if (exportTo.length === 0) {
        result.set(scopedFqdn(ALL_NAMESPACES, r.namespace, host), view);
        continue;
      }
      for (const ns of exportTo) {
        if (ns === ALL_NAMESPACES) {
          result.set(scopedFqdn(ALL_NAMESPACES, r.namespace, host), view);
          break;
        }
        result.set(scopedFqdn(ns === NAMESPACE_LOCAL ? r.namespace : ns, r.namespace, host), view);
      }
    }
  }
  for (const r of ctx.list(K.Service)) {
    const view: ServiceEntryView = {
      hosts: [hostToFqdn(r.namespace, r.name)],
      ports: asArray(specOf(r).ports).map((p) => {
        const port = asRecord(p);
        return { number: Number(port.port ?? 0), name: asString(port.name), protocol: asString(port.protocol) };
      }),
      workloadSelectorLabels: {},
    };
    for (const scope of visibleNamespaces(annotationsOf(r)[EXPORT_TO_ANNOTATION] ?? "", r.namespace)) {
      result.set(scopedFqdn(scope, r.namespace, r.name), view);
    }
  }
  return result;
}

function visibleNamespaces(annotation: string, namespace: string): string[] {
  if (annotation === "") return [ALL_NAMESPACES];
  return annotation.split(",").map((ns) => {
    const trimmed = ns.trim();
    return trimmed === NAMESPACE_LOCAL ? namespace : trimmed;
  });
}

/** util.GetDestinationHost: the service `host` names for config in `sourceNamespace` exported to `exportTo`. */
export function destinationHost(
  sourceNamespace: string,
  exportTo: readonly string[],
  host: string,
  services: ServiceHostMap,
): ServiceEntryView | undefined {
  const everywhere = services.get(scopedFqdn(ALL_NAMESPACES, sourceNamespace, host));
  if (everywhere) return everywhere;
  const scopes =
    exportTo.length === 0 ? [sourceNamespace] : exportTo.map((e) => (e === NAMESPACE_LOCAL ? sourceNamespace : e));
  for (const scope of scopes) {
    const found = services.get(scopedFqdn(scope, sourceNamespace, host));
    if (found) return found;
  }
  const bareHost = host.startsWith("*") ? host.slice(1) : host;
  for (const [key, view] of services) {
    const slash = key.indexOf("/");
    const [scope, serviceHost] = [key.slice(0, slash), key.slice(slash + 1)];
    if (!serviceHost.startsWith("*")) continue;
    if (scope !== ALL_NAMESPACES && scope !== sourceNamespace) continue;
    if (bareHost.endsWith(serviceHost.slice(1))) return view;
  }
  return undefined;
}

/** The namespaces an exportTo list makes config visible in: "*" alone when empty or listing "*". */
export function exportToScopes(exportTo: readonly string[], namespace: string): Set<string> {
  if (exportTo.length === 0 || exportTo.includes(ALL_NAMESPACES)) return new Set([ALL_NAMESPACES]);
  return new Set(exportTo.map((e) => (e === NAMESPACE_LOCAL ? namespace : e)));
}

const FQDN_PATTERN = /^(.+)\.(.+)\.svc\.cluster\.local$/;

/** util.GetResourceNameFromHost: "<name>.<ns>.svc.cluster.local" as ns/name, anything else as a name in `namespace`. */
export function resourceNameFromHost(namespace: string, host: string): string {
  const match = FQDN_PATTERN.exec(host);
  return match ? `${match[2]}/${match[1]}` : `${namespace}/${host}`;
}
