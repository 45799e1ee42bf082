// Gateways → one Istio Gateway per programmed listener, and the Gateway's status (conditions,
// addresses, listeners; attachedRoutes is filled in once routes are known).
import { isIP } from "node:net";
import type { ConfigObject, gatewayapi } from "../config/index.ts";
import { applyProgrammed, gatewayServices, resolveGatewayInstances, serviceAccountName } from "./addresses.ts";
import { type Condition, type ConditionSpec, setConditions } from "./conditions.ts";
import { EASTWEST_CONTROLLER, type GatewayClassIndex, MESH_CONTROLLER } from "./gatewayclass.ts";
import {
  buildListener,
  conflictedListener,
  declaredListenerStatuses,
  type Listener,
  type ListenerStatus,
  type Server,
  supportedKinds,
} from "./listeners.ts";
import type { ClusterObjects, ConfigError, ParentInfo, ServiceLookup } from "./model.ts";
import { nameOf, namespaceOf } from "./model.ts";
import {
  GATEWAY_SEMANTICS_ANNOTATION,
  GATEWAY_SERVICE_ANNOTATION,
  generatedMetadata,
  internalGatewayName,
  PARENTS_ANNOTATION,
  parentName,
  SERVICE_ACCOUNT_ANNOTATION,
} from "./naming.ts";
import type { ReferenceGrants } from "./referencegrant.ts";
import { secretCredential } from "./tls.ts";

export interface ConversionContext {
  domainSuffix: string;
  classes: GatewayClassIndex;
  cluster: ClusterObjects;
  grants: ReferenceGrants;
  services: ServiceLookup;
}

/** One listener turned into an Istio Gateway, with what routes need to attach to it. */
export interface ListenerOutput {
  config: ConfigObject;
  server: Server;
  parent: ParentInfo;
  programmed: boolean;
}

export interface GatewayOutput {
  gateway: gatewayapi.Gateway;
  listeners: ListenerOutput[];
  /** Undefined when the Gateway is not Istio's. */
  status?: GatewayStatus;
}

export interface GatewayStatus {
  addresses?: { type: string; value: string }[];
  attachedListenerSets?: number;
  conditions?: Condition[];
  listeners?: ListenerStatus[];
  [key: string]: unknown;
}

/** What a ListenerSet adds to its parent Gateway: its valid listeners and servers. */
export interface AttachedListenerSet {
  listeners: readonly ListenerOutput[];
  servers: readonly Server[];
}

/** Builds the Istio Gateway for one listener server. */
export function listenerConfig(
  owner: ConfigObject,
  listener: Listener,
  server: Server,
  annotations: Record<string, string>,
): { config: ConfigObject; parent: ParentInfo } {
  const name = internalGatewayName(nameOf(owner), listener.name);
  const config: ConfigObject = {
    apiVersion: "networking.istio.io/v1",
    kind: "Gateway",
    metadata: generatedMetadata(owner, name, namespaceOf(owner), {
      [PARENTS_ANNOTATION]: parentName(owner, listener.name),
      ...annotations,
    }),
    spec: { servers: [server] },
  };
  const parent: ParentInfo = {
    internalName: `${namespaceOf(owner)}/${name}`,
    parentKind: owner.kind,
    parentNamespace: namespaceOf(owner),
    parentName: nameOf(owner),
    allowedKinds: supportedKinds(listener).kinds,
    hostnames: server.hosts,
    originalHostname: listener.hostname ?? "",
    sectionName: listener.name,
    port: listener.port,
    protocol: listener.protocol,
  };
  return { config, parent };
}

/** Whether a listener of this controller emits Istio config (waypoints and the HBONE port do not). */
export function emitsConfig(controller: string, port: number): boolean {
  if (controller === MESH_CONTROLLER) return false;
  return !(controller === EASTWEST_CONTROLLER && port === 15008);
}

