// Gateway API → Istio config and statuses, in Istio's stages (Gateways, each route, the assembly):
// convertResources(objects, settings, services) → { config, statuses }. live.ts runs the same
// stages as krt collections.
import { isDeepStrictEqual } from "node:util";
import type { ConfigObject } from "../config/index.ts";
import { isKind } from "../config/typed.ts";
import type { KindObjects } from "../config/types/kind-objects.gen.ts";
import { convertBackendTLSPolicy, type PolicyOutput } from "./backendtls.ts";
import { convertBackendTrafficPolicy } from "./backendtraffic.ts";
import { stampTransitionTimes } from "./conditions.ts";
import { type AncestorIndex, destinationRules, routeAncestors } from "./destinationrule.ts";
import { type AttachedListenerSet, type ConversionContext, convertGateway, type GatewayOutput } from "./gateway.ts";
import { GatewayClassIndex, gatewayClassStatus } from "./gatewayclass.ts";
import { convertGRPCRoute } from "./grpcroute.ts";
import { type ConvertedRoute, convertHTTPRoute } from "./httproute.ts";
import { inferencePoolStatus } from "./inferencepool.ts";
import { type ListenerStatus, listenerConflicts } from "./listeners.ts";
import { convertListenerSet, eligibleListenerSets, type ListenerSetOutput, parentGatewayKey } from "./listenerset.ts";
import type { ClusterObjects, ConversionSettings, ServiceLookup } from "./model.ts";
import { clusterObjects, GATEWAY_GROUP, groupBy, nameOf, namespaceOf, objectKey } from "./model.ts";
import type { ParentIndex } from "./parents.ts";
import { ReferenceGrants } from "./referencegrant.ts";
import type { RouteContext } from "./routes.ts";
import { convertTCPRoute } from "./tcproute.ts";
import { convertTLSRoute } from "./tlsroute.ts";
import { compareByCreation, type KeyedVirtualService, mergeVirtualServices } from "./virtualservice.ts";
import { convertXBackend } from "./xbackend.ts";

export interface ConversionResult {
  /** Istio Gateways, then VirtualServices, then DestinationRules, each in creation order. */
  config: ConfigObject[];
  /** One document per object whose status changes, in Istio's status order. */
  statuses: ConfigObject[];
}

/** The Gateway API kinds the kinds registry types (KindObjects), by kind name. */
type GatewayApiKind = {
  [Key in keyof KindObjects]: Key extends `${typeof GATEWAY_GROUP}/${infer Kind}` ? Kind : never;
}[keyof KindObjects];

/** The objects of one kind; a Gateway API kind's come typed (the store admitted them against its schema). */
function byKind<K extends GatewayApiKind>(
  objects: readonly ConfigObject[],
  kind: K,
): KindObjects[`${typeof GATEWAY_GROUP}/${K}`][];
function byKind(objects: readonly ConfigObject[], kind: string): ConfigObject[];
function byKind(objects: readonly ConfigObject[], kind: string): ConfigObject[] {
  return objects.filter((o) => o.kind === kind);
}

// Status documents are written in this kind order; unlisted kinds come first.
const STATUS_KIND_RANK: Record<string, number> = {
  GatewayClass: 0,
  Gateway: 1,
  HTTPRoute: 2,
  GRPCRoute: 3,
  TLSRoute: 4,
  TCPRoute: 5,
};

function statusApiVersion(kind: string): string {
  if (kind.startsWith("X")) return "gateway.networking.x-k8s.io/v1alpha1";
  if (kind === "InferencePool") return "inference.networking.k8s.io/v1";
  return "gateway.networking.k8s.io/v1";
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// JSON drops undefined fields, so a computed status compares like one read from YAML.
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value ?? {})) as T;
}

function statusDocument(obj: ConfigObject, status: unknown): ConfigObject | undefined {
  const computed = plain(status);
  // An object without a status gets one written, even an empty one.
  if (obj.status !== undefined && isDeepStrictEqual(computed, plain(obj.status))) return undefined;
  const metadata: ConfigObject["metadata"] = { name: nameOf(obj) };
  if (obj.metadata.namespace) metadata.namespace = obj.metadata.namespace;
  return { apiVersion: statusApiVersion(obj.kind), kind: obj.kind, metadata, spec: null, status: computed };
}

