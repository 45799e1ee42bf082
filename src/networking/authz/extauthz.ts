// CUSTOM authorization providers: MeshConfig `envoyExtAuthzHttp` / `envoyExtAuthzGrpc` extension
// providers as Envoy ext_authz configs (Istio's processExtensionProvider). A provider with any
// problem resolves to its problems only; the builder then denies what its policies match.
import { create } from "@bufbuild/protobuf";
import { type Any, type Duration, DurationSchema } from "@bufbuild/protobuf/wkt";
import { core, envoyType, extAuthz, matcher, networkExtAuthz as networkExtAuthzApi, packAny } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import { parseGoDuration } from "../../config/validation/common/index.ts";
import { exactMatcher, metadataStringMatcher, prefixMatcher, suffixMatcher } from "./matchers.ts";

type ExtensionProvider = NonNullable<MeshConfig["extensionProviders"]>[number];
type HttpProvider = NonNullable<ExtensionProvider["envoyExtAuthzHttp"]>;
type GrpcProvider = NonNullable<ExtensionProvider["envoyExtAuthzGrpc"]>;
type RequestBody = HttpProvider["includeRequestBodyInCheck"];

export const HTTP_RBAC_FILTER = "envoy.filters.http.rbac";
export const NETWORK_RBAC_FILTER = "envoy.filters.network.rbac";
/** Policy names of CUSTOM policies start with this (then `-<provider>-`). */
export const EXT_AUTHZ_POLICY_PREFIX = "istio-ext-authz";
/** The RBAC shadow stat prefix of CUSTOM policies; the shadow result is read from metadata under it. */
export const EXT_AUTHZ_SHADOW_STAT_PREFIX = "istio_ext_authz_";
const SHADOW_EFFECTIVE_POLICY_ID = "shadow_effective_policy_id";
// Envoy requires a timeout; Istio's default is ten minutes.
const DEFAULT_TIMEOUT_SECONDS = 600n;
const NANOS_PER_SECOND = 1_000_000_000n;

/** A service of the registry, for resolving a provider's `service` to a cluster. */
export interface RegistryService {
  hostname: string;
  namespace: string;
}

/** A resolved provider: its ext_authz configs, or why it cannot be used. */
export type ResolvedProvider =
  | { http: extAuthz.ExtAuthz; tcp?: Any; problems?: undefined }
  | { problems: string[]; http?: undefined; tcp?: undefined };

/** Every ext_authz provider of the mesh by name (other provider kinds are absent). */
export function resolveExtAuthzProviders(
  providers: readonly ExtensionProvider[],
  services: readonly RegistryService[],
): Map<string, ResolvedProvider> {
  const resolved = new Map<string, ResolvedProvider>();
  providers.forEach((provider, index) => {
    const name = provider.name ?? "";
    const problems: string[] = [];
    if (name === "") problems.push(`extension provider name must not be empty, found empty at index: ${index}`);
    else if (resolved.has(name)) problems.push(`extension provider name must be unique, found duplicate: ${name}`);
    if (name !== "") problems.push(...providerNameProblems(name));
    let built: ResolvedProvider;
    if (provider.envoyExtAuthzHttp) built = httpProvider(name, provider.envoyExtAuthzHttp, services);
    else if (provider.envoyExtAuthzGrpc) built = grpcProvider(name, provider.envoyExtAuthzGrpc, services);
    else return;
    problems.push(...(built.problems ?? []));
    resolved.set(name, problems.length > 0 ? { problems } : built);
  });
  return resolved;
}

/** Provider names become parts of metadata keys, policy names and metric labels: DNS-1123 labels. */
function providerNameProblems(name: string): string[] {
  if (name.length > 63) return [`provider name too long (max 63 characters): ${name.length}`];
  if (!/^[a-z0-9-]+$/.test(name))
    return [`invalid provider name ${JSON.stringify(name)}: only lowercase letters, digits, and hyphens allowed`];
  if (name.startsWith("-") || name.endsWith("-")) return ["provider name cannot start or end with hyphen"];
  return [];
}

interface Upstream {
  hostname: string;
  cluster: string;
  statusOnError?: envoyType.HttpStatus;
}

