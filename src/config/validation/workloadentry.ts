// WorkloadEntry webhook validation (validation-rules.md §9); ServiceEntry endpoints reuse it.
import type { ConfigObject } from "../model.ts";
import {
  asNumber,
  asObject,
  asStringMap,
  field,
  fqdnError,
  goQuote,
  isIpAddress,
  type JsonObject,
  mapEntries,
  stringField,
  UNIX_PREFIX,
  validateLabels,
  validatePort,
  validatePortName,
  validateUnixAddress,
} from "./common/index.ts";
import type { Findings, SemanticValidator } from "./findings.ts";

export interface WorkloadEntryContext {
  /** Port names of the ServiceEntry the endpoint belongs to; undefined for a standalone WorkloadEntry. */
  servicePorts?: ReadonlySet<string>;
  /** DNS-resolved ServiceEntries and WorkloadEntries may use host names as addresses. */
  allowFqdnAddress: boolean;
}

/** Istio's validateWorkloadEntry, on a WorkloadEntry spec or a ServiceEntry endpoint. */
export function validateWorkloadEntryFields(entry: JsonObject, ctx: WorkloadEntryContext, out: Findings): void {
  const address = stringField(entry, "address");
  const network = stringField(entry, "network");
  if (address === "") {
    if (network === "") {
      out.at("address").error("address is required");
      return;
    }
    out.at("address").warn(`address is unset with network ${goQuote(network)}`);
  }
  const ports = mapEntries(entry, "ports");
  const isUnix = address.startsWith(UNIX_PREFIX);
  if (isUnix) {
    validateUnixAddress(address.slice(UNIX_PREFIX.length), out.at("address"));
    if (ports.length > 0) out.at("ports").error(`unix endpoint ${address} must not include ports`);
  } else if (address !== "" && !isIpAddress(address)) {
    if (!ctx.allowFqdnAddress) {
      out.at("address").error(`endpoint address ${goQuote(address)} is not a valid IP address`);
    } else if (fqdnError(address)) {
      out.at("address").error(`endpoint address ${goQuote(address)} is not a valid FQDN or an IP address`);
    }
  }
  for (const [name, port] of ports) {
    const at = out.at(`ports.${name}`);
    if (ctx.servicePorts && !ctx.servicePorts.has(name)) {
      at.error(`endpoint port ${asNumber(port)} is not defined by the service entry`);
    }
    validatePortName(name, at);
    validatePort(asNumber(port), at);
  }
  validateLabels(asStringMap(field(entry, "labels")) ?? {}, out.at("labels"));
  if (isUnix && ctx.servicePorts && ctx.servicePorts.size !== 1) {
    out.error("exactly 1 service port required for unix endpoints");
  }
}

export const validateWorkloadEntry: SemanticValidator = (obj: ConfigObject, _ctx, out: Findings) => {
  validateWorkloadEntryFields(asObject(obj.spec) ?? {}, { allowFqdnAddress: true }, out);
};
