// ServiceEntry webhook validation (validation-rules.md §7), in Istio's order.
import { autoAllocatesAddresses } from "../autoallocate.ts";
import type { ConfigObject } from "../model.ts";
import {
  asNumber,
  asObject,
  asStringMap,
  emptySelectorWarning,
  field,
  forEachMessage,
  fqdnError,
  goQuote,
  isHttpProtocol,
  isIpAddress,
  isTcpBasedProtocol,
  isTlsProtocol,
  type JsonObject,
  listField,
  mapEntries,
  numberField,
  objectField,
  parseProtocol,
  partialWildcardError,
  readEnum,
  SERVICE_ENTRY_LOCATION,
  SERVICE_ENTRY_RESOLUTION,
  stringField,
  stringListField,
  validateExportTo,
  validateIpSubnet,
  validateLabels,
  validateLabelsSelector,
  validatePort,
  validatePortName,
  validateProtocol,
  validateWildcardDomain,
} from "./common/index.ts";
import type { Findings, SemanticValidator } from "./findings.ts";
import { validateWorkloadEntryFields } from "./workloadentry.ts";

// Istio's PILOT_ENABLE_IP_AUTOALLOCATE; Sluice keeps Istio's default (on).
const IP_AUTOALLOCATE_ENABLED = true;
const USE_WAYPOINT_LABEL = "istio.io/use-waypoint";

export const validateServiceEntry: SemanticValidator = (obj: ConfigObject, _ctx, out: Findings) => {
  const spec = asObject(obj.spec) ?? {};
  const selector = validateLabelsSelector(field(spec, "workloadSelector"), out.at("workloadSelector"));
  if (!selector.ok) return;
  if (selector.empty) out.at("workloadSelector").warn(emptySelectorWarning("service entry"));
  const endpoints = listField(spec, "endpoints") ?? [];
  if (objectField(spec, "workloadSelector") && endpoints.length > 0) {
    out.error("only one of WorkloadSelector or Endpoints is allowed in Service Entry");
  }
  const resolution = readEnum(field(spec, "resolution"), SERVICE_ENTRY_RESOLUTION, out.at("resolution"));
  const location = readEnum(field(spec, "location"), SERVICE_ENTRY_LOCATION, out.at("location"));
  // Istio's decoder rejects the whole object on an unknown enum, so nothing else is checked.
  if (resolution === undefined || location === undefined) return;

  const hosts = stringListField(spec, "hosts");
  if (hosts.length === 0) out.at("hosts").error("service entry must have at least one host");
  hosts.forEach((host, i) => {
    const at = out.at("hosts", i);
    if (host === "*") {
      at.error(`invalid host ${host}`);
      return;
    }
    validateWildcardDomain(host, at);
    const partial = partialWildcardError(host);
    if (resolution !== "DYNAMIC_DNS" && partial) at.warn(partial);
  });

  const addresses = stringListField(spec, "addresses");
  addresses.forEach((address, i) => {
    validateIpSubnet(address, out.at("addresses", i));
  });
  if (addresses.some((a) => a.includes("/")) && resolution !== "NONE" && resolution !== "STATIC") {
    out.at("addresses").error("CIDR addresses are allowed only for NONE/STATIC resolution types");
  }

  const ports = listField(spec, "ports") ?? [];
  const portNames = validatePorts(obj, spec, resolution, ports, out.at("ports"));

  switch (resolution) {
    case "NONE":
      if (endpoints.length > 0) out.at("endpoints").error("no endpoints should be provided for resolution type none");
      if (objectField(spec, "workloadSelector")) {
        out.at("workloadSelector").warn("workloadSelector should not be set when resolution mode is NONE");
      }
      break;
    case "STATIC":
      endpoints.forEach((endpoint, i) => {
        const entry = asObject(endpoint);
        if (!entry) out.at("endpoints", i).error("endpoint cannot be nil");
        else
          validateWorkloadEntryFields(
            entry,
            { servicePorts: portNames, allowFqdnAddress: false },
            out.at("endpoints", i),
          );
      });
      break;
    case "DNS":
    case "DNS_ROUND_ROBIN":
      validateDnsResolution(resolution, hosts, addresses, endpoints, ports, portNames, out);
      break;
    case "DYNAMIC_DNS":
      validateDynamicDns(obj, resolution, location, hosts, addresses, endpoints, ports, out);
      break;
    default:
      // Only a number outside the enum gets here; Go prints its (missing) name as "".
      out.at("resolution").error("unsupported resolution type ");
  }

  // Plain TCP cannot tell several hosts apart, unless the hosts are ignored (NONE).
  if (resolution !== "NONE" && hosts.length > 1) {
    for (const [i, port] of ports.entries()) {
      const p = asObject(port);
      if (!p) {
        out.at("ports", i).error("ports cannot be nil");
        continue;
      }
      const protocol = stringField(p, "protocol");
      if (!isHttpProtocol(protocol) && !isTlsProtocol(protocol)) {
        out.at("ports", i).error("multiple hosts provided with non-HTTP, non-TLS ports");
        break;
      }
    }
  }

  validateExportTo(
    obj.metadata.namespace ?? "",
    stringListField(spec, "exportTo"),
    { serviceEntry: true },
    out.at("exportTo"),
  );
};

