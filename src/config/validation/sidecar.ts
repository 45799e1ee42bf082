// Sidecar webhook validation (validation-rules.md §8).
import type { ConfigObject } from "../model.ts";
import {
  asObject,
  boolField,
  CAPTURE_MODE,
  emptySelectorWarning,
  field,
  forEachMessage,
  goAtoi,
  goQuote,
  isHttpProtocol,
  isTlsProtocol,
  type JsonObject,
  listField,
  numberField,
  OUTBOUND_TRAFFIC_POLICY_MODE,
  objectField,
  portError,
  readEnum,
  report,
  splitHostPort,
  stringField,
  stringListField,
  UNIX_PREFIX,
  validateConnectionPool,
  validateDestination,
  validateFqdn,
  validateIpAddress,
  validateLabelsSelector,
  validateNamespaceHost,
  validatePort,
  validatePortName,
  validateProtocol,
  validateUnixAddress,
} from "./common/index.ts";
import type { Findings, SemanticValidator } from "./findings.ts";
import { validateServerTls } from "./gateway.ts";

// MeshConfig's ALLOW_ANY_DYNAMIC_DNS number; the Sidecar enum has no name for it.
const MESH_ALLOW_ANY_DYNAMIC_DNS = "3";

export const validateSidecar: SemanticValidator = (obj: ConfigObject, _ctx, out: Findings) => {
  const spec = asObject(obj.spec) ?? {};
  const selector = validateLabelsSelector(field(spec, "workloadSelector"), out.at("workloadSelector"));
  if (!selector.ok) return;
  const ingress = listField(spec, "ingress") ?? [];
  const egress = listField(spec, "egress") ?? [];
  if (
    ingress.length === 0 &&
    egress.length === 0 &&
    !objectField(spec, "outboundTrafficPolicy") &&
    !objectField(spec, "inboundConnectionPool")
  ) {
    // Istio returns only this error, dropping the selector warning.
    out.error("sidecar: empty configuration provided");
    return;
  }
  if (selector.empty) out.at("workloadSelector").warn(emptySelectorWarning("sidecar"));
  const ingressPorts = new Set<number>();
  ingress.forEach((listener, i) => {
    validateIngressListener(listener, ingressPorts, out.at("ingress", i));
  });
  validateConnectionPool(field(spec, "inboundConnectionPool"), out.at("inboundConnectionPool"));
  validateEgressListeners(egress, obj.metadata.namespace ?? "", out.at("egress"));
  validateOutboundTrafficPolicy(field(spec, "outboundTrafficPolicy"), out.at("outboundTrafficPolicy"));
};

function validateIngressListener(entry: unknown, seenPorts: Set<number>, out: Findings): void {
  const listener = asObject(entry);
  if (!listener) {
    out.error("sidecar: ingress may not be null");
    return;
  }
  const port = objectField(listener, "port");
  if (!port) {
    out.at("port").error("sidecar: port is required for ingress listeners");
    return;
  }
  const portAt = out.at("port");
  const name = stringField(port, "name");
  const number = numberField(port, "number");
  const protocol = stringField(port, "protocol");
  validateListenerPort(port, portAt);
  validatePort(number, portAt.at("number"));
  const bind = stringField(listener, "bind");
  if (bind !== "") validateIpAddress(bind, out.at("bind"));
  if (seenPorts.has(number)) portAt.at("number").error("sidecar: ports on IP bound listeners must be unique");
  seenPorts.add(number);

  const defaultEndpoint = stringField(listener, "defaultEndpoint");
  if (defaultEndpoint !== "") validateDefaultEndpoint(defaultEndpoint, out.at("defaultEndpoint"));

  const tls = objectField(listener, "tls");
  if (tls) {
    const at = out.at("tls");
    if (listField(tls, "subjectAltNames")) at.error("sidecar: subjectAltNames is not supported in ingress tls");
    if (boolField(tls, "httpsRedirect")) at.error("sidecar: httpsRedirect is not supported");
    if (stringField(tls, "credentialName") !== "") at.error("sidecar: credentialName is not currently supported");
    if (listField(tls, "credentialNames")) at.error("sidecar: credentialNames is not currently supported");
    if (listField(tls, "tlsCertificates")) at.error("sidecar: tls_certificates is not currently supported");
    if (!isTlsProtocol(protocol)) at.error("server cannot have TLS settings for non HTTPS/TLS ports");
    const mode = validateServerTls(tls, at);
    if (mode === "ISTIO_MUTUAL" || mode === "AUTO_PASSTHROUGH") {
      at.at("mode").error(`configuration is invalid: cannot set mode to ${mode} in sidecar ingress tls`);
    }
  }

  const pool = objectField(listener, "connectionPool");
  validateConnectionPool(pool, out.at("connectionPool"));
  if (pool && objectField(pool, "http") && !isHttpProtocol(protocol)) {
    out
      .at("connectionPool.http")
      .warn(
        `sidecar: HTTP connection pool settings are configured for port ${number} (${goQuote(name)}) but its protocol is not HTTP (${protocol}); only TCP settings will apply`,
      );
  }
}

// The port checks ingress and egress listeners share; each checks the number its own way.
function validateListenerPort(port: JsonObject, out: Findings): void {
  if (numberField(port, "targetPort") > 0) out.at("targetPort").error("targetPort has no impact on Sidecars");
  const name = stringField(port, "name");
  if (name !== "") validatePortName(name, out.at("name"));
  validateProtocol(stringField(port, "protocol"), out.at("protocol"));
}

