// GatewayClasses: which controller handles a class, how each Istio controller behaves, and the
// Accepted status Istio writes on the classes it owns.
import type { gatewayapi } from "../config/index.ts";
import { type Condition, setConditions } from "./conditions.ts";
import { nameOf } from "./model.ts";

export const GATEWAY_CONTROLLER = "istio.io/gateway-controller";
export const UNMANAGED_CONTROLLER = "istio.io/unmanaged-gateway";
export const MESH_CONTROLLER = "istio.io/mesh-controller";
export const EASTWEST_CONTROLLER = "istio.io/eastwest-controller";

export interface ClassInfo {
  controller: string;
  /** Address type reported when there is no external address; "" reports both IPs and hostnames. */
  addressType: "Hostname" | "IPAddress" | "";
  supportsListenerSet: boolean;
  /** Default deployment/service name is `<gateway>` rather than `<gateway>-<class>`. */
  disableNameSuffix: boolean;
  /** Only an "unmanaged" status, no Istio config. */
  disableRouteGeneration: boolean;
  /** The injection template the Gateway deployment controller renders; "" deploys nothing. */
  template: string;
  /** The deployed Service's type unless the Gateway's networking.istio.io/service-type says. */
  defaultServiceType: "LoadBalancer" | "ClusterIP" | "";
}

const CLASS_INFO_LIST: readonly ClassInfo[] = [
  {
    controller: GATEWAY_CONTROLLER,
    addressType: "Hostname",
    supportsListenerSet: true,
    disableNameSuffix: false,
    disableRouteGeneration: false,
    template: "kube-gateway",
    defaultServiceType: "LoadBalancer",
  },
  {
    controller: UNMANAGED_CONTROLLER,
    addressType: "Hostname",
    supportsListenerSet: false,
    disableNameSuffix: false,
    disableRouteGeneration: true,
    template: "",
    defaultServiceType: "",
  },
  {
    controller: MESH_CONTROLLER,
    addressType: "",
    supportsListenerSet: false,
    disableNameSuffix: true,
    disableRouteGeneration: false,
    template: "waypoint",
    defaultServiceType: "ClusterIP",
  },
  {
    controller: EASTWEST_CONTROLLER,
    addressType: "",
    supportsListenerSet: false,
    disableNameSuffix: true,
    disableRouteGeneration: false,
    template: "waypoint",
    defaultServiceType: "LoadBalancer",
  },
];
const CLASS_INFOS: ReadonlyMap<string, ClassInfo> = new Map(CLASS_INFO_LIST.map((info) => [info.controller, info]));

/** Class names that resolve even without a GatewayClass object. */
export const BUILTIN_CLASSES: ReadonlyMap<string, string> = new Map([
  ["istio", GATEWAY_CONTROLLER],
  ["istio-remote", UNMANAGED_CONTROLLER],
  ["istio-waypoint", MESH_CONTROLLER],
  ["istio-east-west", EASTWEST_CONTROLLER],
]);

export interface ResolvedClass {
  name: string;
  controller: string;
  info: ClassInfo;
}

/** Class name → controller, for the classes Istio handles (objects first, then the built-in table). */
export class GatewayClassIndex {
  private readonly controllers = new Map<string, string>();

  constructor(classes: readonly gatewayapi.GatewayClass[]) {
    for (const gc of classes) {
      const controller = gc.spec?.controllerName ?? "";
      if (CLASS_INFOS.has(controller)) this.controllers.set(nameOf(gc), controller);
    }
  }

  resolve(className: string): ResolvedClass | undefined {
    // A class object of a foreign controller is not ours, so the built-in of that name still applies.
    const controller = this.controllers.get(className) ?? BUILTIN_CLASSES.get(className);
    const info = controller === undefined ? undefined : CLASS_INFOS.get(controller);
    return info && controller ? { name: className, controller, info } : undefined;
  }
}

/** The status of a GatewayClass Istio handles; undefined for other controllers' classes. */
export function gatewayClassStatus(gc: gatewayapi.GatewayClass): Record<string, unknown> | undefined {
  if (!CLASS_INFOS.has(gc.spec?.controllerName ?? "")) return undefined;
  const live = (gc.status ?? {}) as { conditions?: Condition[] };
  const conditions = setConditions(gc.metadata.generation, live.conditions ?? [], {
    Accepted: { reason: "Accepted", message: "Handled by Istio controller" },
  });
  return { ...live, conditions };
}