// Port entries: unique names and numbers, name/protocol/number rules. Returns the declared port names.
function validatePorts(
  obj: ConfigObject,
  spec: JsonObject,
  resolution: string,
  ports: unknown[],
  out: Findings,
): Set<string> {
  const names = new Set<string>();
  const numbers = new Set<number>();
  const addresses = stringListField(spec, "addresses");
  const hasAddresses = addresses.length > 0;
  const autoAllocate =
    IP_AUTOALLOCATE_ENABLED && autoAllocatesAddresses(obj.metadata.labels, { resolution, addresses });
  forEachMessage(ports, out, "service entry port may not be null", (port, at) => {
    const name = stringField(port, "name");
    const number = numberField(port, "number");
    const protocol = stringField(port, "protocol");
    if (names.has(name)) at.at("name").error(`service entry port name ${goQuote(name)} already defined`);
    names.add(name);
    if (numbers.has(number)) at.at("number").error(`service entry port ${number} already defined`);
    numbers.add(number);
    if (numberField(port, "targetPort") !== 0) validatePort(numberField(port, "targetPort"), at.at("targetPort"));
    if (!hasAddresses && !autoAllocate && (protocol === "" || protocol === "TCP")) {
      at.warn("addresses are required for ports serving TCP (or unset) protocol when IP Autoallocation is not enabled");
    }
    validatePortName(name, at.at("name"));
    validateProtocol(protocol, at.at("protocol"));
    validatePort(number, at.at("number"));
  });
  return names;
}

function validateDnsResolution(
  resolution: string,
  hosts: string[],
  addresses: string[],
  endpoints: unknown[],
  ports: unknown[],
  portNames: ReadonlySet<string>,
  out: Findings,
): void {
  if (endpoints.length === 0) {
    for (const [i, host] of hosts.entries()) {
      const error = fqdnError(host);
      if (error) {
        out
          .at("hosts", i)
          .error(
            `hosts must be FQDN or contain only prefix wildcards if no endpoints are provided for resolution mode ${resolution}, ${error}`,
          );
        break;
      }
    }
  }
  if (resolution === "DNS_ROUND_ROBIN" && endpoints.length > 1) {
    out.at("endpoints").error(`there must only be 0 or 1 endpoint for resolution mode ${resolution}`);
  }
  forEachMessage(endpoints, out.at("endpoints"), "endpoint cannot be nil", (endpoint, at) => {
    const address = stringField(endpoint, "address");
    if (!isIpAddress(address) && fqdnError(address)) {
      at.at("address").error(`endpoint address ${goQuote(address)} is not a valid FQDN or an IP address`);
    }
    validateLabels(asStringMap(field(endpoint, "labels")) ?? {}, at.at("labels"));
    for (const [name, port] of mapEntries(endpoint, "ports")) {
      const portAt = at.at(`ports.${name}`);
      if (!portNames.has(name)) portAt.error(`endpoint port ${asNumber(port)} is not defined by the service entry`);
      validatePortName(name, portAt);
      validatePort(asNumber(port), portAt);
    }
  });
  if (addresses.length > 0) {
    for (const [i, entry] of ports.entries()) {
      const port = asObject(entry);
      if (!port) {
        out.at("ports", i).error("ports cannot be nil");
        continue;
      }
      if (isTcpBasedProtocol(stringField(port, "protocol"))) {
        if (hosts.length > 1) {
          out.warn("service entry can not have more than one host specified simultaneously with address and tcp port");
        }
        break;
      }
    }
  }
}

function validateDynamicDns(
  obj: ConfigObject,
  resolution: string,
  location: string,
  hosts: string[],
  addresses: string[],
  endpoints: unknown[],
  ports: unknown[],
  out: Findings,
): void {
  if (hosts.length === 0) {
    out.at("hosts").error(`at least one wildcard host must be provided for resolution type ${resolution}`);
  }
  hosts.forEach((host, i) => {
    if (!host.startsWith("*")) out.at("hosts", i).error(`host must be wildcarded for resolution mode ${resolution}`);
  });
  if (addresses.length > 0) {
    out
      .at("addresses")
      .error(
        `addresses cannot be set for resolution type ${resolution}. HTTP route domains will only be generatedfrom the hosts field values`,
      );
  }
  if (endpoints.length > 0) {
    out
      .at("endpoints")
      .error(
        `endpoints cannot be set for resolution type ${resolution}. Destination IP address determined from hostsfield values`,
      );
  }
  ports.forEach((entry, i) => {
    const port = asObject(entry);
    if (!port) {
      out.at("ports", i).error("port cannot be nil");
      return;
    }
    const protocol = parseProtocol(stringField(port, "protocol"));
    if (protocol !== "HTTP" && protocol !== "TLS" && protocol !== "GRPC" && protocol !== "HTTP2") {
      out
        .at("ports", i)
        .error(`only HTTP, TLS, GRPC, and HTTP2 protocols are supported for resolution type ${resolution}`);
    }
  });
  if (location !== "MESH_EXTERNAL" && location !== "MESH_INTERNAL") {
    out.at("location").error(`location must be MESH_EXTERNAL or MESH_INTERNAL for resolution type ${resolution}`);
  }
  const waypoint = obj.metadata.labels?.[USE_WAYPOINT_LABEL] ?? "";
  if (location === "MESH_INTERNAL" && waypoint !== "" && waypoint.toLowerCase() !== "none") {
    out
      .at("location")
      .error(`location MESH_INTERNAL with resolution type ${resolution} is not supported when using waypoints`);
  }
}