function sortStatuses(docs: ConfigObject[]): ConfigObject[] {
  return docs.sort(
    (a, b) =>
      (STATUS_KIND_RANK[a.kind] ?? -1) - (STATUS_KIND_RANK[b.kind] ?? -1) ||
      compareText(namespaceOf(a), namespaceOf(b)) ||
      compareText(nameOf(a), nameOf(b)),
  );
}

/** Fills in attachedRoutes from the listeners routes attached to ("<Kind>/<ns>/<name>/<listener>"). */
function withAttachedRoutes(
  kind: string,
  obj: ConfigObject,
  status: { listeners?: ListenerStatus[] },
  counts: ReadonlyMap<string, number>,
): void {
  status.listeners = status.listeners?.map((l) => ({
    ...l,
    attachedRoutes: counts.get(`${kind}/${namespaceOf(obj)}/${nameOf(obj)}/${l.name}`) ?? 0,
  }));
  if (status.listeners?.length === 0) delete status.listeners;
}

export interface GatewayStage {
  gateways: GatewayOutput[];
  listenerSets: ListenerSetOutput[];
}

/** Gateways and ListenerSets: their Istio Gateways, listeners for routes, and statuses (before route counts). */
function convertGateways(objects: readonly ConfigObject[], ctx: ConversionContext): GatewayStage {
  const gateways = byKind(objects, "Gateway");
  const gatewaysByKey = new Map(gateways.map((g) => [objectKey(g), g]));
  const listenerSets = byKind(objects, "ListenerSet");
  const eligible = eligibleListenerSets(listenerSets, gatewaysByKey, ctx);
  const conflicts = new Map(
    gateways.map((gateway) => {
      const key = objectKey(gateway);
      // Only controllers that support ListenerSets check listeners for conflicts.
      if (!ctx.classes.resolve(gateway.spec?.gatewayClassName ?? "")?.info.supportsListenerSet) return [key, new Map()];
      const owners = [
        { ownerKind: "Gateway" as const, ownerKey: key, listeners: gateway.spec?.listeners ?? [] },
        ...(eligible.get(key) ?? []).map((set) => ({
          ownerKind: "ListenerSet" as const,
          ownerKey: objectKey(set.listenerSet),
          listeners: set.listeners,
        })),
      ];
      return [key, listenerConflicts(owners)];
    }),
  );
  const conflictsOf = (gatewayKey: string, owner: string) =>
    conflicts.get(gatewayKey)?.get(owner) ?? new Map<string, string>();
  const setOutputs = listenerSets.map((set) => {
    const gatewayKey = parentGatewayKey(set) ?? "";
    return convertListenerSet(set, gatewaysByKey, conflictsOf(gatewayKey, `ListenerSet/${objectKey(set)}`), ctx);
  });
  const setsByGateway = groupBy(
    setOutputs.filter((s) => s.listeners.length > 0),
    (s) => s.gatewayKey,
  );
  const gatewayOutputs = gateways.map((gateway) => {
    const key = objectKey(gateway);
    const attached: AttachedListenerSet[] = (setsByGateway.get(key) ?? []).map((s) => ({
      listeners: s.listeners,
      servers: s.listeners.map((l) => l.server),
    }));
    return convertGateway(gateway, ctx, conflictsOf(key, `Gateway/${key}`), attached);
  });
  return { gateways: gatewayOutputs, listenerSets: setOutputs };
}

/** Listeners routes can attach to, by the object they reference ("<Kind>/<ns>/<name>"), in name order. */
function parentIndex(stage: GatewayStage): ParentIndex {
  const parents = groupBy(
    stage.gateways.flatMap((g) => g.listeners.map((l) => l.parent)),
    (parent) => `${parent.parentKind}/${parent.parentNamespace}/${parent.parentName}`,
  );
  for (const list of parents.values()) list.sort((a, b) => compareText(a.internalName, b.internalName));
  return parents;
}

export const ROUTE_KINDS = ["HTTPRoute", "GRPCRoute", "TCPRoute", "TLSRoute"] as const;

