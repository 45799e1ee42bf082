// Istio's VirtualService webhook validation (validation-rules.md §4), in Istio's order: delegate
// rules, gateways, JWT-claim routing, hosts, duplicate hosts, HTTP/TLS/TCP routes, exportTo, and
// the unreachable-rule warnings.

import { hostSubsetOf, hostsMatch } from "../../util/index.ts";
import {
  asObject,
  asStringMap,
  field,
  forEachMessage,
  gatewayBoundVirtualServiceHostError,
  goQuote,
  ipSubnetError,
  isIpAddress,
  isJwtClaimHeader,
  type JsonObject,
  listField,
  mapEntries,
  numberField,
  portError,
  report,
  stringListField,
  validateExportTo,
  validateGatewayNames,
  validateLabels,
  wildcardDomainError,
} from "./common/index.ts";
import type { Findings, SemanticValidator } from "./findings.ts";
import { validateHttpRoute, validateRouteDestinations } from "./virtualservice-http.ts";
import { findUnreachableRules, unreachableRuleMessage } from "./virtualservice-unreachable.ts";

const ROUTE_SEMANTICS = "internal.istio.io/route-semantics";
const MESH_GATEWAY = "mesh";

/** What a VirtualService's hosts and gateways decide for the checks of its parts. */
interface VsContext {
  hosts: string[];
  gateways: string[];
  /** Gateway API derived routes: gateway names and destinations are not checked. */
  gatewaySemantics: boolean;
}

export const validateVirtualService: SemanticValidator = (obj, _ctx, out) => {
  const spec = asObject(obj.spec) ?? {};
  const vs: VsContext = {
    hosts: stringListField(spec, "hosts"),
    gateways: stringListField(spec, "gateways"),
    gatewaySemantics: obj.metadata.annotations?.[ROUTE_SEMANTICS] === "gateway",
  };
  const http = listField(spec, "http") ?? [];
  const tls = listField(spec, "tls") ?? [];
  const tcp = listField(spec, "tcp") ?? [];

  if (vs.hosts.length === 0) {
    if (vs.gateways.length > 0) out.at("gateways").error("delegate virtual service must have no gateways specified");
    if (tls.length > 0) out.at("tls").error("delegate virtual service must have no tls route specified");
    if (tcp.length > 0) out.at("tcp").error("delegate virtual service must have no tcp route specified");
  }

  let appliesToGateway = false;
  if (vs.gateways.length > 0) {
    validateGatewayNames(vs.gateways, vs.gatewaySemantics, out.at("gateways"));
    appliesToGateway = !vs.gateways.includes(MESH_GATEWAY);
  }
  if (!appliesToGateway) checkJwtClaimRoutes(http, vs.gateways, out);
  validateHosts(vs, appliesToGateway, isSniBound(tls), out);

  if (http.length === 0 && tcp.length === 0 && tls.length === 0) {
    out.error("http, tcp or tls must be provided in virtual service");
  }
  http.forEach((value, i) => {
    const route = asObject(value);
    if (route) validateHttpRoute(route, vs.hosts.length === 0, vs.gatewaySemantics, out.at("http", i));
    else out.at("http", i).error("http route may not be null");
  });
  tls.forEach((value, i) => {
    const route = asObject(value);
    if (route) validateTlsRoute(route, vs, out.at("tls", i));
  });
  tcp.forEach((value, i) => {
    const route = asObject(value);
    if (route) validateTcpRoute(route, vs, out.at("tcp", i));
  });

  validateExportTo(obj.metadata.namespace ?? "", stringListField(spec, "exportTo"), {}, out.at("exportTo"));

  const unreachable = [
    ...findUnreachableRules("http", http),
    ...findUnreachableRules("tcp", tcp),
    ...findUnreachableRules("tls", tls),
  ];
  for (const rule of unreachable) out.at(rule.path).warn(unreachableRuleMessage(rule));
};

// Routing on JWT claims needs the gateway's authentication filter, so mesh-bound routes cannot use it.
function checkJwtClaimRoutes(http: unknown[], gateways: string[], out: Findings): void {
  http.forEach((route, i) => {
    (listField(asObject(route) ?? {}, "match") ?? []).forEach((value, j) => {
      const match = asObject(value) ?? {};
      for (const section of ["headers", "withoutHeaders"]) {
        for (const [key] of mapEntries(match, section)) {
          if (!isJwtClaimHeader(key)) continue;
          out
            .at("http", i)
            .at("match", j)
            .at(section)
            .at(key)
            .error(
              `JWT claim based routing (key: ${key}) is only supported for gateway, found no gateways: [${gateways.join(" ")}]`,
            );
        }
      }
    });
  });
}