export function convertGateway(
  gateway: gatewayapi.Gateway,
  ctx: ConversionContext,
  conflicts: ReadonlyMap<string, string>,
  listenerSets: readonly AttachedListenerSet[],
): GatewayOutput {
  const spec = gateway.spec;
  const resolved = spec ? ctx.classes.resolve(spec.gatewayClassName) : undefined;
  if (!spec || !resolved) return { gateway, listeners: [] };
  const live = (gateway.status ?? {}) as GatewayStatus;
  const status: GatewayStatus = { ...live };
  if (resolved.info.disableRouteGeneration) {
    status.addresses = (spec.addresses ?? []).map((a) => ({ ...a }) as { type: string; value: string });
    delete status.listeners;
    status.conditions = setConditions(gateway.metadata.generation, live.conditions ?? [], {
      Accepted: { reason: "Accepted", message: "Resource accepted" },
      Programmed: { reason: "Programmed", message: "This Gateway is remote; Istio will not program it" },
    });
    if (status.addresses.length === 0) delete status.addresses;
    return { gateway, listeners: [], status };
  }
  const { services, error: addressError } = gatewayServices(gateway, resolved.info, ctx.domainSuffix);
  if (services.length === 0 && addressError) {
    reportGatewayStatus(gateway, status, ctx, {
      addressType: resolved.info.addressType,
      services,
      servers: [],
      listenerSetCount: 0,
      gatewayError: addressError,
      validListeners: 0,
    });
    return { gateway, listeners: [], status };
  }
  const gatewayError = addressError ?? parametersRefError(gateway, ctx.cluster);
  const account = serviceAccountName(gateway, resolved.info);
  const servers: Server[] = [];
  const outputs: ListenerOutput[] = [];
  const liveListeners = live.listeners ?? [];
  const listenerStatuses: ListenerStatus[] = [...liveListeners];
  let validListeners = 0;
  spec.listeners.forEach((l, index) => {
    const liveConditions = liveListeners[index]?.conditions ?? [];
    const conflict = conflicts.get(l.name);
    if (conflict) {
      listenerStatuses[index] = conflictedListener(gateway, l, liveConditions, conflict);
      return;
    }
    const built = buildListener(
      { obj: gateway, kind: "Gateway", gatewayTls: spec.tls },
      l,
      liveConditions,
      resolved.controller,
      ctx.cluster,
      ctx.grants,
    );
    listenerStatuses[index] = built.status;
    if (built.programmed) validListeners++;
    if (!built.server) return;
    servers.push(built.server);
    if (!emitsConfig(resolved.controller, l.port)) return;
    const { config, parent } = listenerConfig(gateway, l, built.server, {
      [GATEWAY_SEMANTICS_ANNOTATION]: "gateway",
      [GATEWAY_SERVICE_ANNOTATION]: services.join(","),
      [SERVICE_ACCOUNT_ANNOTATION]: account,
    });
    outputs.push({ config, server: built.server, parent, programmed: built.programmed });
  });
  for (const set of listenerSets) {
    servers.push(...set.servers);
    outputs.push(...set.listeners);
  }
  status.listeners = listenerStatuses;
  reportGatewayStatus(gateway, status, ctx, {
    addressType: resolved.info.addressType,
    services,
    servers,
    listenerSetCount: listenerSets.length,
    gatewayError,
    validListeners,
  });
  return { gateway, listeners: outputs, status };
}

function parametersRefError(gateway: gatewayapi.Gateway, cluster: ClusterObjects): ConfigError | undefined {
  const params = gateway.spec?.infrastructure?.parametersRef;
  if (!params) return undefined;
  if (params.kind !== "ConfigMap" || params.group !== "") {
    return {
      reason: "InvalidParameters",
      message: `Unsupported parametersRef group/kind ${params.group}/${params.kind}, only ConfigMap is supported`,
    };
  }
  if (!cluster.configMaps.has(`${namespaceOf(gateway)}/${params.name}`)) {
    return {
      reason: "InvalidParameters",
      message: `parametersRef ConfigMap ${namespaceOf(gateway)}/${params.name} does not exist`,
    };
  }
  return undefined;
}

