// NDS: the name table the agent's DNS proxy answers from (Istio's pkg/dns/server BuildNameTable,
// served by pilot/pkg/xds/nds.go): every service the sidecar's scope sees with its addresses (for a
// proxy capturing DNS, a ServiceEntry host without any answers its auto-allocated ones); a headless
// service answers its ready endpoints of the proxy's network, and each Pod with a subdomain gets its
// own `<hostname>.<subdomain>.<ns>.svc.<domain>` name, as Kubernetes DNS gives StatefulSet pods.
import { isIP } from "node:net";
import { create } from "@bufbuild/protobuf";
import { nds } from "../../api/index.ts";
import type { MeshPush, ProxyNode, PushSnapshot } from "../../model/index.ts";
import { addressesForProxy, usesAutoAllocatedAddresses } from "../../model/index.ts";
import { type EndpointLookup, type Service, UNSPECIFIED_IP } from "../../registry/index.ts";
import type { Generator } from "../generator.ts";
import { changedHostnames } from "./needs-push.ts";

type NameInfo = nds.NameTable_NameInfo;

/**
 * The service's addresses for the proxy (Istio's GetAllAddressesForProxy): a ServiceEntry's IPs, a
 * Kubernetes service's cluster IPs of the proxy's families, or, without any, the auto-allocated addresses of the proxy's families when
 * it captures DNS; UNSPECIFIED_IP stands for "none" (headless, or not allocated).
 */
function proxyAddresses(snap: PushSnapshot, service: Service, proxy: ProxyNode): string[] {
  if (service.defaultAddress === UNSPECIFIED_IP) {
    const allocated = usesAutoAllocatedAddresses(proxy, snap.ipAutoallocate)
      ? addressesForProxy(snap.autoAllocatedAddresses(service), proxy)
      : [];
    return allocated.length > 0 ? allocated : [UNSPECIFIED_IP];
  }
  if (service.registry === "External") return service.addresses;
  // A Kubernetes service's cluster IPs of the proxy's families (both of a dual-stack service for a dual-stack proxy).
  return addressesForProxy(service.addresses, proxy);
}

/** Istio's IsSameOrEmpty: a value matches when equal or when either side is unset. */
function sameOrEmpty(a: string, b: string): boolean {
  return a === "" || b === "" || a === b;
}

/**
 * A headless service's answers: its ready endpoint IPs of the proxy's network (any cluster, as Istio's
 * ENABLE_MULTICLUSTER_HEADLESS default), and per-Pod names, the proxy's own cluster winning over others.
 */
function headlessEntries(
  service: Service,
  proxy: ProxyNode,
  endpoints: EndpointLookup,
): { ips: string[]; pods: Map<string, NameInfo> } {
  const network = proxy.metadata.NETWORK ?? "";
  const domain = service.hostname.slice(service.hostname.indexOf(".") + 1);
  const ips: string[] = [];
  const local = new Map<string, NameInfo>();
  const remote = new Map<string, NameInfo>();
  const seen = new Set<string>();
  for (const port of service.ports) {
    for (const e of endpoints.endpointsFor(service.hostname, port.port, service.namespace)) {
      // A ServiceEntry's endpoints carry no health ("Unknown"): they are ready (istiod skips them here).
      const ready = e.health === "Healthy" || e.health === "Unknown";
      if (isIP(e.address) === 0 || (!service.publishNotReadyAddresses && !ready)) continue;
      if (seen.has(e.address)) continue;
      seen.add(e.address);
      const sameNetwork = sameOrEmpty(e.network, network);
      if (e.podDns && sameNetwork && service.hostname.includes(".")) {
        const shortname = `${e.podDns.hostname}.${e.podDns.subdomain}`;
        const pods = sameOrEmpty(e.clusterId, proxy.clusterId) ? local : remote;
        const host = `${shortname}.${domain}`;
        const entry =
          pods.get(host) ??
          create(nds.NameTable_NameInfoSchema, { registry: service.registry, namespace: service.namespace, shortname });
        entry.ips.push(e.address);
        pods.set(host, entry);
      }
      if (sameNetwork) ips.push(e.address);
    }
  }
  for (const [host, entry] of remote) if (!local.has(host)) local.set(host, entry);
  return { ips, pods: local };
}

/** The proxy's name table; undefined for proxies other than sidecars (only sidecars run the DNS proxy). */
export function buildNameTable(push: MeshPush, proxy: ProxyNode, endpoints: EndpointLookup): nds.NameTable | undefined {
  if (proxy.type !== "sidecar") return undefined;
  const snap = push.snapshot;
  const table: Record<string, NameInfo> = {};
  for (const service of snap.sidecarScope(proxy).services) {
    const addresses = proxyAddresses(snap, service, proxy);
    let ips = addresses.filter((a) => isIP(a) !== 0 && a !== UNSPECIFIED_IP);
    if (addresses.includes(UNSPECIFIED_IP)) {
      ips = [];
      if (service.resolution === "Passthrough" && service.ports.length > 0) {
        const headless = headlessEntries(service, proxy, endpoints);
        for (const [host, entry] of headless.pods) table[host] = entry;
        ips = headless.ips;
      }
    }
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
export function ndsGenerator(endpoints: EndpointLookup): Generator<PushSnapshot> {
  return {
    generate(proxy, _watched, req) {
      if (!req.full) {
        const scope = req.push.snapshot.sidecarScope(proxy);
        const headless = [...changedHostnames(req)].some((h) => scope.service(h)?.defaultAddress === UNSPECIFIED_IP);
        if (!headless) return undefined;
      }
      const table = buildNameTable(req.push, proxy, endpoints);
      // As Istio, a proxy without a DNS proxy gets no answer at all.
      return table && { resources: [{ name: "", resource: table }] };
    },
  };
}