/** The checks both provider kinds share: port, service, status on error. */
function upstream(
  provider: { service?: string; port?: number; statusOnError?: string },
  services: readonly RegistryService[],
  problems: string[],
): Upstream {
  const port = provider.port ?? 0;
  if (!(port >= 1 && port <= 65535)) problems.push(`port must be in the range [1, 65535], found: ${port}`);
  const found = lookupService(provider.service ?? "", services);
  if (typeof found === "string") problems.push(found);
  const hostname = typeof found === "string" ? "" : found.hostname;
  const status = statusOnError(provider.statusOnError ?? "");
  if (typeof status === "string") problems.push(status);
  return {
    hostname,
    cluster: `outbound|${port}||${hostname}`,
    statusOnError: typeof status === "string" ? undefined : status,
  };
}

/** `<namespace>/<hostname>`, or a hostname registered in exactly one namespace (Istio's LookupCluster); a string says why not. */
export function lookupService(service: string, services: readonly RegistryService[]): RegistryService | string {
  if (service === "") return "service must not be empty";
  const parts = service.split("/");
  if (parts.length === 2) {
    const found = services.find((s) => s.namespace === parts[0] && s.hostname === parts[1]);
    if (found) return found;
  } else {
    const matches = services.filter((s) => s.hostname === service);
    const namespaces = [...new Set(matches.map((s) => s.namespace))];
    if (namespaces.length === 1) return matches[0];
    if (namespaces.length > 1) {
      return `found ${service} in multiple namespaces [${namespaces.join(" ")}], specify the namespace explicitly in the format of <Namespace>/<Hostname>`;
    }
  }
  return `could not find service ${service} in Istio service registry`;
}

/** An HTTP status Envoy knows (envoy.type.v3.StatusCode), parsed as Go's strconv.ParseInt. */
function statusOnError(status: string): envoyType.HttpStatus | undefined | string {
  if (status === "") return undefined;
  if (!/^[+-]?[0-9]+$/.test(status)) return `invalid statusOnError ${JSON.stringify(status)}: invalid syntax`;
  const code = Number(status);
  if (!envoyType.StatusCodeSchema.values.some((v) => v.number === code)) {
    return `unsupported statusOnError ${status}`;
  }
  return create(envoyType.HttpStatusSchema, { code });
}

function httpProvider(name: string, provider: HttpProvider, services: readonly RegistryService[]): ResolvedProvider {
  const problems: string[] = [];
  const target = upstream(provider, services, problems);
  const pathPrefix = provider.pathPrefix ?? "";
  if (pathPrefix !== "" && !pathPrefix.startsWith("/")) {
    problems.push(`pathPrefix must begin with \`/\`, found: ${JSON.stringify(pathPrefix)}`);
  }
  const headerLists: [string, string[] | undefined][] = [
    ["IncludeRequestHeadersInCheck", provider.includeRequestHeadersInCheck],
    ["IncludeHeadersInCheck", provider.includeHeadersInCheck],
    ["HeadersToDownstreamOnDeny", provider.headersToDownstreamOnDeny],
    ["HeadersToDownstreamOnAllow", provider.headersToDownstreamOnAllow],
    ["HeadersToUpstreamOnAllow", provider.headersToUpstreamOnAllow],
  ];
  for (const [field, headers] of headerLists) {
    if (headers?.includes("*")) {
      problems.push(`a single wildcard ("*") is not supported, change it to either prefix or suffix match: ${field}`);
    }
  }
  const serverTimeout = timeout(provider.timeout, problems);
  if (problems.length > 0) return { problems };

  const additionalHeaders = Object.entries(provider.includeAdditionalHeadersInCheck ?? {}).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const onAllowUpstream = provider.headersToUpstreamOnAllow ?? [];
  const onDeny = provider.headersToDownstreamOnDeny ?? [];
  const onAllowDownstream = provider.headersToDownstreamOnAllow ?? [];
  const httpService = create(extAuthz.HttpServiceSchema, {
    pathPrefix,
    serverUri: {
      uri: `http://${target.hostname}`,
      httpUpstreamType: { case: "cluster", value: target.cluster },
      timeout: serverTimeout,
    },
    authorizationRequest:
      additionalHeaders.length > 0
        ? { headersToAdd: additionalHeaders.map(([key, value]) => ({ key, value })) }
        : undefined,
    authorizationResponse:
      onAllowUpstream.length + onDeny.length + onAllowDownstream.length > 0
        ? {
            allowedUpstreamHeaders: headerPatterns(onAllowUpstream),
            allowedClientHeaders: headerPatterns(onDeny),
            allowedClientHeadersOnSuccess: headerPatterns(onAllowDownstream),
          }
        : undefined,
  });
  // includeHeadersInCheck is deprecated: read only when includeRequestHeadersInCheck is empty.
  const allowedHeaders =
    headerPatterns(provider.includeRequestHeadersInCheck ?? []) ?? headerPatterns(provider.includeHeadersInCheck ?? []);
  const http = create(extAuthz.ExtAuthzSchema, {
    statusOnError: target.statusOnError,
    failureModeAllow: provider.failOpen ?? false,
    transportApiVersion: core.ApiVersion.V3,
    services: { case: "httpService", value: httpService },
    filterEnabledMetadata: enabledByRbacShadowResult(HTTP_RBAC_FILTER, name),
    withRequestBody: bufferSettings(provider.includeRequestBodyInCheck),
    allowedHeaders,
  });
  return { http };
}