function backendTlsError(gateway: gatewayapi.Gateway, ctx: ConversionContext): ConfigError | undefined {
  const ref = gateway.spec?.tls?.backend?.clientCertificateRef;
  if (!ref) return undefined;
  const namespace = namespaceOf(gateway);
  const credential = secretCredential(
    ref,
    namespace,
    ctx.cluster,
    "clientCertificateRef",
    "InvalidClientCertificateRef",
  );
  if ("error" in credential) return credential.error;
  const credentialNamespace = ref.namespace ?? namespace;
  if (
    credentialNamespace !== namespace &&
    !ctx.grants.allowed("Gateway", namespace, "Secret", credentialNamespace, ref.name)
  ) {
    return {
      reason: "RefNotPermitted",
      message: `clientCertificateRef ${ref.name}/${credentialNamespace} not accessible to a Gateway in namespace "${namespace}" (missing a ReferenceGrant?)`,
    };
  }
  return undefined;
}

/** What the Gateway's status is computed from. */
interface GatewayFacts {
  addressType: string;
  services: readonly string[];
  servers: readonly Server[];
  listenerSetCount: number;
  gatewayError?: ConfigError;
  validListeners: number;
}

function reportGatewayStatus(
  gateway: gatewayapi.Gateway,
  status: GatewayStatus,
  ctx: ConversionContext,
  { addressType, services, servers, listenerSetCount, gatewayError, validListeners }: GatewayFacts,
): void {
  const backendError = backendTlsError(gateway, ctx);
  const spec = gateway.spec ?? { gatewayClassName: "", listeners: [] };
  const instances = resolveGatewayInstances(gateway, services, servers, ctx.services);
  const conditions: Record<string, ConditionSpec> = {
    Accepted: { reason: "Accepted", message: "Resource accepted" },
    Programmed: { reason: "Programmed", message: "Resource programmed" },
    ResolvedRefs: { reason: "ResolvedRefs", message: "All references resolved" },
  };
  const total = spec.listeners.length;
  if (gatewayError) {
    conditions.Accepted.error = gatewayError;
  } else if (total > 0 && validListeners < total) {
    if (validListeners === 0) {
      conditions.Accepted.error = { reason: "ListenersNotValid", message: "None of the Gateway's listeners are valid" };
    } else {
      conditions.Accepted = {
        reason: "ListenersNotValid",
        message: "One or more of the Gateway's listeners are invalid",
      };
    }
  }
  if (backendError) conditions.ResolvedRefs.error = backendError;
  if (listenerSetCount !== 0) status.attachedListenerSets = listenerSetCount;
  const frontend = spec.tls?.frontend;
  let liveConditions = status.conditions ?? [];
  if (frontend) {
    const insecure =
      frontend.default.validation?.mode === "AllowInsecureFallback" ||
      (frontend.perPort ?? []).some((p) => p.tls.validation?.mode === "AllowInsecureFallback");
    if (insecure) {
      conditions.InsecureFrontendValidationMode = {
        reason: "ConfigurationChanged",
        message: "Gateway is operating in AllowInsecureFallback mode for frontend validation",
      };
    } else {
      liveConditions = liveConditions.filter((c) => c.type !== "InsecureFrontendValidationMode");
    }
  }
  applyProgrammed(conditions.Programmed, instances, services);

  let addresses = instances.external;
  if (addresses.length === 0) {
    const wanted = gateway.metadata.annotations?.["networking.istio.io/address-type"] ?? addressType;
    addresses = wanted !== "Hostname" ? [...instances.internalIPs] : [];
    if (wanted !== "IPAddress") {
      for (const hostPort of instances.internal) {
        const host = hostPort.slice(0, hostPort.lastIndexOf(":"));
        if (!instances.pending.includes(host) && !addresses.includes(host)) addresses.push(host);
      }
    }
  }
  if (addresses.length > 0) {
    status.addresses = addresses.map((value) => ({ type: isIP(value) ? "IPAddress" : "Hostname", value }));
  }
  status.listeners = declaredListenerStatuses(status.listeners ?? [], spec.listeners);
  status.conditions = setConditions(gateway.metadata.generation, liveConditions, conditions);
}
