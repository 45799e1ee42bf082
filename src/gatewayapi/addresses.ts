// Where a Gateway runs: the Services it binds to, what the registry knows of them (ports with
// endpoints, cluster and external addresses) and the Programmed condition and addresses that follow.
import type { gatewayapi } from "../config/index.ts";
import type { ConditionSpec } from "./conditions.ts";
import type { ClassInfo } from "./gatewayclass.ts";
import type { Server } from "./listeners.ts";
import type { ConfigError, ServiceLookup } from "./model.ts";
import { nameOf, namespaceOf } from "./model.ts";

const NAME_OVERRIDE_ANNOTATION = "gateway.istio.io/name-override";
const SERVICE_ACCOUNT_OVERRIDE_ANNOTATION = "gateway.istio.io/service-account";
const SERVICE_TYPE_ANNOTATION = "networking.istio.io/service-type";
const MANAGED_LABEL = "gateway.istio.io/managed";

/** A Gateway Istio deploys itself: no address, or exactly one IP address. */
function isManaged(spec: gatewayapi.GatewaySpec): boolean {
  const addresses = spec.addresses ?? [];
  if (addresses.length === 0) return true;
  if (addresses.length > 1) return false;
  const type = addresses[0].type;
  return type === undefined || type === "IPAddress";
}

function defaultName(gateway: gatewayapi.Gateway, info: ClassInfo): string {
  return info.disableNameSuffix ? nameOf(gateway) : `${nameOf(gateway)}-${gateway.spec?.gatewayClassName ?? ""}`;
}

/** The service account Istio expects a managed gateway to run as; "" for manually deployed ones. */
export function serviceAccountName(gateway: gatewayapi.Gateway, info: ClassInfo): string {
  if (!gateway.spec || !isManaged(gateway.spec)) return "";
  return gateway.metadata.annotations?.[SERVICE_ACCOUNT_OVERRIDE_ANNOTATION] || defaultName(gateway, info);
}

/** The FQDNs of the Services a Gateway binds to, and a soft error about addresses it ignored. */
export function gatewayServices(
  gateway: gatewayapi.Gateway,
  info: ClassInfo,
  domainSuffix: string,
): { services: string[]; error?: ConfigError } {
  const namespace = namespaceOf(gateway);
  const spec = gateway.spec ?? { gatewayClassName: "", listeners: [] };
  if (isManaged(spec)) {
    const name = gateway.metadata.annotations?.[NAME_OVERRIDE_ANNOTATION] || defaultName(gateway, info);
    return { services: [`${name}.${namespace}.svc.${domainSuffix}`] };
  }
  const services: string[] = [];
  const skipped: string[] = [];
  for (const address of spec.addresses ?? []) {
    if (address.type !== undefined && address.type !== "Hostname") {
      skipped.push(address.value ?? "");
      continue;
    }
    const value = address.value ?? "";
    services.push(value.includes(".") ? value : `${value}.${namespace}.svc.${domainSuffix}`);
  }
  if (skipped.length > 0) {
    return {
      services,
      error: { reason: "UnsupportedAddress", message: `only Hostname is supported, ignoring [${skipped.join(" ")}]` },
    };
  }
  if (gateway.metadata.annotations && Object.hasOwn(gateway.metadata.annotations, SERVICE_TYPE_ANNOTATION)) {
    return {
      services,
      error: {
        reason: "DeprecatedField",
        message: `annotation ${SERVICE_TYPE_ANNOTATION} is deprecated, use Spec.Infrastructure.Routeability`,
      },
    };
  }
  return { services };
}

