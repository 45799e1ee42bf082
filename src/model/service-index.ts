// The services of a push indexed for visibility (Istio's serviceIndex): by hostname and namespace,
// and by the namespaces each is exported to (Service annotation networking.istio.io/exportTo,
// ServiceEntry exportTo, else the mesh's defaultServiceExportTo).
import type { Service } from "../registry/index.ts";
import { compareStrings } from "./config-meta.ts";
import { appendTo } from "./multimap.ts";
import { EXPORT_NONE, EXPORT_PUBLIC, exportToSet, isExportedTo } from "./visibility.ts";

export class ServiceIndex {
  /** Every service, oldest first. */
  readonly all: readonly Service[];
  private readonly byHostname = new Map<string, Map<string, Service>>();
  private readonly exportTo = new Map<Service, ReadonlySet<string>>();
  /** Services exported to every namespace. */
  private readonly publicServices: Service[] = [];
  /** Services exported to named namespaces (their own included), by namespace. */
  private readonly exportedTo = new Map<string, Service[]>();
  /** Kubernetes services selecting workloads by labels, by namespace. */
  private readonly selectingByNamespace = new Map<string, Service[]>();

  constructor(services: readonly Service[], defaultExportTo: readonly string[] | undefined) {
    this.all = [...services].sort(compareServices);
    for (const service of this.all) {
      const byNamespace = this.byHostname.get(service.hostname) ?? new Map<string, Service>();
      this.byHostname.set(service.hostname, byNamespace);
      byNamespace.set(service.namespace, service);
      if (service.registry === "Kubernetes" && service.selector !== null && Object.keys(service.selector).length > 0)
        appendTo(this.selectingByNamespace, service.namespace, service);

      const exportTo = exportToSet(service.exportTo, defaultExportTo, service.namespace);
      this.exportTo.set(service, exportTo);
      if (exportTo.has(EXPORT_PUBLIC)) this.publicServices.push(service);
      else if (!exportTo.has(EXPORT_NONE)) {
        for (const namespace of exportTo) appendTo(this.exportedTo, namespace, service);
      }
    }
  }

  /** The services config in `namespace` can see: those exported to it by name first, then public ones. */
  visibleTo(namespace: string): Service[] {
    return [...(this.exportedTo.get(namespace) ?? []), ...this.publicServices];
  }

  isVisible(service: Service, namespace: string): boolean {
    const exportTo = this.exportTo.get(service);
    return exportTo !== undefined && isExportedTo(exportTo, namespace);
  }

  /** The Kubernetes services of `namespace` with a non-empty selector, oldest first. */
  selecting(namespace: string): readonly Service[] {
    return this.selectingByNamespace.get(namespace) ?? [];
  }

  /** The service `hostname` declared in `namespace`. */
  service(hostname: string, namespace: string): Service | undefined {
    return this.byHostname.get(hostname)?.get(namespace);
  }

  /** Every namespace's service for `hostname`, by namespace. */
  byNamespace(hostname: string): ReadonlyMap<string, Service> {
    return this.byHostname.get(hostname) ?? new Map();
  }
}

/** Oldest first; Istio sorts services by creation time, then hostname. */
export function compareServices(a: Service, b: Service): number {
  const ta = Date.parse(a.creationTime) || 0;
  const tb = Date.parse(b.creationTime) || 0;
  if (ta !== tb) return ta - tb;
  return compareStrings(a.hostname, b.hostname) || compareStrings(a.namespace, b.namespace);
}
