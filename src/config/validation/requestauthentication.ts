// RequestAuthentication (security.istio.io): Istio's ValidateRequestAuthentication, one JWT rule at a time.
import { createLocalJWKSet, type JSONWebKeySet } from "jose";
import { checkDurationField } from "./common/durations.ts";
import { readEnum } from "./common/enums.ts";
import { goQuote } from "./common/format.ts";
import { strictHeaderNameError } from "./common/headers.ts";
import { asObject, asString, field, type JsonObject, listField, stringField, stringListField } from "./common/json.ts";
import { forEachMessage, report } from "./common/report.ts";
import { validatePolicyTargets } from "./common/selectors.ts";
import type { Findings, SemanticValidator } from "./findings.ts";
import { JWT_PRESENCE } from "./security-decode.ts";
import { parseGoUrl } from "./security-url.ts";

export const validateRequestAuthentication: SemanticValidator = (obj, _ctx, out) => {
  const spec = asObject(obj.spec) ?? {};
  validatePolicyTargets(spec, out);
  (listField(spec, "jwtRules") ?? []).forEach((rule, i) => {
    const jwtRule = asObject(rule);
    if (jwtRule) validateJwtRule(jwtRule, out.at("jwtRules", i));
  });
};

function validateJwtRule(rule: JsonObject, out: Findings): void {
  if (stringListField(rule, "audiences").includes("")) out.at("audiences").error("audience must be non-empty string");
  // jsonpb also accepts the proto field name, and the CRD declares both.
  const [uriField, jwksUri] = rule.jwksUri !== undefined ? ["jwksUri", rule.jwksUri] : ["jwks_uri", rule.jwks_uri];
  const uri = asString(jwksUri);
  if (stringField(rule, "issuer") === "" && uri === "") out.error("issuer or jwksUri must be non-empty string");
  if (uri !== "") report(out.at(uriField), jwksUriError(uri));
  const jwks = stringField(rule, "jwks");
  if (jwks !== "") checkInlineJwks(jwks, out.at("jwks"));
  (listField(rule, "fromHeaders") ?? []).forEach((header, j) => {
    const at = out.at("fromHeaders", j);
    const location = asObject(header);
    if (!location) at.error("location header name must be non-null");
    else if (stringField(location, "name") === "") at.at("name").error("location header name must be non-empty string");
  });
  if (stringListField(rule, "fromParams").includes(""))
    out.at("fromParams").error("location query must be non-empty string");
  if (stringListField(rule, "fromCookies").includes(""))
    out.at("fromCookies").error("cookie name must be non-empty string");
  forEachMessage(
    listField(rule, "outputClaimToHeaders"),
    out.at("outputClaimToHeaders"),
    "outputClaimToHeaders must not be null",
    (claimToHeader, at) => {
      const header = stringField(claimToHeader, "header");
      if (stringField(claimToHeader, "claim") === "" || header === "") {
        at.error("outputClaimToHeaders header and claim value must be non-empty string");
        return;
      }
      report(at.at("header"), strictHeaderNameError(header));
    },
  );
  checkDurationField(rule, "timeout", out);
  readEnum(field(rule, "presence"), JWT_PRESENCE, out.at("presence"));
}

// Istio's ParseJwksURI: Go url.Parse, then an http or https scheme and a port that fits an int.
function jwksUriError(uri: string): string | undefined {
  const parsed = parseGoUrl(uri, false);
  if ("error" in parsed) return parsed.error;
  if (parsed.scheme !== "http" && parsed.scheme !== "https")
    return `URI scheme ${goQuote(parsed.scheme)} is not supported`;
  if (parsed.port !== "" && !Number.isSafeInteger(Number(parsed.port))) {
    return `strconv.Atoi: parsing ${goQuote(parsed.port)}: value out of range`;
  }
  return undefined;
}

// Fields each key type needs to be usable (RFC 7518 §6), and the one that makes it a private key.
const REQUIRED_KEY_FIELDS: ReadonlyMap<string, readonly string[]> = new Map([
  ["RSA", ["n", "e"]],
  ["EC", ["crv", "x", "y"]],
  ["OKP", ["crv", "x"]],
  ["oct", ["k"]],
]);

/**
 * An inline JWKS must parse as a key set (or, as Istio's JWK library allows, a single key) whose keys
 * have a known type and that type's fields. Private or symmetric keys are accepted with a warning.
 */
function checkInlineJwks(text: string, out: Findings): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    out.error(`jwks parse error: failed to unmarshal JWK set: ${(err as Error).message}`);
    return;
  }
  const single = asObject(parsed);
  const set = (single && !("keys" in single) ? { keys: [single] } : parsed) as JSONWebKeySet;
  try {
    createLocalJWKSet(set);
  } catch (err) {
    out.error(`jwks parse error: ${(err as Error).message}`);
    return;
  }
  set.keys.forEach((key, i) => {
    const kty = stringField(key, "kty");
    const required = REQUIRED_KEY_FIELDS.get(kty);
    if (!required) {
      out.error(`jwks parse error: failed to parse key at index ${i}: invalid key type from JSON (${kty})`);
      return;
    }
    const missing = required.find((field) => asString((key as JsonObject)[field]) === "");
    if (missing !== undefined) {
      out.error(`jwks parse error: failed to parse key at index ${i}: required field ${missing} is missing`);
      return;
    }
    if (kty === "oct" || key.d !== undefined) {
      out.warn(`jwks key at index ${i} contains private key material; only public keys are used for verification`);
    }
  });
}