/** Whether any TLS match names SNI hosts: then gateway-bound hosts may use the `outbound_` SNI form. */
function isSniBound(tls: unknown[]): boolean {
  return tls.some((route) =>
    (listField(asObject(route) ?? {}, "match") ?? []).some(
      (match) => (listField(asObject(match) ?? {}, "sniHosts") ?? []).length > 0,
    ),
  );
}

function validateHosts(vs: VsContext, appliesToGateway: boolean, sni: boolean, out: Findings): void {
  let allValid = true;
  vs.hosts.forEach((host, i) => {
    const at = out.at("hosts", i);
    const error = appliesToGateway ? gatewayBoundVirtualServiceHostError(sni, host) : wildcardDomainError(host);
    if (error) {
      // An IP address is an acceptable host even though it is not a domain name.
      if (!isIpAddress(host)) {
        at.error(error);
        allValid = false;
      }
    } else if (!appliesToGateway && host === "*") {
      at.error("wildcard host * is not allowed for virtual services bound to the mesh gateway");
      allValid = false;
    }
  });
  if (!allValid) return;
  vs.hosts.forEach((a, i) => {
    vs.hosts.slice(i + 1).forEach((b, k) => {
      if (hostsMatch(a, b)) out.at("hosts", i + 1 + k).error(`duplicate hosts in virtual service: ${a} & ${b}`);
    });
  });
}

/** The L4 match fields TLS and TCP matches share. `out` is positioned at the match. */
function validateL4Match(match: JsonObject, out: Findings): void {
  stringListField(match, "destinationSubnets").forEach((subnet, i) => {
    report(out.at("destinationSubnets", i), ipSubnetError(subnet));
  });
  const port = numberField(match, "port");
  if (port !== 0) report(out.at("port"), portError(port));
  validateLabels(asStringMap(field(match, "sourceLabels")) ?? {}, out.at("sourceLabels"));
  validateGatewayNames(stringListField(match, "gateways"), false, out.at("gateways"));
}

function validateTlsRoute(route: JsonObject, vs: VsContext, out: Findings): void {
  const matches = listField(route, "match");
  if (!matches) out.error("TLS route must have at least one match condition");
  forEachMessage(matches, out.at("match"), "TLS match may not be null", (match, at) => {
    const sniHosts = stringListField(match, "sniHosts");
    if (sniHosts.length === 0) at.error("TLS match must have at least one SNI host");
    sniHosts.forEach((sni, j) => {
      validateSniHost(sni, vs, at.at("sniHosts", j));
    });
    validateL4Match(match, at);
  });
  const destinations = listField(route, "route");
  if (!destinations) out.error("TLS route is required");
  validateRouteDestinations(destinations ?? [], "tls", vs.gatewaySemantics, out.at("route"));
}

// Istio treats SNI hosts as gateway-bound unless `mesh` is listed, even when no gateway is (§4.2).
function validateSniHost(sni: string, vs: VsContext, out: Findings): void {
  const error = vs.gateways.includes(MESH_GATEWAY)
    ? wildcardDomainError(sni)
    : gatewayBoundVirtualServiceHostError(true, sni);
  if (error) {
    if (isIpAddress(sni)) {
      out.warn(`using an IP address (${goQuote(sni)}) goes against SNI spec and most clients do not support this`);
    } else {
      out.error(error);
    }
    return;
  }
  if (!vs.hosts.some((host) => hostSubsetOf(sni, host))) {
    out.error(
      `SNI host ${goQuote(sni)} is not a compatible subset of any of the virtual service hosts: [${vs.hosts.join(", ")}]`,
    );
  }
}

function validateTcpRoute(route: JsonObject, vs: VsContext, out: Findings): void {
  (listField(route, "match") ?? []).forEach((value, i) => {
    const match = asObject(value);
    if (match) validateL4Match(match, out.at("match", i));
    else out.at("match", i).error("tcp match may not be nil");
  });
  const destinations = listField(route, "route");
  if (!destinations) out.error("TCP route is required");
  validateRouteDestinations(destinations ?? [], "tcp", vs.gatewaySemantics, out.at("route"));
}
