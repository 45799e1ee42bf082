// Istio Gateway webhook validation (validation-rules.md §6) and server TLS settings (§6.1), which
// Sidecar ingress listeners reuse.
import type { ConfigObject } from "../model.ts";
import {
  asObject,
  boolField,
  field,
  forEachMessage,
  goQuote,
  isDns1123Label,
  isHttpProtocol,
  isTlsProtocol,
  isValidCipherSuite,
  type JsonObject,
  listField,
  numberField,
  objectField,
  parseProtocol,
  readEnum,
  SERVER_TLS_MODE,
  stringField,
  stringListField,
  TLS_PROTOCOL,
  UNIX_PREFIX,
  validateIpAddress,
  validateNamespaceHost,
  validatePort,
  validateUnixAddress,
} from "./common/index.ts";
import type { Findings, SemanticValidator } from "./findings.ts";

const GATEWAY_SEMANTICS_ANNOTATION = "internal.istio.io/gateway-semantics";

export const validateGateway: SemanticValidator = (obj: ConfigObject, _ctx, out: Findings) => {
  const spec = asObject(obj.spec) ?? {};
  // Gateways converted from the Gateway API may use names and namespaces Istio Gateways cannot.
  const gatewaySemantics = obj.metadata.annotations?.[GATEWAY_SEMANTICS_ANNOTATION] === "gateway";
  const name = obj.metadata.name ?? "";
  if (!isDns1123Label(name) && !gatewaySemantics) {
    out.error(`invalid gateway name: ${goQuote(name)}`);
  }
  const servers = listField(spec, "servers") ?? [];
  if (servers.length === 0) out.at("servers").error("gateway must have at least one server");
  servers.forEach((server, i) => {
    validateServer(server, gatewaySemantics, out.at("servers", i));
  });

  const portNames = new Set<string>();
  forEachMessage(servers, out.at("servers"), "server may not be nil", (server, at) => {
    const port = objectField(server, "port");
    if (!port) return;
    const portName = stringField(port, "name");
    if (portNames.has(portName)) {
      at.at("port.name").error(`port names in servers must be unique: duplicate name ${portName}`);
    }
    portNames.add(portName);
    if (
      !isHttpProtocol(stringField(port, "protocol")) &&
      boolField(objectField(server, "tls") ?? {}, "httpsRedirect")
    ) {
      at.at("tls.httpsRedirect").warn("tls.httpsRedirect should only be used with http servers");
    }
  });
};

function validateServer(entry: unknown, gatewaySemantics: boolean, out: Findings): void {
  const server = asObject(entry);
  if (!server) {
    out.error("cannot have nil server");
    return;
  }
  const hosts = stringListField(server, "hosts");
  if (hosts.length === 0) out.at("hosts").error("server config must contain at least one host");
  hosts.forEach((host, i) => {
    validateNamespaceHost(host, "gateway", gatewaySemantics, out.at("hosts", i));
  });
  const bind = stringField(server, "bind");
  const port = objectField(server, "port");
  const portValid = validateServerPort(port, bind, out.at("port"));
  validateServerBind(port, bind, out.at("bind"));
  const tls = objectField(server, "tls");
  const mode = validateServerTls(tls, out.at("tls"));
  if (!portValid || !port) return;
  const protocol = stringField(port, "protocol");
  if (isTlsProtocol(protocol)) {
    if (!tls) out.at("tls").error("server must have TLS settings for HTTPS/TLS protocols");
  } else if (tls) {
    if (!isHttpProtocol(protocol)) {
      out.at("tls").error("server cannot have TLS settings for non HTTPS/TLS ports");
    } else {
      // A plain HTTP server may carry TLS settings only to redirect to HTTPS.
      const passthrough = mode === "PASSTHROUGH" || mode === "AUTO_PASSTHROUGH";
      const hasCertificates = ["caCertificates", "privateKey", "serverCertificate"].some(
        (f) => stringField(tls, f) !== "",
      );
      if (!passthrough || hasCertificates) {
        out.at("tls").error("server cannot have TLS settings for plain text HTTP ports");
      }
    }
  }
}

/** Go's compact text form of a Port message, as Istio prints it with `%v`. */
function portText(port: JsonObject): string {
  const parts: string[] = [];
  if (numberField(port, "number") !== 0) parts.push(`number:${numberField(port, "number")}`);
  if (stringField(port, "protocol") !== "") parts.push(`protocol:${goQuote(stringField(port, "protocol"))}`);
  if (stringField(port, "name") !== "") parts.push(`name:${goQuote(stringField(port, "name"))}`);
  if (numberField(port, "targetPort") !== 0) parts.push(`target_port:${numberField(port, "targetPort")}`);
  return parts.join(" ");
}

// Returns whether the port has no errors (TLS/protocol consistency is checked only then).
function validateServerPort(port: JsonObject | undefined, bind: string, out: Findings): boolean {
  if (!port) {
    out.error("port is required");
    return false;
  }
  const before = out.errors.length;
  const protocol = stringField(port, "protocol");
  if (!parseProtocol(protocol)) {
    out
      .at("protocol")
      .error(
        `invalid protocol ${goQuote(protocol)}, supported protocols are HTTP, HTTP2, GRPC, GRPC-WEB, MONGO, REDIS, MYSQL, TCP`,
      );
  }
  const number = numberField(port, "number");
  if (number > 0 || !bind.startsWith(UNIX_PREFIX)) validatePort(number, out.at("number"));
  if (numberField(port, "targetPort") > 0) out.at("targetPort").error("targetPort has no impact on Gateways");
  if (stringField(port, "name") === "") out.at("name").error(`port name must be set: ${portText(port)}`);
  return out.errors.length === before;
}

