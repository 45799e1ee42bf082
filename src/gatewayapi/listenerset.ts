// ListenerSets: listeners attached to a parent Gateway from elsewhere. Each valid listener becomes an
// Istio Gateway named after the ListenerSet; the set gets its own status.
import type { gatewayapi } from "../config/index.ts";
import { applyProgrammed, gatewayServices, resolveGatewayInstances, serviceAccountName } from "./addresses.ts";
import { type Condition, type ConditionSpec, setConditions } from "./conditions.ts";
import { type ConversionContext, emitsConfig, type ListenerOutput, listenerConfig } from "./gateway.ts";
import type { ResolvedClass } from "./gatewayclass.ts";
import {
  buildListener,
  conflictedListener,
  declaredListenerStatuses,
  type Listener,
  type ListenerStatus,
  type Server,
} from "./listeners.ts";
import type { ConfigError } from "./model.ts";
import { GATEWAY_GROUP, groupBy, nameOf, namespaceOf } from "./model.ts";
import {
  GATEWAY_SEMANTICS_ANNOTATION,
  GATEWAY_SERVICE_ANNOTATION,
  PARENT_NAMESPACE_ANNOTATION,
  SERVICE_ACCOUNT_ANNOTATION,
} from "./naming.ts";
import { namespaceLabels, selectorMatches } from "./selector.ts";
import { compareByCreation } from "./virtualservice.ts";

export interface ListenerSetStatus {
  conditions?: Condition[];
  listeners?: ListenerStatus[];
  [key: string]: unknown;
}

export interface ListenerSetOutput {
  listenerSet: gatewayapi.ListenerSet;
  /** Key of the parent Gateway ("ns/name"). */
  gatewayKey: string;
  /** Its programmed listeners, which the parent Gateway serves. */
  listeners: ListenerOutput[];
  servers: Server[];
  /** Undefined when the set is not Istio's to report on. */
  status?: ListenerSetStatus;
}

/** A set's listeners with defaulted ports (80 for HTTP, 443 for HTTPS), and why a port is missing. */
function resolvedListeners(set: gatewayapi.ListenerSet): { listener: Listener; portError?: string }[] {
  return (set.spec?.listeners ?? []).map((l) => {
    if (l.port) return { listener: l };
    const port = l.protocol === "HTTP" ? 80 : l.protocol === "HTTPS" ? 443 : 0;
    return port
      ? { listener: { ...l, port } }
      : { listener: l, portError: `protocol ${l.protocol} requires a port to be set` };
  });
}

export function parentGatewayKey(set: gatewayapi.ListenerSet): string | undefined {
  const ref = set.spec?.parentRef;
  if (!ref || (ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? "Gateway") !== "Gateway") return undefined;
  return `${ref.namespace ?? namespaceOf(set)}/${ref.name}`;
}

type NamespaceLookup = (name: string) => { metadata: { labels?: Record<string, string> } } | undefined;

function acceptsListenerSetFrom(gateway: gatewayapi.Gateway, namespace: string, lookup: NamespaceLookup): boolean {
  const allowed = gateway.spec?.allowedListeners?.namespaces;
  switch (allowed?.from) {
    case "All":
      return true;
    case "Same":
      return namespace === namespaceOf(gateway);
    case "Selector": {
      const ns = lookup(namespace);
      if (!allowed.selector || !ns) return false;
      return selectorMatches(allowed.selector, namespaceLabels(namespace, ns.metadata.labels)) === true;
    }
    default:
      return false;
  }
}

export interface EligibleListenerSet {
  listenerSet: gatewayapi.ListenerSet;
  listeners: Listener[];
}

/** Per Gateway ("ns/name"), the ListenerSets it accepts, oldest first: they take part in listener conflicts. */
export function eligibleListenerSets(
  sets: readonly gatewayapi.ListenerSet[],
  gateways: ReadonlyMap<string, gatewayapi.Gateway>,
  ctx: ConversionContext,
): Map<string, EligibleListenerSet[]> {
  const accepted = [...sets].sort(compareByCreation).filter((set) => {
    const gateway = gateways.get(parentGatewayKey(set) ?? "");
    const resolved = gateway ? ctx.classes.resolve(gateway.spec?.gatewayClassName ?? "") : undefined;
    const lookup = (name: string) => ctx.cluster.namespaces.get(name);
    return gateway && resolved?.info.supportsListenerSet && acceptsListenerSetFrom(gateway, namespaceOf(set), lookup);
  });
  const eligible = accepted.map((set) => ({
    listenerSet: set,
    listeners: resolvedListeners(set).map((r) => r.listener),
  }));
  return groupBy(eligible, (e) => parentGatewayKey(e.listenerSet) ?? "");
}

/**
 * The listeners of the ListenerSets `gateway` accepts, ports defaulted (those without a port left
 * out): the ports its deployment's Service must open.
 */
export function acceptedListenerSetListeners(
  gateway: gatewayapi.Gateway,
  sets: readonly gatewayapi.ListenerSet[],
  lookup: NamespaceLookup,
): Listener[] {
  const key = `${namespaceOf(gateway)}/${nameOf(gateway)}`;
  return sets
    .filter((set) => parentGatewayKey(set) === key && acceptsListenerSetFrom(gateway, namespaceOf(set), lookup))
    .flatMap((set) => resolvedListeners(set).flatMap((r) => (r.portError ? [] : [r.listener])));
}

