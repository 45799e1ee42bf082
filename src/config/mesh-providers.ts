// Istio's checks of MeshConfig extension providers. Istio only logs these problems ("can be ignored
// if the given extension provider is not used"); Sluice returns them as warnings.
import type { ExtensionProvider, MeshConfig } from "./mesh-types.ts";
import { goAtoi, goQuote } from "./validation/common/format.ts";
import { fqdnError, validateNamespaceHost } from "./validation/common/hosts.ts";
import { ipAddressError } from "./validation/common/net.ts";
import { portError } from "./validation/common/ports.ts";
import { Findings } from "./validation/findings.ts";
import { parseGoUrl } from "./validation/security-url.ts";

// Envoy's envoy.type.v3.StatusCode values and names.
const ENVOY_STATUS_CODES: ReadonlyMap<number, string> = new Map([
  [0, "Empty"],
  [100, "Continue"],
  [200, "OK"],
  [201, "Created"],
  [202, "Accepted"],
  [203, "NonAuthoritativeInformation"],
  [204, "NoContent"],
  [205, "ResetContent"],
  [206, "PartialContent"],
  [207, "MultiStatus"],
  [208, "AlreadyReported"],
  [226, "IMUsed"],
  [300, "MultipleChoices"],
  [301, "MovedPermanently"],
  [302, "Found"],
  [303, "SeeOther"],
  [304, "NotModified"],
  [305, "UseProxy"],
  [307, "TemporaryRedirect"],
  [308, "PermanentRedirect"],
  [400, "BadRequest"],
  [401, "Unauthorized"],
  [402, "PaymentRequired"],
  [403, "Forbidden"],
  [404, "NotFound"],
  [405, "MethodNotAllowed"],
  [406, "NotAcceptable"],
  [407, "ProxyAuthenticationRequired"],
  [408, "RequestTimeout"],
  [409, "Conflict"],
  [410, "Gone"],
  [411, "LengthRequired"],
  [412, "PreconditionFailed"],
  [413, "PayloadTooLarge"],
  [414, "URITooLong"],
  [415, "UnsupportedMediaType"],
  [416, "RangeNotSatisfiable"],
  [417, "ExpectationFailed"],
  [421, "MisdirectedRequest"],
  [422, "UnprocessableEntity"],
  [423, "Locked"],
  [424, "FailedDependency"],
  [426, "UpgradeRequired"],
  [428, "PreconditionRequired"],
  [429, "TooManyRequests"],
  [431, "RequestHeaderFieldsTooLarge"],
  [500, "InternalServerError"],
  [501, "NotImplemented"],
  [502, "BadGateway"],
  [503, "ServiceUnavailable"],
  [504, "GatewayTimeout"],
  [505, "HTTPVersionNotSupported"],
  [506, "VariantAlsoNegotiates"],
  [507, "InsufficientStorage"],
  [508, "LoopDetected"],
  [510, "NotExtended"],
  [511, "NetworkAuthenticationRequired"],
]);
// How Go prints that name map in Istio's message.
const ENVOY_STATUS_CODES_TEXT = `map[${[...ENVOY_STATUS_CODES].map(([code, name]) => `${code}:${name}`).join(" ")}]`;

/** Warns about each problem of each extension provider, prefixed with the provider's name. */
export function checkExtensionProviders(mesh: MeshConfig, out: Findings): void {
  // Names are unique here: merging over the defaults folded same-named providers together.
  (mesh.extensionProviders ?? []).forEach((provider, i) => {
    const name = provider.name ?? "";
    const problems = name === "" ? ["empty extension provider name"] : [];
    problems.push(...providerProblems(provider));
    for (const problem of problems)
      out.at("extensionProviders", i).warn(`invalid extension provider ${name}: ${problem}`);
  });
}

function providerProblems(provider: ExtensionProvider): string[] {
  if (provider.envoyExtAuthzHttp) {
    const http = provider.envoyExtAuthzHttp;
    return [
      ...orNone(portError(http.port ?? 0)),
      ...orNone(serviceError(http.service ?? "")),
      ...orNone(statusOnErrorError(http.statusOnError ?? "")),
      ...pathPrefixProblems(http.pathPrefix ?? ""),
    ];
  }
  if (provider.envoyExtAuthzGrpc) {
    const grpc = provider.envoyExtAuthzGrpc;
    return [
      ...orNone(servicePortError(grpc.port)),
      ...orNone(serviceError(grpc.service ?? "")),
      ...orNone(statusOnErrorError(grpc.statusOnError ?? "")),
    ];
  }
  // Tracing providers: service first, then port.
  const tracer =
    provider.zipkin ?? provider.lightstep ?? provider.datadog ?? provider.opencensus ?? provider.skywalking;
  if (tracer) {
    const problems = [...orNone(serviceError(tracer.service ?? "")), ...orNone(servicePortError(tracer.port))];
    if (provider.lightstep && !provider.lightstep.accessToken) problems.push("access token is required");
    return problems;
  }
  // Log and OpenTelemetry providers: port first, then service.
  const exporter = provider.envoyOtelAls ?? provider.opentelemetry ?? provider.envoyHttpAls ?? provider.envoyTcpAls;
  if (exporter) {
    const problems = [...orNone(portError(exporter.port ?? 0)), ...orNone(serviceError(exporter.service ?? ""))];
    if (provider.opentelemetry?.grpc && provider.opentelemetry.http) {
      problems.push("OpenTelemetryTracingProvider cannot specify both grpc and http");
    }
    return problems;
  }
  if (provider.prometheus || provider.stackdriver || provider.envoyFileAccessLog || provider.sds) return [];
  return ["unsupported provider: <nil> of type <nil>"];
}

function orNone(message: string | undefined): string[] {
  return message === undefined ? [] : [message];
}

function servicePortError(port: number | undefined): string | undefined {
  const problem = portError(port ?? 0);
  return problem === undefined ? undefined : `invalid service port: ${problem}`;
}

/** A service is an FQDN or IP, or `namespace/host`. */
function serviceError(service: string): string | undefined {
  if (service === "") return "service must not be empty";
  if (!service.includes("/")) {
    if (fqdnError(service) === undefined) return undefined;
    const ipProblem = ipAddressError(service);
    return ipProblem === undefined ? undefined : `invalid service fmt ${service}: ${ipProblem}`;
  }
  const scratch = new Findings("");
  validateNamespaceHost(service, "sidecar", false, scratch);
  return scratch.errors[0]?.message;
}

/** An HTTP status code Envoy names (Go strconv.ParseInt, then envoy.type.v3.StatusCode). */
function statusOnErrorError(status: string): string | undefined {
  if (status === "") return undefined;
  if (goAtoi(status) === undefined) {
    return `invalid statusOnError value ${status}: strconv.ParseInt: parsing ${goQuote(status)}: invalid syntax`;
  }
  if (ENVOY_STATUS_CODES.has(Number(status))) return undefined;
  return `unsupported statusOnError value ${status}, supported values: ${ENVOY_STATUS_CODES_TEXT}`;
}

function pathPrefixProblems(pathPrefix: string): string[] {
  if (pathPrefix === "") return [];
  const problems: string[] = [];
  const parsed = parseGoUrl(pathPrefix, false);
  if ("error" in parsed) problems.push(`invalid pathPrefix ${pathPrefix}: ${parsed.error}`);
  if (!pathPrefix.startsWith("/")) problems.push(`pathPrefix should begin with \`/\` but found ${goQuote(pathPrefix)}`);
  return problems;
}