function validateServerBind(port: JsonObject | undefined, bind: string, out: Findings): void {
  if (bind.startsWith(UNIX_PREFIX)) {
    validateUnixAddress(bind.slice(UNIX_PREFIX.length), out);
    if (port && numberField(port, "number") !== 0) {
      out.error(`port number must be 0 for unix domain socket: ${portText(port)}`);
    }
  } else if (bind !== "") {
    validateIpAddress(bind, out);
  }
}

/** Go's `%v` of a sorted string list: `[a b]`. */
function sortedList(values: Iterable<string>): string {
  return `[${[...values].sort().join(" ")}]`;
}

/**
 * Istio's validateTLSOptions for server TLS (Gateway servers, Sidecar ingress). `out` is at the
 * tls field. Returns the TLS mode name (undefined when absent or undecodable).
 */
export function validateServerTls(tls: JsonObject | undefined, out: Findings): string | undefined {
  if (!tls) return undefined;
  const mode = readEnum(field(tls, "mode"), SERVER_TLS_MODE, out.at("mode"));
  const minVersion = readEnum(field(tls, "minProtocolVersion"), TLS_PROTOCOL, out.at("minProtocolVersion"));
  readEnum(field(tls, "maxProtocolVersion"), TLS_PROTOCOL, out.at("maxProtocolVersion"));
  const cipherSuites = stringListField(tls, "cipherSuites");
  if ((minVersion === "TLSV1_0" || minVersion === "TLSV1_1") && cipherSuites.length === 0) {
    out.warn(
      "TLS version below TLSV1_2 require setting compatible ciphers as by default they no longer include compatible ciphers.",
    );
  }
  const invalid = new Set<string>();
  const valid = new Set<string>();
  const duplicate = new Set<string>();
  for (const cs of cipherSuites) {
    if (!isValidCipherSuite(cs)) invalid.add(cs);
    else if (valid.has(cs)) duplicate.add(cs);
    else valid.add(cs);
  }
  if (invalid.size > 0) out.at("cipherSuites").warn(`ignoring invalid cipher suites: ${sortedList(invalid)}`);
  if (duplicate.size > 0) out.at("cipherSuites").warn(`ignoring duplicate cipher suites: ${sortedList(duplicate)}`);

  const serverCertificate = stringField(tls, "serverCertificate");
  const privateKey = stringField(tls, "privateKey");
  const caCertificates = stringField(tls, "caCertificates");
  const credentialName = stringField(tls, "credentialName");
  const caCrl = stringField(tls, "caCrl");
  const tlsCertificates = listField(tls, "tlsCertificates") ?? [];
  const hasCredentialNames = listField(tls, "credentialNames") !== undefined;

  if (mode === "ISTIO_MUTUAL") {
    const forbidden: [boolean, string][] = [
      [serverCertificate !== "", "server certificate"],
      [privateKey !== "", "private key"],
      [caCertificates !== "", "CA bundle"],
      [tlsCertificates.length > 0, "tlsCertificates"],
      [credentialName !== "", "credentialName"],
      [hasCredentialNames, "credentialNames"],
    ];
    for (const [set, what] of forbidden) {
      if (set) out.error(`ISTIO_MUTUAL TLS cannot have associated ${what}`);
    }
    return mode;
  }
  const anyCertificate =
    caCrl !== "" ||
    serverCertificate !== "" ||
    privateKey !== "" ||
    caCertificates !== "" ||
    tlsCertificates.length > 0 ||
    credentialName !== "" ||
    hasCredentialNames;
  if ((mode === "PASSTHROUGH" || mode === "AUTO_PASSTHROUGH") && anyCertificate) {
    out.warn(`${mode} mode does not use certificates, they will be ignored`);
  }
  const sources = [
    serverCertificate !== "" && privateKey !== "",
    credentialName !== "",
    hasCredentialNames,
    tlsCertificates.length > 0,
  ].filter(Boolean).length;
  if (sources > 1) {
    out.error(
      "only one of credential_name, credential_names, server_certificate/private_key, tls_certificates should be specified",
    );
  }
  const terminates = mode === "SIMPLE" || mode === "MUTUAL" || mode === "OPTIONAL_MUTUAL";
  // Credentials fetched by name carry their own certificates and CRL.
  if (terminates && (credentialName !== "" || hasCredentialNames)) return mode;
  if (terminates) {
    const label = mode === "SIMPLE" ? "SIMPLE TLS" : "MUTUAL TLS";
    if (label === "MUTUAL TLS" && caCertificates === "") out.error(`${label} requires a client CA bundle`);
    if (tlsCertificates.length > 2) out.warn(`${label} can support up to 2 server certificates`);
    const pairs =
      tlsCertificates.length > 0
        ? tlsCertificates.map((c) => asObject(c) ?? {})
        : [{ serverCertificate, privateKey } as JsonObject];
    for (const pair of pairs) {
      if (stringField(pair, "serverCertificate") === "") out.error(`${label} requires a server certificate`);
      if (stringField(pair, "privateKey") === "") out.error(`${label} requires a private key`);
    }
  }
  if (caCrl !== "") {
    if (credentialName !== "") {
      out.error("CRL is not supported with credentialName. CRL has to be specified in the credential");
    }
    if (mode === "SIMPLE") out.error("CRL is not supported with SIMPLE TLS");
  }
  return mode;
}
