// RBAC permissions: what the request asks for. Each `to.operation` field and each `when` key about
// the destination has a generator here (Istio's authz model generators).
import { create } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { type matcher, packAny, rbac, type route, uriTemplate } from "../../api/index.ts";
import { cidrRange } from "./cidr.ts";
import { httpOnly, NotGenerated, type PermissionGenerator } from "./generator.ts";
import {
  headerMatcher,
  hostMatcher,
  listOneOfMatcher,
  metadataMatcher,
  orMatcher,
  pathMatcher,
  stringMatcher,
  valueStringMatcher,
} from "./matchers.ts";

type Permission = rbac.Permission;

export const HOST_HEADER = ":authority";
export const METHOD_HEADER = ":method";
const MATCH_ONE_TEMPLATE = "{*}";
const MATCH_ANY_TEMPLATE = "{**}";

export function permissionAny(): Permission {
  return create(rbac.PermissionSchema, { rule: { case: "any", value: true } });
}

export function permissionAnd(rules: Permission[]): Permission {
  return create(rbac.PermissionSchema, { rule: { case: "andRules", value: { rules } } });
}

export function permissionOr(rules: Permission[]): Permission {
  return create(rbac.PermissionSchema, { rule: { case: "orRules", value: { rules } } });
}

export function permissionNot(rule: Permission): Permission {
  return create(rbac.PermissionSchema, { rule: { case: "notRule", value: rule } });
}

function header(m: route.HeaderMatcher): Permission {
  return create(rbac.PermissionSchema, { rule: { case: "header", value: m } });
}

function metadata(m: matcher.MetadataMatcher): Permission {
  return create(rbac.PermissionSchema, { rule: { case: "metadata", value: m } });
}

/** `destination.ip`: the local address the connection came in on. */
export const destinationIp: PermissionGenerator = {
  each(_key, value) {
    const cidr = cidrRange(value);
    if ("error" in cidr) return new NotGenerated(cidr.error);
    return create(rbac.PermissionSchema, { rule: { case: "destinationIp", value: cidr } });
  },
};

/** `destination.port` / ports: a decimal port number up to 65535. */
export const destinationPort: PermissionGenerator = {
  each(_key, value) {
    const port = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
    if (!(port <= 65535)) return new NotGenerated(`invalid port ${value}`);
    return create(rbac.PermissionSchema, { rule: { case: "destinationPort", value: port } });
  },
};

/** `connection.sni`: the TLS server name. */
export const connectionSni: PermissionGenerator = {
  each(_key, value) {
    return create(rbac.PermissionSchema, { rule: { case: "requestedServerName", value: stringMatcher(value) } });
  },
};

/**
 * `experimental.envoy.filters.<filter>[<key>]`: a value of that filter's dynamic metadata. A value
 * written `[v]` matches a list holding `v`.
 */
export const envoyFilterMetadata: PermissionGenerator = {
  all(key, values) {
    const parts = key.slice("experimental.".length).replace(/\]$/, "").split("[");
    if (parts.length < 2) return new NotGenerated(`invalid key: ${key}`);
    const [filter, ...rest] = parts;
    const matchers = values.map((value) => {
      if (!(value.startsWith("[") && value.endsWith("]"))) return valueStringMatcher(stringMatcher(value));
      return listOneOfMatcher(valueStringMatcher(stringMatcher(value.replace(/^[[\]]+|[[\]]+$/g, ""))));
    });
    return metadata(metadataMatcher(filter, [rest.join("[")], orMatcher(matchers)));
  },
};

/** hosts: the `:authority` header, compared without case. */
export const host: PermissionGenerator = {
  each(key, value, ctx) {
    if (ctx.forTcp) return httpOnly(key);
    return header(hostMatcher(HOST_HEADER, value));
  },
};

/** methods: the `:method` header. */
export const method: PermissionGenerator = {
  each(key, value, ctx) {
    if (ctx.forTcp) return httpOnly(key);
    return header(headerMatcher(METHOD_HEADER, value));
  },
};

/** paths: the URL path; a path with `{*}` or `{**}` segments becomes an Envoy URI template. */
export const path: PermissionGenerator = {
  each(key, value, ctx) {
    if (ctx.forTcp) return httpOnly(key);
    if (value.includes(MATCH_ONE_TEMPLATE) || value.includes(MATCH_ANY_TEMPLATE)) {
      const template = value.replaceAll(MATCH_ANY_TEMPLATE, "**").replaceAll(MATCH_ONE_TEMPLATE, "*");
      return create(rbac.PermissionSchema, {
        rule: { case: "uriTemplate", value: { name: "uri-template", typedConfig: uriTemplateConfig(template) } },
      });
    }
    return create(rbac.PermissionSchema, { rule: { case: "urlPath", value: pathMatcher(value) } });
  },
};

function uriTemplateConfig(pathTemplate: string): Any {
  const config = create(uriTemplate.UriTemplateMatchConfigSchema, { pathTemplate });
  return packAny(uriTemplate.UriTemplateMatchConfigSchema, config);
}
