// ServiceEntries as services and endpoints, and WorkloadGroups as templates, as Istio's serviceentry
// registry converts them (pilot/pkg/serviceregistry/serviceentry/conversion.go).
import type { ConfigObject } from "../config/index.ts";
import { autoAllocatesAddresses, parseProtocol } from "../config/index.ts";
import type {
  ServiceEntryPorts,
  ServiceEntrySpec,
  WorkloadEntrySpec,
  WorkloadGroupSpec,
} from "../config/types/index.ts";
import type { Collection, FetchContext, Labels } from "../krt/index.ts";
import type {
  RegistryEndpoints,
  Resolution,
  Service,
  ServiceEndpoint,
  ServicePort,
  WorkloadInstance,
} from "./model.ts";
import { registryKey, UNSPECIFIED_IP } from "./model.ts";
import type { WorkloadContext } from "./workloads.ts";
import { endpointOf, isIpAddress, workloadEntryWorkload } from "./workloads.ts";

const UNIX_PREFIX = "unix://";

const RESOLUTIONS: Record<NonNullable<ServiceEntrySpec["resolution"]>, Resolution> = {
  NONE: "Passthrough",
  STATIC: "ClientSideLB",
  DNS: "DNSLB",
  DNS_ROUND_ROBIN: "DNSRoundRobinLB",
  DYNAMIC_DNS: "DynamicDNS",
};

function convertPort(port: ServiceEntryPorts): ServicePort {
  return {
    name: port.name,
    port: port.number,
    protocol: parseProtocol(port.protocol ?? "") ?? "UnsupportedProtocol",
    targetPort: port.targetPort ?? 0,
  };
}

/** IPs as written; a CIDR covering one address becomes that address; anything else is dropped. */
function serviceEntryAddresses(addresses: readonly string[]): string[] {
  const out: string[] = [];
  for (const address of addresses) {
    if (isIpAddress(address)) {
      out.push(address);
      continue;
    }
    const slash = address.indexOf("/");
    if (slash < 0) continue;
    const ip = address.slice(0, slash);
    const bits = Number(address.slice(slash + 1));
    const maxBits = ip.includes(":") ? 128 : 32;
    if (!isIpAddress(ip) || !Number.isInteger(bits) || bits < 0 || bits > maxBits) continue;
    out.push(bits === maxBits ? ip : address);
  }
  return out;
}

function isDnsResolution(resolution: Resolution): boolean {
  return resolution === "DNSLB" || resolution === "DNSRoundRobinLB";
}

/**
 * One service per host. Istio makes one per (host, address) so each CIDR gets its own listener; here
 * a host's service carries all of its addresses and the listener builder walks them.
 */
export function serviceEntryServices(entry: ConfigObject<ServiceEntrySpec>): Service[] {
  const spec = entry.spec ?? { hosts: [] };
  const namespace = entry.metadata.namespace ?? "";
  const addresses = serviceEntryAddresses(spec.addresses ?? []);
  const autoAllocated = autoAllocatedByHost(entry);
  const meshExternal = (spec.location ?? "MESH_EXTERNAL") === "MESH_EXTERNAL";
  return spec.hosts.map(
    (host): Service => ({
      hostname: host,
      namespace,
      name: host,
      objectName: entry.metadata.name ?? "",
      registry: "External",
      ports: (spec.ports ?? []).map(convertPort),
      addresses,
      defaultAddress: addresses[0] ?? UNSPECIFIED_IP,
      resolution: RESOLUTIONS[spec.resolution ?? "NONE"],
      meshExternal,
      exportTo: [...(spec.exportTo ?? [])],
      labels: entry.metadata.labels ?? {},
      selector: spec.workloadSelector ? (spec.workloadSelector.labels ?? {}) : null,
      serviceAccounts: [...(spec.subjectAltNames ?? [])],
      creationTime: entry.metadata.creationTimestamp ?? "",
      kubernetesType: "",
      clusterId: "",
      externalName: "",
      externalAddresses: [],
      nodeLocal: false,
      publishNotReadyAddresses: false,
      ...(autoAllocated.has(host) ? { autoAllocatedAddresses: autoAllocated.get(host) } : {}),
    }),
  );
}

/**
 * The addresses Istio's IP autoallocation controller wrote into the entry's status, by host; only read
 * for an entry it allocates for (Istio's ShouldV2AutoAllocateIP): resolution not NONE, no spec addresses,
 * not opted out by the networking.istio.io/enable-autoallocate-ip label.
 */
export function autoAllocatedByHost(entry: ConfigObject<ServiceEntrySpec>): Map<string, string[]> {
  const byHost = new Map<string, string[]>();
  if (!autoAllocatesAddresses(entry.metadata.labels, entry.spec)) return byHost;
  const status = entry.status as { addresses?: { host?: string; value?: string }[] } | undefined;
  for (const { host = "", value = "" } of status?.addresses ?? []) {
    if (!isIpAddress(value)) continue;
    byHost.set(host, [...(byHost.get(host) ?? []), value]);
  }
  return byHost;
}