function convertRoute(route: ConfigObject, ctx: RouteContext): ConvertedRoute {
  if (isKind(route, `${GATEWAY_GROUP}/HTTPRoute`)) return convertHTTPRoute(route, ctx);
  if (isKind(route, `${GATEWAY_GROUP}/GRPCRoute`)) return convertGRPCRoute(route, ctx);
  if (isKind(route, `${GATEWAY_GROUP}/TCPRoute`)) return convertTCPRoute(route, ctx);
  if (isKind(route, `${GATEWAY_GROUP}/TLSRoute`)) return convertTLSRoute(route, ctx);
  throw new Error(`${route.kind} ${namespaceOf(route)}/${nameOf(route)}: not a Gateway API route`);
}

interface RouteStage {
  virtualServices: ConfigObject[];
  statuses: [ConfigObject, unknown][];
  /** Routes per "<Kind>/<ns>/<name>/<listener>". */
  attachedRoutes: Map<string, number>;
}

/** Every converted route: merged HTTP VirtualServices, L4 VirtualServices, statuses and listener attachments. */
function collectRoutes(routes: readonly ConvertedRouteOf[]): RouteStage {
  const stage: RouteStage = { virtualServices: [], statuses: [], attachedRoutes: new Map() };
  const keyed: KeyedVirtualService[] = [];
  for (const { route, converted } of routes) {
    keyed.push(...converted.keyedVirtualServices);
    stage.virtualServices.push(...converted.virtualServices);
    for (const key of converted.attachments) stage.attachedRoutes.set(key, (stage.attachedRoutes.get(key) ?? 0) + 1);
    stage.statuses.push([route, converted.status]);
  }
  stage.virtualServices = [...mergeVirtualServices(keyed), ...stage.virtualServices].sort(compareByCreation);
  return stage;
}

/** BackendTLSPolicies, XBackendTrafficPolicies and XBackends: their DestinationRule settings and statuses. */
function convertBackendPolicies(
  objects: readonly ConfigObject[],
  cluster: ClusterObjects,
  ancestors: AncestorIndex,
  settings: ConversionSettings,
): [ConfigObject, PolicyOutput][] {
  const tlsPolicies = byKind(objects, "BackendTLSPolicy");
  // Without the alpha API the X* kinds are not read at all: no config, no status.
  const alpha = (kind: string) => (settings.alphaGatewayApi ? byKind(objects, kind) : []);
  return [
    ...alpha("XBackendTrafficPolicy").map((p): [ConfigObject, PolicyOutput] => [
      p,
      convertBackendTrafficPolicy(p, cluster, settings.domainSuffix),
    ]),
    ...tlsPolicies.map((p): [ConfigObject, PolicyOutput] => [
      p,
      convertBackendTLSPolicy(p, tlsPolicies, cluster, ancestors, settings.domainSuffix),
    ]),
    ...alpha("XBackend").map((b): [ConfigObject, PolicyOutput] => [b, convertXBackend(b, cluster, ancestors)]),
  ];
}

/** Cluster objects looked up elsewhere than in the objects given (the live conversion fetches them by key). */
export type ClusterLookups = Partial<ClusterObjects>;

/** What every stage reads besides the objects it is given. */
export interface StageInputs {
  settings: ConversionSettings;
  services: ServiceLookup;
  lookups?: ClusterLookups;
}

function clusterOf(objects: readonly ConfigObject[], lookups: ClusterLookups = {}): ClusterObjects {
  return { ...clusterObjects(objects), ...lookups };
}

function referenceGrants(objects: readonly ConfigObject[]): ReferenceGrants {
  return new ReferenceGrants(byKind(objects, "ReferenceGrant"));
}

/** Gateways and ListenerSets converted (statuses before route counts), and the listeners routes attach to. */
export interface GatewayStageOutput extends GatewayStage {
  parents: ParentIndex;
}

/**
 * Stage 1: the GatewayClasses, Gateways and ListenerSets among `objects` (with the ReferenceGrants their
 * certificate references need) become Istio Gateways, their statuses, and the listeners routes attach to.
 */