const LOOPBACK_OR_ANY = new Set(["", "127.0.0.1", "0.0.0.0", "::1", "::"]);

// Where an ingress listener forwards: a unix socket, or a loopback/any address with a port.
function validateDefaultEndpoint(endpoint: string, out: Findings): void {
  if (endpoint.startsWith(UNIX_PREFIX)) {
    validateUnixAddress(endpoint.slice(UNIX_PREFIX.length), out);
    return;
  }
  const split = splitHostPort(endpoint);
  if ("error" in split) out.error(split.error);
  // Istio goes on with an empty host and port after a split error.
  const { host, port } = "error" in split ? { host: "", port: "" } : split;
  if (!LOOPBACK_OR_ANY.has(host)) {
    out.error(
      "sidecar: defaultEndpoint must be of form 127.0.0.1:<port>,0.0.0.0:<port>,[::1]:port,[::]:port,unix://filepath or unset",
    );
  }
  const number = goAtoi(port);
  if (number === undefined) {
    out.error(
      `sidecar: defaultEndpoint port (${port}) is not a number: strconv.Atoi: parsing ${goQuote(port)}: invalid syntax`,
    );
    return;
  }
  report(out, portError(number));
}

function validateEgressListeners(listeners: unknown[], namespace: string, out: Findings): void {
  const ipPorts = new Set<number>();
  const udsBinds = new Set<string>();
  forEachMessage(listeners, out, "egress listener may not be null", (listener, at, i) => {
    const captureMode = readEnum(field(listener, "captureMode"), CAPTURE_MODE, at.at("captureMode"));
    const port = objectField(listener, "port");
    if (!port) {
      // The catch-all listener (no port) must come last.
      if (i !== listeners.length - 1) {
        at.error("sidecar: the egress listener with empty port should be the last listener in the list");
      }
    } else {
      validateEgressPort(listener, port, captureMode, at);
      const bind = stringField(listener, "bind");
      const number = numberField(port, "number");
      if (number === 0) {
        if (udsBinds.has(bind)) at.at("bind").error("sidecar: unix domain socket values for listeners must be unique");
        udsBinds.add(bind);
      } else {
        if (ipPorts.has(number)) at.at("port.number").error("sidecar: ports on IP bound listeners must be unique");
        ipPorts.add(number);
      }
    }
    validateEgressHosts(stringListField(listener, "hosts"), namespace, at.at("hosts"));
  });
}

function validateEgressPort(
  listener: JsonObject,
  port: JsonObject,
  captureMode: string | undefined,
  out: Findings,
): void {
  const portAt = out.at("port");
  validateListenerPort(port, portAt);
  const bind = stringField(listener, "bind");
  const number = numberField(port, "number");
  if (number === 0) {
    // Port 0 means a unix domain socket listener.
    if (!bind.startsWith(UNIX_PREFIX)) {
      out.at("bind").error("sidecar: ports with 0 value must have a unix domain socket bind address");
    } else {
      validateUnixAddress(bind.slice(UNIX_PREFIX.length), out.at("bind"));
    }
    if (captureMode !== undefined && captureMode !== "DEFAULT" && captureMode !== "NONE") {
      out.at("captureMode").error("sidecar: captureMode must be DEFAULT/NONE for unix domain socket listeners");
    }
  } else {
    validatePort(number, portAt.at("number"));
    if (bind !== "") validateIpAddress(bind, out.at("bind"));
  }
}

function validateEgressHosts(hosts: string[], namespace: string, out: Findings): void {
  if (hosts.length === 0) {
    out.error("sidecar: egress listener must contain at least one host");
    return;
  }
  // namespace → hosts already listed for it, to warn about repeats ("~ns" exclusions are not tracked).
  const seen = new Map<string, Set<string>>();
  hosts.forEach((host, i) => {
    const at = out.at("", i);
    const slash = host.indexOf("/");
    if (slash >= 0 && !host.startsWith("~")) {
      const ns = host.slice(0, slash) === "." ? namespace : host.slice(0, slash);
      const name = host.slice(slash + 1);
      const names = seen.get(ns) ?? new Set<string>();
      seen.set(ns, names);
      const duplicate = name === "*" ? names.size > 0 : names.has(name) || names.has("*");
      if (duplicate) at.warn(`duplicated egress host: ${host}`);
      names.add(name);
    }
    validateNamespaceHost(host, "sidecar", false, at);
  });
  if (seen.get("*")?.has("*") && seen.size !== 1) {
    out.warn("`*/*` host select all resources, no other hosts can be added");
  }
}

function validateOutboundTrafficPolicy(value: unknown, out: Findings): void {
  const policy = asObject(value);
  if (!policy) return;
  const mode = readEnum(field(policy, "mode"), OUTBOUND_TRAFFIC_POLICY_MODE, out.at("mode"));
  if (mode === MESH_ALLOW_ANY_DYNAMIC_DNS) {
    out
      .at("mode")
      .error("sidecar: ALLOW_ANY_DYNAMIC_DNS mode is only supported in MeshConfig, not in Sidecar resource");
    return;
  }
  const proxy = objectField(policy, "egressProxy");
  if (!proxy) return;
  const at = out.at("egressProxy");
  if (mode !== "ALLOW_ANY") {
    at.error("sidecar: egress_proxy must be set only with ALLOW_ANY outbound_traffic_policy mode");
    return;
  }
  validateFqdn(stringField(proxy, "host"), at.at("host"));
  if (!objectField(proxy, "port")) {
    at.at("port").error("sidecar: egress_proxy port must be non-nil");
    return;
  }
  validateDestination(proxy, at);
}