const WORKLOAD_KIND_ORDER = { Pod: 0, WorkloadEntry: 1 } as const;

/**
 * The workloads behind a ServiceEntry: those its workloadSelector picks (ready Pods and healthy
 * WorkloadEntries of its namespace; DNS-named ones only for DNS resolution), else its inline
 * endpoints, else, for DNS resolution, the host itself.
 */
function serviceEntryWorkloads(
  ctx: FetchContext,
  entry: ConfigObject<ServiceEntrySpec>,
  resolution: Resolution,
  workloads: Collection<WorkloadInstance>,
  mesh: WorkloadContext,
): WorkloadInstance[] | "host" {
  const spec = entry.spec ?? { hosts: [] };
  const namespace = entry.metadata.namespace ?? "";
  if (spec.workloadSelector) {
    const selector: Labels = spec.workloadSelector.labels ?? {};
    const dns = isDnsResolution(resolution);
    return ctx
      .fetch(workloads, { namespace, labels: selector, where: (w) => w.ready && (dns || !w.dnsOnly) })
      .sort(
        (a, b) =>
          WORKLOAD_KIND_ORDER[a.kind] - WORKLOAD_KIND_ORDER[b.kind] ||
          a.namespace.localeCompare(b.namespace) ||
          a.name.localeCompare(b.name),
      );
  }
  const inline = spec.endpoints ?? [];
  if (inline.length === 0 && isDnsResolution(resolution)) return "host";
  const name = entry.metadata.name ?? "";
  return inline.map((endpoint: WorkloadEntrySpec, i) =>
    workloadEntryWorkload(ctx, endpoint, { name: `${name}-${i}`, namespace, annotations: {}, ready: true }, mesh),
  );
}

/**
 * Which workload port serves a service port: a unix socket has none; then the workload's port of
 * that name, the ServiceEntry's targetPort, and the port number itself.
 */
function workloadTarget(workload: WorkloadInstance, port: ServiceEntryPorts): { address: string; port: number } {
  if (workload.address.startsWith(UNIX_PREFIX)) return { address: workload.address.slice(UNIX_PREFIX.length), port: 0 };
  const mapped = workload.portMap[port.name];
  return { address: workload.address, port: mapped || port.targetPort || port.number };
}

/** The endpoints of each service `serviceEntryServices` made from `entry`. */
export function serviceEntryEndpoints(
  ctx: FetchContext,
  entry: ConfigObject<ServiceEntrySpec>,
  services: readonly Service[],
  workloads: Collection<WorkloadInstance>,
  mesh: WorkloadContext,
): RegistryEndpoints[] {
  const ports = entry.spec?.ports ?? [];
  const resolution = services[0]?.resolution ?? "Passthrough";
  const selected = serviceEntryWorkloads(ctx, entry, resolution, workloads, mesh);
  return services.map((service) => {
    const endpoints: ServiceEndpoint[] = [];
    for (const port of ports) {
      const base = {
        hostname: service.hostname,
        namespace: service.namespace,
        servicePort: port.number,
        servicePortName: port.name,
        health: "Unknown" as const,
      };
      if (selected === "host") {
        // A DNS ServiceEntry without endpoints resolves its own host; the entry is its workload.
        const endpoint = endpointOf(
          ctx,
          { ...base, address: service.hostname, port: port.targetPort || port.number },
          undefined,
          mesh,
        );
        endpoints.push({ ...endpoint, labels: {}, workloadName: service.objectName });
        continue;
      }
      for (const workload of selected) {
        // A Pod's endpoint has its readiness; a WorkloadEntry's (and an inline one's) carries none (Istio).
        const health = workload.kind === "Pod" ? ("Healthy" as const) : base.health;
        const target = { ...base, health, ...workloadTarget(workload, port) };
        endpoints.push(endpointOf(ctx, target, workload, mesh));
      }
    }
    return { key: registryKey(service), hostname: service.hostname, namespace: service.namespace, endpoints };
  });
}

/** A WorkloadGroup: the metadata and WorkloadEntry spec auto-registered workloads are made from. */
export interface WorkloadGroupTemplate {
  name: string;
  namespace: string;
  labels: Labels;
  annotations: Labels;
  template: WorkloadEntrySpec;
}

export function workloadGroupTemplate(group: ConfigObject<WorkloadGroupSpec>): WorkloadGroupTemplate {
  const spec = group.spec ?? { template: {} };
  return {
    name: group.metadata.name ?? "",
    namespace: group.metadata.namespace ?? "",
    labels: spec.metadata?.labels ?? {},
    annotations: spec.metadata?.annotations ?? {},
    template: spec.template,
  };
}