export function convertGatewayStage(objects: readonly ConfigObject[], inputs: StageInputs): GatewayStageOutput {
  const ctx: ConversionContext = {
    domainSuffix: inputs.settings.domainSuffix,
    classes: new GatewayClassIndex(byKind(objects, "GatewayClass")),
    cluster: clusterOf(objects, inputs.lookups),
    grants: referenceGrants(objects),
    services: inputs.services,
  };
  const stage = convertGateways(objects, ctx);
  return { ...stage, parents: parentIndex(stage) };
}

/** Stage 2's context: the listeners of stage 1, and the ReferenceGrants (and other cluster objects) among `objects`. */
export function routeContext(
  objects: readonly ConfigObject[],
  parents: ParentIndex,
  inputs: StageInputs,
): RouteContext {
  const { settings, services, lookups } = inputs;
  return { settings, cluster: clusterOf(objects, lookups), grants: referenceGrants(objects), services, parents };
}

/** Stage 2, route by route: each route's VirtualServices, status and listener attachments. */
export { convertRoute };

export interface ConvertedRouteOf {
  route: ConfigObject;
  converted: ConvertedRoute;
}

/**
 * Stage 3: the routes merged, the Gateways' route counts, the backend policies among `objects` (with the
 * GatewayClasses and InferencePools), and every status document that changes.
 */
export function assembleConversion(
  objects: readonly ConfigObject[],
  gatewayStage: GatewayStage,
  routes: readonly ConvertedRouteOf[],
  inputs: StageInputs,
): ConversionResult {
  const { settings } = inputs;
  const cluster = clusterOf(objects, inputs.lookups);
  const routeObjects = routes.map((r) => r.route);
  const routeStage = collectRoutes(routes);
  const policies = convertBackendPolicies(objects, cluster, routeAncestors(routeObjects), settings);

  const statuses: [ConfigObject, unknown][] = [];
  for (const gc of byKind(objects, "GatewayClass")) {
    const status = gatewayClassStatus(gc);
    if (status) statuses.push([gc, status]);
  }
  statuses.push(...routeStage.statuses);
  for (const { gateway, status } of gatewayStage.gateways) {
    if (!status) continue;
    const counted = structuredClone(status);
    withAttachedRoutes("Gateway", gateway, counted, routeStage.attachedRoutes);
    statuses.push([gateway, counted]);
  }
  for (const { listenerSet, status } of gatewayStage.listenerSets) {
    if (!status) continue;
    const counted = structuredClone(status);
    withAttachedRoutes("ListenerSet", listenerSet, counted, routeStage.attachedRoutes);
    statuses.push([listenerSet, counted]);
  }
  for (const pool of byKind(objects, "InferencePool")) {
    statuses.push([pool, inferencePoolStatus(pool, byKind(routeObjects, "HTTPRoute"), cluster)]);
  }
  statuses.push(...policies.map(([obj, output]): [ConfigObject, unknown] => [obj, output.status]));

  const istioGateways = gatewayStage.gateways
    .flatMap((g) => g.listeners)
    .filter((l) => l.programmed)
    .map((l) => l.config);
  const config = [
    ...istioGateways.sort(compareByCreation),
    ...routeStage.virtualServices,
    ...destinationRules(
      policies.flatMap(([, output]) => output.policies),
      cluster,
    ),
  ];
  const now = settings.now ?? new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const documents = statuses.flatMap(([obj, status]) => statusDocument(obj, status) ?? []);
  return { config: plain(config), statuses: stampTransitionTimes(sortStatuses(documents), now) };
}

export function convertResources(
  objects: readonly ConfigObject[],
  settings: ConversionSettings,
  services: ServiceLookup,
): ConversionResult {
  const inputs: StageInputs = { settings, services };
  const gatewayStage = convertGatewayStage(objects, inputs);
  const ctx = routeContext(objects, gatewayStage.parents, inputs);
  const routes = ROUTE_KINDS.flatMap((kind) => byKind(objects, kind)).map((route) => ({
    route,
    converted: convertRoute(route, ctx),
  }));
  return assembleConversion(objects, gatewayStage, routes, inputs);
}