function notAllowed(set: gatewayapi.ListenerSet, live: ListenerSetStatus, message: string): ListenerSetStatus {
  const error: ConfigError = { reason: "NotAllowed", message };
  const status: ListenerSetStatus = { ...live };
  delete status.listeners;
  status.conditions = setConditions(set.metadata.generation, live.conditions ?? [], {
    Accepted: { reason: "Accepted", message: "", error },
    Programmed: { reason: "Programmed", message: "", error },
  });
  return status;
}

export function convertListenerSet(
  set: gatewayapi.ListenerSet,
  gateways: ReadonlyMap<string, gatewayapi.Gateway>,
  conflicts: ReadonlyMap<string, string>,
  ctx: ConversionContext,
): ListenerSetOutput {
  const gatewayKey = parentGatewayKey(set) ?? "";
  const output: ListenerSetOutput = { listenerSet: set, gatewayKey, listeners: [], servers: [] };
  const gateway = gateways.get(gatewayKey);
  const resolved: ResolvedClass | undefined = gateway
    ? ctx.classes.resolve(gateway.spec?.gatewayClassName ?? "")
    : undefined;
  if (!gateway || !resolved) return output;
  const live = (set.status ?? {}) as ListenerSetStatus;
  if (!resolved.info.supportsListenerSet) {
    output.status = notAllowed(set, live, `The "${resolved.name}" GatewayClass does not support ListenerSet`);
    return output;
  }
  if (!acceptsListenerSetFrom(gateway, namespaceOf(set), (name) => ctx.cluster.namespaces.get(name))) {
    output.status = notAllowed(
      set,
      live,
      "The parent Gateway does not allow this reference; check the 'spec.allowedRoutes'",
    );
    return output;
  }
  const { services, error: addressError } = gatewayServices(gateway, resolved.info, ctx.domainSuffix);
  const status: ListenerSetStatus = { ...live };
  if (services.length === 0 && addressError) {
    output.status = reportListenerSetStatus(set, gateway, status, services, [], addressError, true, ctx);
    return output;
  }
  const liveListeners = live.listeners ?? [];
  const listenerStatuses: ListenerStatus[] = [...liveListeners];
  let validListeners = 0;
  resolvedListeners(set).forEach(({ listener, portError }, index) => {
    const liveConditions = liveListeners[index]?.conditions ?? [];
    const conflict = conflicts.get(listener.name);
    if (conflict) {
      listenerStatuses[index] = conflictedListener(set, listener, liveConditions, conflict);
      return;
    }
    const built = buildListener(
      { obj: set, kind: "ListenerSet", gatewayTls: gateway.spec?.tls },
      listener,
      liveConditions,
      resolved.controller,
      ctx.cluster,
      ctx.grants,
      portError,
    );
    listenerStatuses[index] = built.status;
    if (!built.server) return;
    if (built.programmed) validListeners++;
    output.servers.push(built.server);
    if (!emitsConfig(resolved.controller, listener.port)) return;
    const { config, parent } = listenerConfig(set, listener, built.server, {
      [GATEWAY_SEMANTICS_ANNOTATION]: "gateway",
      [GATEWAY_SERVICE_ANNOTATION]: services.join(","),
      [PARENT_NAMESPACE_ANNOTATION]: namespaceOf(gateway),
      [SERVICE_ACCOUNT_ANNOTATION]: serviceAccountName(gateway, resolved.info),
    });
    if (built.programmed) output.listeners.push({ config, server: built.server, parent, programmed: true });
  });
  status.listeners = listenerStatuses;
  output.status = reportListenerSetStatus(
    set,
    gateway,
    status,
    services,
    output.servers,
    addressError,
    validListeners > 0,
    ctx,
  );
  return output;
}

function reportListenerSetStatus(
  set: gatewayapi.ListenerSet,
  gateway: gatewayapi.Gateway,
  status: ListenerSetStatus,
  services: readonly string[],
  servers: readonly Server[],
  gatewayError: ConfigError | undefined,
  listenersValid: boolean,
  ctx: ConversionContext,
): ListenerSetStatus {
  const instances = resolveGatewayInstances(gateway, services, servers, ctx.services);
  const conditions: Record<string, ConditionSpec> = {
    Accepted: { reason: "Accepted", message: "Resource accepted" },
    Programmed: { reason: "Programmed", message: "Resource programmed" },
  };
  const listenersError: ConfigError | undefined = listenersValid
    ? undefined
    : { reason: "ListenersNotValid", message: "None of the ListenerSet's listeners are valid" };
  if (gatewayError) {
    conditions.Accepted.error = {
      reason: gatewayError.reason,
      message: `Parent not accepted: ${gatewayError.message}`,
    };
  } else if (listenersError) {
    conditions.Accepted.error = listenersError;
  }
  applyProgrammed(conditions.Programmed, instances, services);
  if (listenersError) conditions.Programmed.error = listenersError;
  const listeners = declaredListenerStatuses(status.listeners ?? [], set.spec?.listeners ?? []);
  return {
    ...status,
    listeners,
    conditions: setConditions(set.metadata.generation, status.conditions ?? [], conditions),
  };
}
