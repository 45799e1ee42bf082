// RBAC principals: who sends the request. Each `from.source` field and each `when` key about the
// peer or the request's credentials has a generator here (Istio's authz model generators).
import { create } from "@bufbuild/protobuf";
import { type matcher, rbac, type route } from "../../api/index.ts";
import { cidrRange } from "./cidr.ts";
import { type GenerateContext, httpOnly, NotGenerated, type PrincipalGenerator } from "./generator.ts";
import {
  exactMatcher,
  headerMatcher,
  jwtClaimListMatcher,
  jwtClaimStringMatcher,
  prefixMatcher,
  quoteMeta,
  regexMatcher,
  stringMatcher,
  stringOrMatcher,
  suffixMatcher,
} from "./matchers.ts";

type Principal = rbac.Principal;

const SPIFFE_PREFIX = "spiffe://";
// The peer identity Istio's filters store when principals are matched through filter state.
const PEER_PRINCIPAL_FILTER_STATE = "io.istio.peer_principal";

export function principalAny(): Principal {
  return create(rbac.PrincipalSchema, { identifier: { case: "any", value: true } });
}

export function principalAnd(ids: Principal[]): Principal {
  return create(rbac.PrincipalSchema, { identifier: { case: "andIds", value: { ids } } });
}

export function principalOr(ids: Principal[]): Principal {
  return create(rbac.PrincipalSchema, { identifier: { case: "orIds", value: { ids } } });
}

export function principalNot(id: Principal): Principal {
  return create(rbac.PrincipalSchema, { identifier: { case: "notId", value: id } });
}

/** Matches the peer's identity (its URI SAN). */
function peerIdentity(name: matcher.StringMatcher, ctx: GenerateContext): Principal {
  if (ctx.useAuthenticated) {
    return create(rbac.PrincipalSchema, { identifier: { case: "authenticated", value: { principalName: name } } });
  }
  return create(rbac.PrincipalSchema, {
    identifier: {
      case: "filterState",
      value: { key: PEER_PRINCIPAL_FILTER_STATE, matcher: { case: "stringMatch", value: name } },
    },
  });
}

function metadata(m: matcher.MetadataMatcher): Principal {
  return create(rbac.PrincipalSchema, { identifier: { case: "metadata", value: m } });
}

function header(m: route.HeaderMatcher): Principal {
  return create(rbac.PrincipalSchema, { identifier: { case: "header", value: m } });
}

/** `source.ip` / ipBlocks: the downstream connection's address. */
export const sourceIp: PrincipalGenerator = {
  each(_key, value) {
    const cidr = cidrRange(value);
    if ("error" in cidr) return new NotGenerated(cidr.error);
    return create(rbac.PrincipalSchema, { identifier: { case: "directRemoteIp", value: cidr } });
  },
};

/** `remote.ip` / remoteIpBlocks: the original client address (X-Forwarded-For, proxy protocol). */
export const remoteIp: PrincipalGenerator = {
  each(_key, value) {
    const cidr = cidrRange(value);
    if ("error" in cidr) return new NotGenerated(cidr.error);
    return create(rbac.PrincipalSchema, { identifier: { case: "remoteIp", value: cidr } });
  },
};

/** `source.namespace` / namespaces: the `/ns/<namespace>/` segment of the peer identity; `*` spans any text. */
export const sourceNamespace: PrincipalGenerator = {
  each(_key, value, ctx) {
    const namespace = value.split("*").map(quoteMeta).join(".*");
    return peerIdentity(regexMatcher(`.*/ns/${namespace}/.*`), ctx);
  },
};

/** `source.serviceAccount` / serviceAccounts: `<ns>/<sa>`, or `<sa>` in the policy's namespace. */
export function sourceServiceAccount(policyNamespace: string): PrincipalGenerator {
  return {
    each(_key, value, ctx) {
      const slash = value.indexOf("/");
      const namespace = slash < 0 ? policyNamespace : value.slice(0, slash);
      const account = slash < 0 ? value : value.slice(slash + 1);
      // Other path segments may sit between ns and sa, or follow sa after a `/`.
      const regex = `spiffe://.+/ns/${quoteMeta(namespace)}/(.+/|)sa/${quoteMeta(account)}(/.+)?`;
      return peerIdentity(regexMatcher(regex), ctx);
    },
  };
}

/** `source.trustDomain` / trustDomains: the trust domain of the peer identity; one `*` spans a label part. */
export const sourceTrustDomain: PrincipalGenerator = {
  each(_key, value, ctx) {
    if (value === "*") return peerIdentity(prefixMatcher(SPIFFE_PREFIX), ctx);
    if (!value.includes("*")) return peerIdentity(prefixMatcher(`${SPIFFE_PREFIX}${value}/`), ctx);
    const star = value.indexOf("*");
    const domain = `${quoteMeta(value.slice(0, star))}[^/]*${quoteMeta(value.slice(star + 1))}`;
    return peerIdentity(regexMatcher(`${SPIFFE_PREFIX}${domain}/.*`), ctx);
  },
};

