// NDS: the name table the agent's DNS proxy answers from (Istio's pkg/dns/server BuildNameTable,
// served by pilot/pkg/xds/nds.go): every service the sidecar's scope sees, with its VIP, or for a
// headless service the endpoint IPs of its cluster and network.
import { isIP } from "node:net";
import { create } from "@bufbuild/protobuf";
import { nds } from "../../api/index.ts";
import type { ProxyNode, PushContext } from "../../model/index.ts";
import { pushSnapshot } from "../../model/index.ts";
import { type Service, UNSPECIFIED_IP } from "../../registry/index.ts";
import type { Generator } from "../generator.ts";
import { changedHostnames, type EndpointLookup } from "./eds.ts";

/** The addresses a name resolves to for the proxy; empty when it cannot resolve it. */
function serviceAddresses(service: Service, proxy: ProxyNode, endpoints: EndpointLookup): string[] {
  if (service.defaultAddress !== UNSPECIFIED_IP) {
    // CIDR addresses cannot be answered.
    return isIP(service.defaultAddress) ? [service.defaultAddress] : [];
  }
  if (service.resolution !== "Passthrough" || service.ports.length === 0) return [];
  // Headless: as Kubernetes DNS, the endpoints of the proxy's own cluster and network.
  const network = proxy.metadata.NETWORK ?? "";
  return endpoints
    .endpointsFor(service.hostname, service.ports[0].port, service.namespace)
    .filter(
      (e) =>
        isIP(e.address) !== 0 &&
        e.clusterId === proxy.clusterId &&
        (network === "" || e.network === "" || e.network === network),
    )
    .map((e) => e.address);
}

/** The proxy's name table; undefined for proxies other than sidecars (only sidecars run the DNS proxy). */
export function buildNameTable(
  push: PushContext,
  proxy: ProxyNode,
  endpoints: EndpointLookup,
): nds.NameTable | undefined {
  if (proxy.type !== "sidecar") return undefined;
  const table: Record<string, nds.NameTable_NameInfo> = {};
  for (const service of pushSnapshot(push).sidecarScope(proxy).services) {
    const ips = serviceAddresses(service, proxy, endpoints);
    if (ips.length === 0) continue;
    const kubernetes = service.registry === "Kubernetes";
    // The agent expands a Kubernetes name's short forms itself (a, a.ns, a.ns.svc); MCS names it does not.
    const expand = kubernetes && !service.hostname.endsWith(".clusterset.local");
    const existing = table[service.hostname];
    if (!existing) {
      table[service.hostname] = create(nds.NameTable_NameInfoSchema, {
        ips,
        registry: service.registry,
        ...(expand ? { namespace: service.namespace, shortname: service.name } : {}),
      });
    } else if (existing.registry !== "Kubernetes") {
      // A Kubernetes service wins over a ServiceEntry decorating it; ServiceEntries' VIPs add up.
      if (kubernetes) {
        existing.ips = ips;
        existing.registry = service.registry;
        if (expand) Object.assign(existing, { namespace: service.namespace, shortname: service.name });
      } else {
        existing.ips.push(...ips);
      }
    }
  }
  return create(nds.NameTableSchema, { table });
}

/** One unnamed NameTable on full pushes, and on endpoint pushes that touch a headless service the proxy sees. */
export function ndsGenerator(endpoints: EndpointLookup): Generator {
  return {
    generate(proxy, _watched, req) {
      if (!req.full) {
        const scope = pushSnapshot(req.push).sidecarScope(proxy);
        const headless = [...changedHostnames(req)].some((h) => scope.service(h)?.defaultAddress === UNSPECIFIED_IP);
        if (!headless) return undefined;
      }
      const table = buildNameTable(req.push, proxy, endpoints);
      // As Istio, a proxy without a DNS proxy gets no answer at all.
      return table && { resources: [{ name: "", resource: table }] };
    },
  };
}
