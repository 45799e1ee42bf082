// envoy.filters.http.jwt_authn from RequestAuthentication jwtRules (pilot/pkg/security/authn
// policy_applier.go): providers `origins-<i>` in issuer order; a token, when present, must be valid
// for some provider (a missing token passes: AuthorizationPolicy decides). Sidecar inbound and gateways.
import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema, EmptySchema } from "@bufbuild/protobuf/wkt";
import { core, jwtAuthn, route } from "../../api/index.ts";
import type { RequestAuthenticationJwtRules } from "../../config/types/index.ts";
import { parseGoDuration } from "../../config/validation/common/index.ts";
import { typedHttpFilter } from "./typed.ts";
import type { HttpFilterContext, HttpFilterPlugin } from "./types.ts";

export const JWT_FILTER = "envoy.filters.http.jwt_authn";
/** Where the verified payload goes in dynamic metadata, for AuthorizationPolicy `request.auth.claims`. */
const PAYLOAD_METADATA_KEY = "payload";
const ALWAYS_SPACE_DELIMITED_CLAIMS = ["scope", "permission"];
const DEFAULT_JWKS_TIMEOUT = create(DurationSchema, { seconds: 5n });
const JWKS_CACHE_DURATION = create(DurationSchema, { seconds: 300n });
const NANOS_PER_SECOND = 1_000_000_000n;

export const jwt: HttpFilterPlugin = {
  name: JWT_FILTER,
  httpFilters(context) {
    const rules = context.jwtRules ?? [];
    if (context.listenerClass === "sidecarOutbound" || rules.length === 0) return [];
    return [typedHttpFilter(JWT_FILTER, jwtAuthn.JwtAuthenticationSchema, buildJwtAuthentication(rules, context))];
  },
};

function buildJwtAuthentication(
  rules: readonly RequestAuthenticationJwtRules[],
  context: HttpFilterContext,
): jwtAuthn.JwtAuthentication {
  const sorted = [...rules].sort((a, b) => (a.issuer ?? "").localeCompare(b.issuer ?? ""));
  const providers: Record<string, jwtAuthn.JwtProvider> = {};
  const eachOptional: jwtAuthn.JwtRequirement[] = [];
  const anyProvider: jwtAuthn.JwtRequirement[] = [];
  sorted.forEach((rule, i) => {
    const name = `origins-${i}`;
    providers[name] = buildProvider(rule, context);
    eachOptional.push(requiresAny([providerRequirement(name), allowMissing()]));
    anyProvider.push(providerRequirement(name));
  });
  // One provider: its token or none. Several: every present token valid, or one provider's token
  // valid (providers that share a header would otherwise fail each other).
  const requires =
    eachOptional.length === 1
      ? eachOptional[0]
      : requiresAny([
          ...anyProvider,
          create(jwtAuthn.JwtRequirementSchema, {
            requiresType: {
              case: "requiresAll",
              value: create(jwtAuthn.JwtRequirementAndListSchema, { requirements: eachOptional }),
            },
          }),
        ]);
  return create(jwtAuthn.JwtAuthenticationSchema, {
    providers,
    rules: [
      create(jwtAuthn.RequirementRuleSchema, {
        match: create(route.RouteMatchSchema, { pathSpecifier: { case: "prefix", value: "/" } }),
        requirementType: { case: "requires", value: requires },
      }),
    ],
    bypassCorsPreflight: true,
  });
}