/** `source.principal` / principals: the peer identity without its `spiffe://` scheme. */
export const sourcePrincipal: PrincipalGenerator = {
  each(_key, value, ctx) {
    return peerIdentity(stringMatcher(value, SPIFFE_PREFIX), ctx);
  },
};

const ANY_NON_EMPTY = ".+";

/**
 * `request.auth.principal` / requestPrincipals: `<iss>/<sub>` of the verified JWT (split at the last
 * `/`, since issuers are URLs), matched against the `iss` and `sub` claims.
 */
export const requestPrincipal: PrincipalGenerator = {
  all(key, values, ctx) {
    if (ctx.forTcp) return httpOnly(key);
    const ids = values.map((value) => {
      const [issuer, subject] = requestPrincipalMatchers(value);
      return principalAnd([
        metadata(jwtClaimStringMatcher("iss", issuer)),
        metadata(jwtClaimStringMatcher("sub", subject)),
      ]);
    });
    return ids.length === 1 ? ids[0] : principalOr(ids);
  },
};

function requestPrincipalMatchers(value: string): [matcher.StringMatcher, matcher.StringMatcher] {
  const slash = value.lastIndexOf("/");
  const hasSubject = slash >= 0;
  const issuer = hasSubject ? value.slice(0, slash) : value;
  const subject = hasSubject ? value.slice(slash + 1) : "";
  if (value === "*") return [regexMatcher(ANY_NON_EMPTY), regexMatcher(ANY_NON_EMPTY)];
  if (value.startsWith("*")) {
    if (!hasSubject) return [regexMatcher(ANY_NON_EMPTY), suffixMatcher(value.slice(1))];
    const iss = issuer === "*" ? regexMatcher(ANY_NON_EMPTY) : suffixMatcher(issuer.slice(1));
    return [iss, exactMatcher(subject)];
  }
  if (value.endsWith("*")) {
    if (!hasSubject) return [prefixMatcher(value.slice(0, -1)), regexMatcher(ANY_NON_EMPTY)];
    const sub = subject === "*" ? regexMatcher(ANY_NON_EMPTY) : prefixMatcher(subject.slice(0, -1));
    return [exactMatcher(issuer), sub];
  }
  return [exactMatcher(issuer), exactMatcher(subject)];
}

/** A JWT claim (string or list of strings) holding one of the values. */
function claimGenerator(claims: (key: string) => readonly string[] | NotGenerated): PrincipalGenerator {
  return {
    all(key, values, ctx) {
      if (ctx.forTcp) return httpOnly(key);
      const path = claims(key);
      if (path instanceof NotGenerated) return path;
      return metadata(jwtClaimListMatcher(path, stringOrMatcher(values)));
    },
  };
}

/** `request.auth.audiences`: the `aud` claim. */
export const requestAudiences = claimGenerator(() => ["aud"]);

/** `request.auth.presenter`: the `azp` claim. */
export const requestPresenter = claimGenerator(() => ["azp"]);

/** `request.auth.claims[a][b]...`: a (nested) claim. */
export const requestClaims = claimGenerator((key) => nestedBracketNames(key.slice("request.auth.claims".length)));

/** `request.headers[<name>]`: a request header. */
export const requestHeader: PrincipalGenerator = {
  each(key, value, ctx) {
    if (ctx.forTcp) return httpOnly(key);
    const name = bracketName(key.slice("request.headers".length));
    if (name instanceof NotGenerated) return name;
    return header(headerMatcher(name, value));
  },
};

/** `[name]` → name. */
function bracketName(s: string): string | NotGenerated {
  if (!s.startsWith("[") || !s.endsWith("]")) return new NotGenerated(`expecting format [<NAME>], but found ${s}`);
  return s.slice(1, -1);
}

/** `[a][b][c]` → a, b, c; text that is not a run of brackets is read as one `[name]`. */
function nestedBracketNames(s: string): string[] | NotGenerated {
  const names: string[] = [];
  let begin = 0;
  while (begin < s.length) {
    const end = s[begin] === "[" ? closingBracket(s, begin) : -1;
    if (end < 0) {
      const name = bracketName(s);
      return name instanceof NotGenerated ? name : [name];
    }
    names.push(s.slice(begin + 1, end));
    begin = end + 1;
  }
  return names;
}

function closingBracket(s: string, open: number): number {
  for (let i = open + 1; i < s.length; i++) {
    if (s[i] === "[") return -1;
    if (s[i] === "]") return i;
  }
  return -1;
}