export interface GatewayInstances {
  /** "host:port" pairs that have endpoints. */
  internal: string[];
  internalIPs: string[];
  external: string[];
  pending: string[];
  warnings: string[];
  allUsable: boolean;
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** What the registry says about the gateway's Services on the ports its servers use. */
export function resolveGatewayInstances(
  gateway: gatewayapi.Gateway,
  serviceNames: readonly string[],
  servers: readonly Server[],
  registry: ServiceLookup,
): GatewayInstances {
  const namespace = namespaceOf(gateway);
  const internal = new Set<string>();
  const internalIPs = new Set<string>();
  const external = new Set<string>();
  const pending = new Set<string>();
  const warnings: string[] = [];
  let unusable = false;
  const uniquePorts = [...new Set(servers.map((s) => s.port.number))];
  for (const hostname of serviceNames) {
    const candidates = registry.servicesByHostname(hostname);
    const service = candidates.find((s) => s.namespace === namespace);
    if (!service) {
      const others = candidates.map((s) => `"${s.namespace}"`).sort(byCodePoint);
      warnings.push(
        others.length > 0
          ? `hostname "${hostname}" not found in namespace "${namespace}", but it was found in namespace(s) ${others.join(", ")}`
          : `hostname "${hostname}" not found`,
      );
      unusable = true;
      continue;
    }
    for (const port of uniquePorts) {
      if (service.endpoints.some((e) => e.servicePort === port)) {
        internal.add(`${hostname}:${port}`);
        for (const address of service.addresses ?? []) internalIPs.add(address);
        const externalAddresses = service.externalAddresses ?? [];
        for (const address of externalAddresses) external.add(address);
        // A load balancer not given an address yet: its hostname is not reported until it is.
        if (externalAddresses.length === 0 && service.kubernetesType === "LoadBalancer" && !pending.has(hostname)) {
          warnings.push(`address pending for hostname "${hostname}"`);
          pending.add(hostname);
        }
        continue;
      }
      if (service.endpoints.length === 0) {
        warnings.push(`no instances found for hostname "${hostname}"`);
        continue;
      }
      const hints = [
        ...new Set(service.endpoints.filter((e) => e.endpointPort === port).map((e) => String(e.servicePort))),
      ];
      if (hints.length > 0) {
        warnings.push(
          `port ${port} not found for hostname "${hostname}" (hint: the service port should be specified, not the workload port. Did you mean one of these ports: [${hints.sort(byCodePoint).join(" ")}]?)`,
        );
        unusable = true;
        continue;
      }
      const managed = service.labels !== undefined && Object.hasOwn(service.labels, MANAGED_LABEL);
      const portOnService = service.ports.some((p) => p.port === port);
      if (!managed || !portOnService) {
        warnings.push(`port ${port} not found for hostname "${hostname}"`);
        unusable = true;
      }
    }
  }
  return {
    internal: [...internal].sort(byCodePoint),
    internalIPs: [...internalIPs].sort(byCodePoint),
    external: [...external].sort(byCodePoint),
    pending: [...pending].sort(byCodePoint),
    warnings: warnings.sort(byCodePoint),
    allUsable: !unusable,
  };
}

/** "a", "a and b", "a, b, and c". */
function humanJoin(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(", ")}, and ${items[items.length - 1]}`;
}

/** Sets the Programmed condition from where the gateway was assigned. */
export function applyProgrammed(
  programmed: ConditionSpec,
  instances: GatewayInstances,
  serviceNames: readonly string[],
): void {
  const { internal, warnings } = instances;
  if (internal.length > 0) programmed.message = `Resource programmed, assigned to service(s) ${humanJoin(internal)}`;
  if (serviceNames.length === 0) {
    programmed.error = { reason: "UnsupportedAddress", message: "Failed to assign to any requested addresses" };
  } else if (warnings.length > 0) {
    const message =
      internal.length > 0
        ? `Assigned to service(s) ${humanJoin(internal)}, but failed to assign to all requested addresses: ${warnings.join("; ")}`
        : `Failed to assign to any requested addresses: ${warnings.join("; ")}`;
    programmed.error = { reason: instances.allUsable ? "AddressNotAssigned" : "AddressNotUsable", message };
  }
}
