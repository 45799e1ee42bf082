// Which push a batch of config changes asks for, as Istio's controllers decide when they call
// ConfigUpdate: a change that moves only endpoints (EndpointSlice, Endpoints, a Pod or WorkloadEntry
// behind a service, a Service whose selector alone changed) is an incremental EDS push naming the
// services' hostnames; every other change is a full push naming the changed config. A workload
// behind a DNS ServiceEntry is a full push too: those clusters carry their endpoints inline (CDS).
import { isDeepStrictEqual } from "node:util";
import { type ConfigObject, kindKey, type ObjectKey } from "../../config/index.ts";
import { isKind, serviceSpecOf } from "../../config/typed.ts";
import type { TriggerReason } from "../../model/index.ts";
import { kubeHostname, type WorkloadServices } from "../../registry/index.ts";
import type { ConfigEvent } from "../../sources/index.ts";

/** The pilot_inbound_updates `type` label (Istio's config, eds, svc, svcdelete). */
export type InboundType = "config" | "eds" | "svc" | "svcdelete";

/** The pushes a batch asks for: at most one full and one incremental request. */
export interface ClassifiedChanges {
  full?: Change;
  incremental?: Change;
  /** Per event, for pilot_inbound_updates. */
  inbound: InboundType[];
}

export interface Change {
  keys: ObjectKey[];
  reasons: TriggerReason[];
  events: number;
}

export const KIND = {
  service: kindKey("", "Service"),
  endpoints: kindKey("", "Endpoints"),
  endpointSlice: kindKey("discovery.k8s.io", "EndpointSlice"),
  pod: kindKey("", "Pod"),
  namespace: kindKey("", "Namespace"),
  secret: kindKey("", "Secret"),
  serviceEntry: kindKey("networking.istio.io", "ServiceEntry"),
  workloadEntry: kindKey("networking.istio.io", "WorkloadEntry"),
} as const;

const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** Istio names the services of an endpoint push by a ServiceEntry-kind key holding the hostname. */
function hostKey(namespace: string, hostname: string): ObjectKey {
  return { kind: KIND.serviceEntry, namespace, name: hostname };
}

/**
 * The pushes a batch of store events asks for. Which services a Pod or WorkloadEntry change reaches is
 * the registry's answer (`services`, its live krt collections, already updated by the batch); without a
 * registry a workload change reaches none.
 */
export function classifyEvents(
  events: readonly ConfigEvent[],
  services: WorkloadServices | undefined,
  domainSuffix: string,
): ClassifiedChanges {
  const full: Change = { keys: [], reasons: [], events: 0 };
  const incremental: Change = { keys: [], reasons: [], events: 0 };
  const inbound: InboundType[] = [];
  for (const event of events) {
    const { key } = event;
    // Gateway API objects push through the Istio config converted from them (see storeGatewayConversion).
    if (key.kind.startsWith(GATEWAY_API_GROUP)) continue;
    const obj = event.new ?? event.old;
    const namespace = key.namespace;
    const endpointOnly = (hosts: ObjectKey[], type: InboundType = "eds") => {
      incremental.keys.push(...hosts);
      incremental.reasons.push("endpoint");
      incremental.events++;
      inbound.push(type);
    };
    switch (key.kind) {
      case KIND.endpointSlice: {
        const service = obj?.metadata.labels?.[SERVICE_NAME_LABEL];
        endpointOnly(service ? [hostKey(namespace, kubeHostname(service, namespace, domainSuffix))] : []);
        continue;
      }
      case KIND.endpoints:
        endpointOnly([hostKey(namespace, kubeHostname(key.name, namespace, domainSuffix))]);
        continue;
      case KIND.pod:
      case KIND.workloadEntry: {
        const { hosts, inlineEndpoints } = hostsSelecting(services, namespace, workloadLabels(event));
        if (!inlineEndpoints) {
          endpointOnly(hosts);
          continue;
        }
        // As Istio's ServiceEntry controller: one full push naming every service the workload is behind.
        full.keys.push(...hosts);
        full.reasons.push("endpoint");
        full.events++;
        inbound.push("eds");
        continue;
      }
      case KIND.service: {
        const host = hostKey(namespace, kubeHostname(key.name, namespace, domainSuffix));
        if (event.type === "update" && selectorOnlyChange(event.old, event.new)) {
          endpointOnly([host], "svc");
          continue;
        }
        full.keys.push(host);
        full.reasons.push("service");
        full.events++;
        inbound.push(event.type === "delete" ? "svcdelete" : "svc");
        continue;
      }
    }
    full.keys.push({ kind: key.kind, namespace, name: key.name });
    full.reasons.push(reasonFor(key.kind));
    full.events++;
    inbound.push("config");
  }
  return {
    full: full.events > 0 ? full : undefined,
    incremental: incremental.events > 0 ? incremental : undefined,
    inbound,
  };
}

function reasonFor(kind: string): TriggerReason {
  if (kind === KIND.namespace) return "namespace";
  if (kind === KIND.secret) return "secret";
  return "config";
}

const GATEWAY_API_GROUP = "gateway.networking.k8s.io/";

/** The labels before and after the change: a workload leaving a service matters as much as one joining. */
function workloadLabels(event: ConfigEvent): Record<string, string>[] {
  const labelsOf = (obj: ConfigObject | undefined): Record<string, string> | undefined =>
    obj && isKind(obj, KIND.workloadEntry) ? obj.spec?.labels : obj?.metadata.labels;
  return [labelsOf(event.old) ?? {}, labelsOf(event.new) ?? {}];
}

/**
 * Whether two versions of a Service differ only in the selector (and bookkeeping metadata). The status
 * counts: its load-balancer ingress addresses are where a network gateway Service is reached, and a
 * gateway change reaches every proxy's endpoints (Istio pushes fully when they change).
 */
function selectorOnlyChange(old: ConfigObject | undefined, next: ConfigObject | undefined): boolean {
  const strip = (svc: ConfigObject | undefined) => {
    const { resourceVersion: _rv, generation: _gen, managedFields: _mf, ...metadata } = svc?.metadata ?? {};
    const { selector: _selector, ...spec } = serviceSpecOf(svc) ?? {};
    return { ...svc, metadata, spec };
  };
  return isDeepStrictEqual(strip(old), strip(next));
}

/** The hosts of the services selecting any of the label sets, and whether one carries its endpoints in CDS. */
function hostsSelecting(
  services: WorkloadServices | undefined,
  namespace: string,
  labelSets: readonly Record<string, string>[],
): { hosts: ObjectKey[]; inlineEndpoints: boolean } {
  const selecting = new Set(labelSets.flatMap((labels) => services?.servicesSelecting(namespace, labels) ?? []));
  const hosts: ObjectKey[] = [];
  let inlineEndpoints = false;
  for (const service of selecting) {
    hosts.push(hostKey(namespace, service.hostname));
    // A DNS ServiceEntry: its clusters carry their endpoints inline.
    inlineEndpoints ||= service.resolution === "DNSLB" || service.resolution === "DNSRoundRobinLB";
  }
  return { hosts, inlineEndpoints };
}