function grpcProvider(name: string, provider: GrpcProvider, services: readonly RegistryService[]): ResolvedProvider {
  const problems: string[] = [];
  const target = upstream(provider, services, problems);
  const callTimeout = timeout(provider.timeout, problems);
  if (problems.length > 0) return { problems };
  const grpcService = create(core.GrpcServiceSchema, {
    targetSpecifier: { case: "envoyGrpc", value: { clusterName: target.cluster, authority: target.hostname } },
    timeout: callTimeout,
  });
  const http = create(extAuthz.ExtAuthzSchema, {
    statusOnError: target.statusOnError,
    failureModeAllow: provider.failOpen ?? false,
    services: { case: "grpcService", value: grpcService },
    filterEnabledMetadata: enabledByRbacShadowResult(HTTP_RBAC_FILTER, name),
    transportApiVersion: core.ApiVersion.V3,
    withRequestBody: bufferSettings(provider.includeRequestBodyInCheck),
  });
  const tcp = networkExtAuthz({
    statPrefix: "tcp.",
    grpcService,
    failureModeAllow: provider.failOpen ?? false,
    filterEnabledMetadata: enabledByRbacShadowResult(NETWORK_RBAC_FILTER, name),
  });
  return { http, tcp };
}

/**
 * ext_authz runs only when the RBAC filter's shadow rules matched a policy of this provider: the
 * shadow effective policy id then starts with `istio-ext-authz-<provider>`.
 */
function enabledByRbacShadowResult(rbacFilter: string, provider: string): matcher.MetadataMatcher {
  return metadataStringMatcher(
    rbacFilter,
    EXT_AUTHZ_SHADOW_STAT_PREFIX + SHADOW_EFFECTIVE_POLICY_ID,
    prefixMatcher(`${EXT_AUTHZ_POLICY_PREFIX}-${provider}`),
  );
}

/** `*suffix`, `prefix*` or an exact header name, compared without case; undefined for none. */
function headerPatterns(headers: readonly string[]): matcher.ListStringMatcher | undefined {
  if (headers.length === 0) return undefined;
  const patterns = headers.map((h) => {
    if (h.startsWith("*")) return suffixMatcher(h.slice(1), true);
    if (h.endsWith("*")) return prefixMatcher(h.slice(0, -1), true);
    return exactMatcher(h, true);
  });
  return create(matcher.ListStringMatcherSchema, { patterns });
}

/** The provider's timeout (a Go duration in MeshConfig), or Istio's default. */
function timeout(value: string | undefined, problems: string[]): Duration {
  if (value === undefined) return create(DurationSchema, { seconds: DEFAULT_TIMEOUT_SECONDS });
  const parsed = parseGoDuration(value);
  if ("error" in parsed) {
    problems.push(`invalid timeout: ${parsed.error}`);
    return create(DurationSchema);
  }
  return create(DurationSchema, {
    seconds: parsed.nanos / NANOS_PER_SECOND,
    nanos: Number(parsed.nanos % NANOS_PER_SECOND),
  });
}

function bufferSettings(body: RequestBody): extAuthz.BufferSettings | undefined {
  if (body === undefined) return undefined;
  return create(extAuthz.BufferSettingsSchema, {
    maxRequestBytes: body.maxRequestBytes ?? 0,
    allowPartialMessage: body.allowPartialMessage ?? false,
    packAsBytes: body.packAsBytes ?? false,
  });
}

function networkExtAuthz(config: {
  statPrefix: string;
  grpcService: core.GrpcService;
  failureModeAllow: boolean;
  filterEnabledMetadata: matcher.MetadataMatcher;
}): Any {
  const filter = create(networkExtAuthzApi.ExtAuthzSchema, { ...config, transportApiVersion: core.ApiVersion.V3 });
  return packAny(networkExtAuthzApi.ExtAuthzSchema, filter);
}