function buildProvider(rule: RequestAuthenticationJwtRules, context: HttpFilterContext): jwtAuthn.JwtProvider {
  const claims = new Set([...ALWAYS_SPACE_DELIMITED_CLAIMS, ...(rule.spaceDelimitedClaims ?? [])]);
  return create(jwtAuthn.JwtProviderSchema, {
    issuer: rule.issuer ?? "",
    audiences: rule.audiences ?? [],
    forward: rule.forwardOriginalToken ?? false,
    forwardPayloadHeader: rule.outputPayloadToHeader ?? "",
    payloadInMetadata: PAYLOAD_METADATA_KEY,
    normalizePayloadInMetadata: create(jwtAuthn.JwtProvider_NormalizePayloadSchema, {
      spaceDelimitedClaims: [...claims].sort(),
    }),
    // Gateways and waypoints pick the route after the JWT's claims are known.
    clearRouteCache: context.listenerClass === "gateway" || context.waypoint === true,
    claimToHeaders: (rule.outputClaimToHeaders ?? []).map((c) =>
      create(jwtAuthn.JwtClaimToHeaderSchema, { headerName: c.header, claimName: c.claim }),
    ),
    fromHeaders: (rule.fromHeaders ?? []).map((h) =>
      create(jwtAuthn.JwtHeaderSchema, { name: h.name, valuePrefix: h.prefix ?? "" }),
    ),
    fromParams: rule.fromParams ?? [],
    fromCookies: rule.fromCookies ?? [],
    jwksSourceSpecifier: jwksSource(rule, context),
  });
}

/**
 * Inline `jwks` as a local JWKS; a `jwksUri` as a remote JWKS Envoy fetches through the cluster of
 * the URI's host (Istio's PILOT_JWT_ENABLE_REMOTE_JWKS=envoy mode: Sluice never fetches at build time).
 */
function jwksSource(
  rule: RequestAuthenticationJwtRules,
  context: HttpFilterContext,
): jwtAuthn.JwtProvider["jwksSourceSpecifier"] {
  const uri = rule.jwksUri ?? rule.jwks_uri ?? "";
  if (rule.jwks || uri === "") {
    return {
      case: "localJwks",
      value: create(core.DataSourceSchema, { specifier: { case: "inlineString", value: rule.jwks ?? "" } }),
    };
  }
  return {
    case: "remoteJwks",
    value: create(jwtAuthn.RemoteJwksSchema, {
      httpUri: create(core.HttpUriSchema, {
        uri,
        httpUpstreamType: { case: "cluster", value: jwksClusterName(uri, context) },
        timeout: durationOf(rule.timeout) ?? DEFAULT_JWKS_TIMEOUT,
      }),
      cacheDuration: JWKS_CACHE_DURATION,
    }),
  };
}

function jwksClusterName(uri: string, context: HttpFilterContext): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    context.report?.(`failed to parse jwks uri ${uri}`);
    return "";
  }
  const port = url.port !== "" ? Number(url.port) : url.protocol === "http:" ? 80 : 443;
  const cluster = context.jwksCluster?.(url.hostname, port);
  if (cluster) return cluster;
  context.report?.(`no cluster serves the jwks uri ${uri}; register its host with a ServiceEntry`);
  return `outbound|${port}||${url.hostname}`;
}

function durationOf(text: string | undefined): Duration | undefined {
  if (!text) return undefined;
  const parsed = parseGoDuration(text);
  if ("error" in parsed) return undefined;
  return create(DurationSchema, {
    seconds: parsed.nanos / NANOS_PER_SECOND,
    nanos: Number(parsed.nanos % NANOS_PER_SECOND),
  });
}

function providerRequirement(name: string): jwtAuthn.JwtRequirement {
  return create(jwtAuthn.JwtRequirementSchema, { requiresType: { case: "providerName", value: name } });
}

function allowMissing(): jwtAuthn.JwtRequirement {
  return create(jwtAuthn.JwtRequirementSchema, {
    requiresType: { case: "allowMissing", value: create(EmptySchema) },
  });
}

function requiresAny(requirements: jwtAuthn.JwtRequirement[]): jwtAuthn.JwtRequirement {
  return create(jwtAuthn.JwtRequirementSchema, {
    requiresType: { case: "requiresAny", value: create(jwtAuthn.JwtRequirementOrListSchema, { requirements }) },
  });
}
